"""`AgentsTarget`: assistants become saved agents (``POST /agents``), threads sessions.

A session's ``input`` takes user messages only, so each assistant message is carried as a
user message that quotes it (``Assistant (earlier): ...``), and image files (the input takes
image URLs) are dropped. Creating a session with input starts a turn: the agent answers the
migrated history once (the report notes it). Sessions carry ``metadata.source_thread_id``,
so a session created by an interrupted run is found again (``GET /agents/sessions``
filters by metadata); saved agents carry ``source_assistant_id`` and ``migration_key``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from toolbridge import get_dialect
from toolbridge.migration import AgentPlan, Fate, FateKind, ThreadPlan
from toolbridge.migration.targets import config_hash, message_fates, setting_fates, thread_metadata

from .client import AgentsClient

__all__ = ["ASSISTANT_PREFIX", "TOOL_CALL_PREFIX", "AgentsTarget"]

ASSISTANT_PREFIX = "Assistant (earlier): "
"""How an assistant message of the source thread starts in the session's input."""
TOOL_CALL_PREFIX = "Tool call (earlier): "
"""How a function call of the source thread's run steps starts in the session's input
(``Tool call (earlier): name(arguments) -> output``)."""
EMPTY_THREAD = "(This conversation was migrated from an Assistants thread with no messages.)"
_FILE_SEARCH = ("the Agents API has no file search tool; give the agent a function that calls "
                "POST /vector_stores/{id}/search")
_CODE = ("the Agents API has no code interpreter tool; a session environment of type "
         "openai_hosted can run commands on its files")


class AgentsTarget:
    """Writes through an `AgentsClient` (constructed from ``options`` unless ``client``)."""

    name = "openai-agents"
    lists_threads = True
    chunk = 100

    def __init__(self, client: AgentsClient | None = None, **options: Any) -> None:
        self.client = client or AgentsClient(**options)
        self._owns = client is None

    # ------------------------------------------------------------------ planning
    def plan_agent(self, assistant: Mapping[str, Any], model: str) -> AgentPlan:
        aid = str(assistant["id"])
        imported = get_dialect("openai-assistants").import_tools(assistant.get("tools") or [])
        rendered = get_dialect("openai-agents").render_tools(imported.definitions)
        fates = []
        for d in imported.definitions:
            changes = [str(loss) for loss in rendered.losses.get(d.name, [])]
            if d.strict:
                changes.insert(0, "strict dropped: Agents function tools have no strict flag "
                               "(arguments are no longer held to the schema)")
            fates.append(Fate("tool", f"{aid}.tools.{d.name}",
                              "approximated" if changes else "carried", "; ".join(changes)))
        for skipped in imported.skipped:
            fates.append(Fate("tool", f"{aid}.tools.{skipped.kind or skipped.index}", "dropped",
                              _FILE_SEARCH if skipped.kind == "file_search" else _CODE
                              if skipped.kind == "code_interpreter" else skipped.reason))
        body: dict[str, Any] = {"model": model, "name": assistant.get("name") or aid,
                                "tools": rendered.definitions}
        carried = {"name": "", "metadata": ""}
        if assistant.get("instructions"):
            body["instructions"] = assistant["instructions"]
            carried["instructions"] = ("appended to the Agents API's default base "
                                       "instructions (not the whole system prompt)")
        metadata = {str(k): str(v) for k, v in (assistant.get("metadata") or {}).items()}
        if assistant.get("description"):
            metadata["description"] = str(assistant["description"])[:512]
            carried["description"] = "kept as metadata.description (no description field)"
        effort = assistant.get("reasoning_effort")
        if effort:
            body["reasoning"] = {"effort": effort}
            carried["reasoning_effort"] = "as reasoning.effort"
        text_format = _text_format(assistant.get("response_format"))
        if text_format is not None:
            body["text"] = {"format": text_format}
            carried["response_format"] = "json_schema as text.format (without name and strict)"
        dropped = {"temperature": "the Agents API has no sampling settings",
                   "top_p": "the Agents API has no sampling settings",
                   "response_format": "json_object has no equivalent in the Agents API",
                   "tool_resources": "no file search or code interpreter tool to hold them"}
        fates = setting_fates(assistant, carried, dropped) + fates
        key = config_hash(body | {"metadata": metadata})
        marks = {"source_assistant_id": aid, "migration_key": key}
        room = 16 - len(marks)
        if len(metadata) > room:
            fates.append(Fate("setting", f"{aid}.metadata", "approximated",
                              f"{len(metadata) - room} pair(s) dropped: 16 at most, "
                              f"{len(marks)} used by the migration"))
        body["metadata"] = dict(list(metadata.items())[:room]) | marks
        return AgentPlan(aid, str(body["name"]), body, fates, key)

    def plan_thread(self, thread: Mapping[str, Any], messages: Sequence[Mapping[str, Any]],
                    agent: AgentPlan | None) -> ThreadPlan:
        tid = str(thread["id"])
        fates: list[Fate] = []
        items: list[dict[str, Any]] = []
        expected: list[tuple[str, str]] = []
        for message in messages:
            if message.get("object") == "thread.run.step":
                for text in _step_texts(message, tid, fates):
                    items.append({"role": "user", "content": [{"type": "input_text",
                                                               "text": text}]})
                    expected.append(("user", text))
                continue
            where = f"{tid}.{message.get('id')}"
            parts, text = _parts(message, where, fates)
            fate: FateKind = "carried"
            how = "in the session's first input"
            if message.get("role") == "assistant":
                text = ASSISTANT_PREFIX + text
                parts = [{"type": "input_text", "text": text}] + [
                    p for p in parts if p["type"] != "input_text"]
                fate, how = "approximated", ("an assistant message, carried as a user message "
                                             "quoting it (session input takes user messages "
                                             "only)")
            if not parts:
                fates.append(Fate("message", where, "dropped", "nothing the input can hold"))
                continue
            fates += message_fates(tid, message, how, fate)
            items.append({"role": "user", "content": parts})
            expected.append(("user", text))
        if not items:
            items = [{"role": "user", "content": [{"type": "input_text", "text": EMPTY_THREAD}]}]
            expected = [("user", EMPTY_THREAD)]
            fates.append(Fate("thread", tid, "approximated",
                              "no messages: the session starts with a note (input required)"))
        else:
            fates.append(Fate("thread", tid, "carried",
                              f"a session whose first input holds the {len(items)} message(s); "
                              "the agent answers it once on creation"))
        for kind, resource in (thread.get("tool_resources") or {}).items():
            if resource:
                fates.append(Fate("tool_resource", f"{tid}.tool_resources.{kind}", "dropped",
                                  f"{_FILE_SEARCH if kind == 'file_search' else _CODE} "
                                  f"(held {json.dumps(resource, sort_keys=True)})"))
        metadata = thread_metadata(thread, agent.source_id if agent else None, fates)
        return ThreadPlan(tid, agent.source_id if agent else None, metadata, items, [],
                          expected, fates)

    # ------------------------------------------------------------------ writing
    def find_agent(self, plan: AgentPlan) -> str | None:
        after = None
        while True:
            page = self.client.list_agents(after=after, limit=100)
            for agent in page.get("data", []):
                meta = agent.get("metadata") or {}
                if meta.get("source_assistant_id") == plan.source_id and meta.get(
                        "migration_key") == plan.key:
                    return str(agent["id"])
            data = page.get("data") or []
            if not page.get("has_more") or not data:
                return None
            after = data[-1]["id"]

    def create_agent(self, plan: AgentPlan) -> str:
        return str(self.client.create_agent(**plan.body)["id"])

    def held_agent(self, plan: AgentPlan, target_id: str) -> Mapping[str, Any]:
        """The saved agent as the API returns it (what the sessions run)."""
        return self.client.retrieve_agent(target_id)

    def find_thread(self, plan: ThreadPlan) -> str | None:
        page = self.client.list_sessions(metadata={"source_thread_id": plan.source_id},
                                         limit=1)
        data = page.get("data") or []
        return str(data[0]["id"]) if data else None

    def create_thread(self, plan: ThreadPlan, agent_id: str | None) -> str:
        session = self.client.create_session(input=plan.create_items, agent_id=agent_id,
                                             metadata=plan.metadata)
        return str(session["id"])

    def append(self, target_id: str, items: Sequence[Mapping[str, Any]]) -> None:
        """Further user messages (a new turn; plans put the whole history in the create)."""
        self.client.send_message(target_id, list(items))

    def held(self, target_id: str) -> list[tuple[str, str]]:
        held: list[tuple[str, str]] = []
        after = None
        while True:
            page = self.client.list_items(target_id, after=after, limit=100, order="asc")
            data = page.get("data") or []
            for item in data:
                if item.get("type") == "message":
                    held.append((str(item.get("role")), _item_text(item)))
            if not page.get("has_more") or not data:
                return held
            after = data[-1]["id"]

    def missing_models(self, models: Sequence[str]) -> list[str]:
        """None: the Agents API has no model listing to check against (a wrong model fails
        the session's first turn, which the report shows)."""
        return []

    def discard(self, target_id: str, threads: Collection[str]) -> tuple[str, str]:
        return "", ("sessions are found again by metadata.source_thread_id, so none is "
                    "left behind as a possible orphan")

    def close(self) -> None:
        if self._owns:
            self.client.close()


def _step_texts(step: Mapping[str, Any], tid: str, fates: list[Fate]) -> list[str]:
    """A completed ``tool_calls`` run step's function calls as quoting user messages (the
    session input holds no tool items); its other calls dropped, each with its fate."""
    if step.get("type") != "tool_calls":
        return []
    where = f"{tid}.{step.get('run_id')}.{step.get('id')}"
    texts = []
    for i, call in enumerate((step.get("step_details") or {}).get("tool_calls") or []):
        kind = call.get("type") if isinstance(call, Mapping) else None
        subject = f"{where}.tool_calls[{i}]"
        function = (call.get("function") or {}) if kind == "function" else {}
        if kind != "function":
            fates.append(Fate("tool_call", subject, "dropped",
                              f"the {kind} call: the Agents API has no such tool (its answer "
                              "stays in the next assistant message)"))
        elif step.get("status") != "completed" or function.get("output") is None:
            fates.append(Fate("tool_call", subject, "dropped",
                              f"the step is {step.get('status')}: the call has no output"))
        else:
            texts.append(f"{TOOL_CALL_PREFIX}{function.get('name')}("
                         f"{function.get('arguments') or '{}'}) -> {function['output']}")
            fates.append(Fate("tool_call", subject, "approximated",
                              f"{function.get('name')}: carried as a user message quoting the "
                              "call and its output (session input takes user messages only)"))
    return texts


def _text_format(response_format: Any) -> dict[str, Any] | None:
    if isinstance(response_format, Mapping) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema") or {}
        return {"type": "json_schema", "schema": schema}
    return None


def _parts(message: Mapping[str, Any], where: str, fates: list[Fate]
           ) -> tuple[list[dict[str, Any]], str]:
    parts: list[dict[str, Any]] = []
    texts: list[str] = []
    for i, part in enumerate(message.get("content") or []):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            value = part["text"].get("value", "") if isinstance(part.get("text"), Mapping) \
                else str(part.get("text", ""))
            texts.append(value)
            if isinstance(part.get("text"), Mapping) and part["text"].get("annotations"):
                fates.append(Fate("message", f"{where}.content[{i}].annotations", "dropped",
                                  "session input has no annotations (the cited text stays)"))
        elif kind == "refusal":
            texts.append(str(part.get("refusal", "")))
        elif kind == "image_url":
            url = (part.get("image_url") or {}).get("url")
            parts.append({"type": "input_image", "image_url": url})
        else:
            fates.append(Fate("message", f"{where}.content[{i}]", "dropped",
                              f"{kind}: session input takes image URLs, not file ids"
                              if kind == "image_file" else f"{kind}: no equivalent"))
    if message.get("attachments"):
        fates.append(Fate("message", f"{where}.attachments", "dropped",
                          "session input has no attachments"))
    text = "".join(texts)
    if text:
        parts.insert(0, {"type": "input_text", "text": text})
    return parts, text


def _item_text(item: Mapping[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in content or []
                   if isinstance(p, Mapping) and p.get("type") in ("input_text", "output_text"))
