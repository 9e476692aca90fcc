"""A source workload made on the Assistants emulator, and the handlers of its function tool."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from azure.core.credentials import AccessToken, AccessTokenInfo

import toolbridge

CUSTOMER_TOOL = {"type": "function", "function": {
    "name": "get_customer", "description": "Look up a customer by ID.",
    "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}},
                   "required": ["customer_id"], "additionalProperties": False},
    "strict": True}}
ASSISTANT = {
    "model": "gpt-4o", "name": "Support desk", "description": "Answers customers",
    "instructions": "Be brief.", "temperature": 0.3, "top_p": 0.9,
    "metadata": {"team": "support"},
    "response_format": {"type": "json_schema", "json_schema": {
        "name": "answer", "schema": {"type": "object"}, "strict": True}},
    "tool_resources": {"file_search": {"vector_store_ids": ["vs_1"]},
                       "code_interpreter": {"file_ids": ["file_1"]}},
    "tools": [CUSTOMER_TOOL, {"type": "code_interpreter"}, {"type": "file_search"}],
}


def toolbox() -> toolbridge.Toolbox:
    """The application's toolbox: the assistant's function with its handler."""
    from toolbridge_openai_assistants import tools_from_assistant

    box = toolbridge.Toolbox()
    handlers = {"get_customer": lambda customer_id: {"id": customer_id, "name": "Ada"}}
    box.add_all([(t, handlers[t.name]) for t in tools_from_assistant({"tools": [CUSTOMER_TOOL]})])
    return box


def history(thread: int, length: int) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 == 0 else "assistant",
             "content": f"thread {thread} message {i}"} for i in range(length)]


def make_source(base_url: str, *, threads: int = 3, length: int = 4) -> dict[str, Any]:
    """An assistant and ``threads`` threads of ``length`` messages on the emulator; returns
    their ids."""
    from toolbridge_openai_assistants import AssistantsClient

    with AssistantsClient(base_url=base_url + "/v1", api_key="sk-test") as client:
        assistant = client.create_assistant(**ASSISTANT)
        ids = [client.create_thread(messages=history(i, length),
                                    metadata={"assistant_id": assistant["id"]})["id"]
               for i in range(threads)]
    return {"assistant": assistant["id"], "threads": ids}


def export_jsonl(base_url: str, ids: dict[str, Any], path: Path) -> Path:
    """What a team exported before the shutdown: one API object per line."""
    from toolbridge_openai_assistants import AssistantsClient, read_workload

    with AssistantsClient(base_url=base_url + "/v1", api_key="sk-test") as client:
        workload = read_workload(client, thread_ids=ids["threads"])
    lines = [*workload.assistants, *workload.threads,
             *(m for t in workload.threads for m in workload.thread_messages(t["id"]))]
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    return path


class Credential:
    """A fixed Entra `TokenCredential`, recording the scopes asked for."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **options: Any) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken("entra-token", int(time.time()) + 3600)

    def get_token_info(self, *scopes: str, options: Any = None) -> AccessTokenInfo:
        self.scopes.append(scopes)
        return AccessTokenInfo("entra-token", int(time.time()) + 3600)


TOOL_SCRIPT = {"turns": [{"rounds": [[{"name": "get_customer",
                                       "arguments": {"customer_id": "7"}}]],
                          "reply": "Customer 7 is Ada."}]}
"""The source's model: one call of the function, then a reply."""


def make_runs(client: Any, assistant_id: str) -> dict[str, Any]:
    """Two threads run on the Assistants emulator (with `TOOL_SCRIPT`): one whose run called
    the function and completed, one whose run still waits for the output."""
    done = client.create_thread(messages=[{"role": "user", "content": "Who is customer 7?"}])
    run = client.poll_run(done["id"], client.create_run(done["id"], assistant_id)["id"])
    [call] = run["required_action"]["submit_tool_outputs"]["tool_calls"]
    client.submit_tool_outputs(done["id"], run["id"], {"tool_outputs": [
        {"tool_call_id": call["id"], "output": '{"id": "7", "name": "Ada"}'}]})
    assert client.poll_run(done["id"], run["id"])["status"] == "completed"
    live = client.create_thread(messages=[{"role": "user", "content": "Who is customer 7?"}])
    waiting = client.poll_run(live["id"], client.create_run(live["id"], assistant_id)["id"])
    assert waiting["status"] == "requires_action"
    return {"done": done["id"], "call": call["id"], "live": live["id"],
            "live_run": waiting["id"]}
