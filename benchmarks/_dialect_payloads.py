"""8-call payloads of every dialect for `bench_handle.py`, each with its SDK's own parse.

Every payload asks the same 8 calls of the same 8 tools (`bench_handle.ARGUMENTS`), in the
form its backend sends them; the baseline parses that same payload with the vendor's SDK
type, the way a client of that SDK gets it:

- openai-agents: a session (`AgentSession.model_validate`), its agent carrying the tools;
- openai-assistants: a run in ``requires_action`` (`Run.model_validate`), carrying the tools;
- google-ces: a ``runSession`` response as JSON text (`RunSessionResponse.from_json`, the
  proto-plus parse; toolbridge gets the same text);
- openai-responses: a response with 8 ``function_call`` items (`Response.model_validate`),
  carrying the tools;
- openai-chat: a completion whose message has 8 ``tool_calls``
  (`ChatCompletion.model_validate`); without ``conversation=...`` nothing is stored;
- gemini: a ``GenerateContentResponse`` whose model content has 8 ``functionCall`` parts,
  the first with its ``thoughtSignature`` (`GenerateContentResponse.model_validate`, the
  google-genai parse); without ``conversation=...`` nothing is stored;
- anthropic-messages: a ``Message`` whose content has 8 ``tool_use`` blocks after a text
  block (`Message.model_validate`); without ``conversation=...`` nothing is stored;
- anthropic-sessions: a page of session events (``events.list``): the user's message, the
  session running, 8 ``agent.custom_tool_use`` events and the idle event naming them (the
  page's ``data`` through `BetaManagedAgentsSessionEvent`, the events' union);
- gemini-interactions: an ``Interaction`` in ``requires_action`` with a thought step and 8
  ``function_call`` steps (`Interaction.model_validate`).

The strict dialects (Assistants, Responses, Chat render the tools with ``strict: true``) send
``null`` for an optional parameter the model leaves out, as a strict model does.
"""

from __future__ import annotations

import copy
import json
import statistics
from collections.abc import Callable
from typing import Any

from _common import ROOT

import toolbridge

CES_SESSION = "projects/bench/locations/us/apps/bench/sessions/s1"


def _sample(adapter: str, name: str) -> dict[str, Any]:
    """A sample of ``protocols/samples`` (kept in the adapter's tests)."""
    path = ROOT / "tests" / "adapters" / adapter / "payloads" / name
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def _strict_arguments(tools: list[dict[str, Any]], arguments: list[tuple[str, dict[str, Any]]]
                      ) -> list[tuple[str, dict[str, Any]]]:
    """``arguments`` with ``null`` for every property the strict schema lists and they omit."""
    properties = {}
    for tool in tools:
        function = tool.get("function", tool)
        properties[function["name"]] = list(function["parameters"].get("properties", {}))
    return [(name, {**{key: None for key in properties[name]}, **args})
            for name, args in arguments]


class Dialects:
    """Payload builders and SDK parses, one per dialect, for the toolbox's tools."""

    def __init__(self, box: toolbridge.Toolbox, arguments: list[tuple[str, dict[str, Any]]]
                 ) -> None:
        from anthropic.types import Message
        from anthropic.types.beta.sessions.beta_managed_agents_session_event import (
            BetaManagedAgentsSessionEvent,
        )
        from google.cloud import ces_v1
        from google.genai.interactions import Interaction
        from google.genai.types import GenerateContentResponse
        from openai.types.beta.threads.run import Run
        from openai.types.chat.chat_completion import ChatCompletion
        from openai.types.responses.response import Response
        from pydantic import TypeAdapter

        events = TypeAdapter(list[BetaManagedAgentsSessionEvent])
        self.arguments = arguments
        self.tools = {name: box.definitions(name) for name in (
            "openai-assistants", "openai-responses", "openai-chat")}
        self.strict = {name: _strict_arguments(tools, arguments)
                       for name, tools in self.tools.items()}
        self.run = _sample("openai_assistants",
                           "openai-assistants-runs.run.requires-action.response.json")
        self.response = _sample("openai_responses", "openai-responses.response.function-calls.json")
        self.completion = _sample("openai_chat", "openai-chat.completion.tool-calls.response.json")
        self.ces = toolbridge.get_dialect("google-ces").bind(CES_SESSION)  # type: ignore[attr-defined]
        self.parses: dict[str, Callable[[Any], Any]] = {
            "openai-assistants": Run.model_validate,
            "google-ces": ces_v1.RunSessionResponse.from_json,
            "openai-responses": Response.model_validate,
            "openai-chat": ChatCompletion.model_validate,
            "gemini": GenerateContentResponse.model_validate,
            "anthropic-messages": Message.model_validate,
            "anthropic-sessions": lambda page: events.validate_python(page["data"]),
            "gemini-interactions": Interaction.model_validate,
        }
        self.sdk_names = {
            "openai-assistants": "Run.model_validate",
            "google-ces": "RunSessionResponse.from_json",
            "openai-responses": "Response.model_validate",
            "openai-chat": "ChatCompletion.model_validate",
            "gemini": "GenerateContentResponse.model_validate",
            "anthropic-messages": "Message.model_validate",
            "anthropic-sessions": "list[SessionEvent] (TypeAdapter)",
            "gemini-interactions": "Interaction.model_validate",
        }

    def payload(self, dialect: str, tag: str) -> Any:
        """A fresh payload of ``dialect`` (new ids, so its calls are new to the store)."""
        return getattr(self, "_" + dialect.replace("-", "_"))(tag)

    def target(self, dialect: str) -> Any:
        """What ``handle`` is given as the dialect (CES: bound to a session)."""
        return self.ces if dialect == "google-ces" else dialect

    def _openai_assistants(self, tag: str) -> dict[str, Any]:
        calls = [{"id": f"call_{tag}_{i}", "type": "function", "function": {
            "name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(self.strict["openai-assistants"])]
        return {**self.run, "id": f"run_{tag}", "thread_id": f"thread_{tag}",
                "tools": copy.deepcopy(self.tools["openai-assistants"]),
                "required_action": {"type": "submit_tool_outputs",
                                    "submit_tool_outputs": {"tool_calls": calls}}}

    def _google_ces(self, tag: str) -> str:
        calls = [{"id": f"toolcall-{tag}-{i}",
                  "tool": f"projects/bench/locations/us/apps/bench/tools/{name}",
                  "displayName": name, "args": copy.deepcopy(args)}
                 for i, (name, args) in enumerate(self.arguments)]
        return json.dumps({"outputs": [{"toolCalls": {"toolCalls": calls}, "turnIndex": 1,
                                        "turnCompleted": True}]})

    def _openai_responses(self, tag: str) -> dict[str, Any]:
        items = [{"type": "function_call", "id": f"fc_{tag}_{i}", "call_id": f"call_{tag}_{i}",
                  "name": name, "arguments": json.dumps(args), "status": "completed"}
                 for i, (name, args) in enumerate(self.strict["openai-responses"])]
        return {**self.response, "id": f"resp_{tag}", "output": items,
                "tools": copy.deepcopy(self.tools["openai-responses"])}

    def _openai_chat(self, tag: str) -> dict[str, Any]:
        calls = [{"id": f"call_{tag}_{i}", "type": "function", "function": {
            "name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(self.strict["openai-chat"])]
        choice = copy.deepcopy(self.completion["choices"][0])
        choice["message"]["tool_calls"] = calls
        return {**self.completion, "id": f"chatcmpl-{tag}", "choices": [choice]}

    def _gemini(self, tag: str) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [
            {"functionCall": {"id": f"{tag}-{i}", "name": name, "args": copy.deepcopy(args)}}
            for i, (name, args) in enumerate(self.arguments)]
        parts[0]["thoughtSignature"] = "CvSdOrCYUtZM0wBvkXhHjnYP61ZjIrqm7Fg9pzZugHoKIgE="
        return {"candidates": [{"content": {"role": "model", "parts": parts},
                                "finishReason": "STOP", "index": 0}],
                "modelVersion": "gemini-2.5-flash", "responseId": f"resp-{tag}"}

    def _anthropic_messages(self, tag: str) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": "Let me look that up."}]
        blocks.extend({"type": "tool_use", "id": f"toolu_{tag}_{i}", "name": name,
                       "input": copy.deepcopy(args)}
                      for i, (name, args) in enumerate(self.arguments))
        return {"id": f"msg_{tag}", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": blocks, "stop_reason": "tool_use",
                "stop_sequence": None, "usage": {"input_tokens": 512, "output_tokens": 96}}

    def _anthropic_sessions(self, tag: str) -> dict[str, Any]:
        stamp = "2026-12-02T02:48:23.606643Z"
        uses = [{"id": f"sevt_{tag}_{i}", "type": "agent.custom_tool_use", "processed_at": stamp,
                 "name": name, "input": copy.deepcopy(args)}
                for i, (name, args) in enumerate(self.arguments)]
        return {"session_id": f"sesn_{tag}", "next_page": None, "data": [
            {"id": f"sevt_{tag}_m", "type": "user.message", "processed_at": stamp,
             "content": [{"type": "text", "text": "Sort out my order, please."}]},
            {"id": f"sevt_{tag}_r", "type": "session.status_running", "processed_at": stamp},
            *uses,
            {"id": f"sevt_{tag}_i", "type": "session.status_idle", "processed_at": stamp,
             "stop_reason": {"type": "requires_action",
                             "event_ids": [use["id"] for use in uses]},
             "stop_details": None}]}

    def _gemini_interactions(self, tag: str) -> dict[str, Any]:
        steps: list[dict[str, Any]] = [{"type": "thought", "signature": "Cq4BAdHtim8K"}]
        steps.extend({"type": "function_call", "id": f"{tag}-{i}", "name": name,
                      "arguments": copy.deepcopy(args)}
                     for i, (name, args) in enumerate(self.arguments))
        return {"id": f"v1_{tag}", "status": "requires_action",
                "model": "gemini-3-flash-preview", "created": "2026-11-30T10:15:02Z",
                "updated": "2026-11-30T10:15:03Z", "steps": steps,
                "usage": {"total_input_tokens": 112, "total_output_tokens": 41,
                          "total_tokens": 153}}


def paired(each: dict[str, list[float]], name: str, *against: str) -> float:
    """The median over the rounds of ``name``'s figure over the sum of ``against``'s in the
    same round."""
    return statistics.median(
        x / sum(parts) for x, *parts in zip(each[name], *(each[a] for a in against),
                                             strict=True))


def print_dialects(dialects: Dialects | None, each: dict[str, list[float]]) -> None:
    """Each dialect against its SDK and against the Agents dialect's ``handle``, both the
    median of the paired rounds (issue 26's target: <= 1.3x of Agents)."""
    if dialects is None:
        return
    print("every dialect, default configuration (Toolbox(), sync tools), handle of 8 calls, "
          "against its SDK parsing the same payload and against the Agents dialect's handle "
          "(medians of the paired rounds; target <= 1.3x of Agents):")
    print(f"  {'openai-agents':20s} {statistics.median(each['default']) * 1e6:8.1f} us  vs "
          f"{'AgentSession.model_validate':38s} "
          f"{statistics.median(each['baseline']) * 1e6:8.1f} us  "
          f"{paired(each, 'default', 'baseline'):5.2f}x")
    for name, sdk in dialects.sdk_names.items():
        print(f"  {name:20s} {statistics.median(each[name]) * 1e6:8.1f} us  vs {sdk:38s} "
              f"{statistics.median(each[name + ' sdk']) * 1e6:8.1f} us  "
              f"{paired(each, name, name + ' sdk'):5.2f}x  {paired(each, name, 'default'):5.2f}x"
              " agents")
