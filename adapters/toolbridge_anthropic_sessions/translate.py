"""Pure translations between the neutral model and Managed Agents session events (no I/O).

A payload is what the service lists: a page of session events (``{"data": [...]}``, as
``GET /v1/sessions/{id}/events`` answers; toolbridge's backend adds ``session_id``), or one
``agent.custom_tool_use`` event. The calls pending in it are the events the last
``session.status_idle`` with ``stop_reason.type == "requires_action"`` names, minus those
answered after it; without such an idle event, every ``agent.custom_tool_use`` not answered
later (the client may answer one as soon as it arrives).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import (
    Content,
    ToolDefinition,
    ToolResult,
    WireFormatError,
)
from toolbridge.plugin import (
    CallRecord,
    PendingCalls,
    PendingRecords,
    RenderedTools,
    read_arguments,
    reading,
)
from toolbridge.runtime import output_text

from .wire import CALL_EVENTS, CONFIRMATION, CUSTOM_TOOL_RESULT, CUSTOM_TOOL_USE, DIALECT

__all__ = [
    "DIALECT",
    "content_to_wire",
    "pending_events",
    "read_calls",
    "read_records",
    "render_tools",
    "result_to_wire",
    "records_to_wire",
    "results_to_wire",
    "tool_to_wire",
]

_RESERVED = frozenset({"type", "name", "description", "input_schema"})


# ---------------------------------------------------------------------- definitions
def tool_to_wire(tool: ToolDefinition) -> dict[str, Any]:
    """One ``custom`` tool. ``description`` is required: an empty one is generated."""
    # Anthropic's tool rendering (toolbridge_anthropic_messages): custom tools of an agent
    # have no ``strict`` flag, so the schema goes as declared (its root spelt out).
    from toolbridge_anthropic_messages import input_schema

    wire: dict[str, Any] = {"type": "custom", "name": tool.name,
                            "description": tool.description.strip()
                            or f"Calls the {tool.name} tool.",
                            "input_schema": input_schema(tool.parameters, False).schema}
    extras = tool.vendor_extras.get(DIALECT, {})
    wire.update({k: v for k, v in extras.items() if k not in _RESERVED})
    return wire


def render_tools(tools: Sequence[ToolDefinition]) -> RenderedTools:
    """The agent's ``tools`` entries, one ``custom`` tool each."""
    return RenderedTools([tool_to_wire(t) for t in tools])


# ---------------------------------------------------------------------- pending calls
def _events_of(payload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    kind = payload.get("type")
    if isinstance(kind, str) and kind in CALL_EVENTS:
        return [payload]
    data = payload.get("data")
    if not isinstance(data, list):
        why = (f"a {kind!r} event carries no call; pass the session's events page or an "
               f"{CUSTOM_TOOL_USE!r} event" if isinstance(kind, str) else
               "missing: expected a page of session events ({'data': [...]}) or an "
               f"{CUSTOM_TOOL_USE!r} event")
        raise WireFormatError(DIALECT, "data", why, payload)
    for index, event in enumerate(data):
        # Exact types first (JSON gives dicts and strs: the ABC checks are slow per event).
        if type(event) is not dict and not isinstance(event, Mapping):
            raise WireFormatError(DIALECT, f"data[{index}]", "expected an event object",
                                  payload)
        kind = event.get("type")
        if type(kind) is not str and not isinstance(kind, str):
            raise WireFormatError(DIALECT, f"data[{index}].type", "missing or not a string",
                                  payload)
    return list(data)


def pending_events(payload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The call events still waiting for an answer in ``payload`` (see the module docs).

    An answer closes the call events of its id before it (a model may use an id again, in
    a later round; events repeating an id in one round are all listed, for the runtime to
    answer once)."""
    events = _events_of(payload)
    named: list[str] | None = None
    open_calls: dict[str, list[Mapping[str, Any]]] = {}
    for index, event in enumerate(events):
        kind = event["type"]
        stop = event.get("stop_reason")
        if kind in CALL_EVENTS:
            open_calls.setdefault(str(event.get("id")), []).append(event)
        elif kind in (CUSTOM_TOOL_RESULT, CONFIRMATION):
            open_calls.pop(str(event.get("custom_tool_use_id") or event.get("tool_use_id")),
                           None)
        elif kind == "session.status_idle" and isinstance(stop, Mapping) and (
                stop.get("type") == "requires_action"):
            ids = stop.get("event_ids")
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise WireFormatError(DIALECT, f"data[{index}].stop_reason.event_ids",
                                      "expected a list of event ids", payload)
            named = list(dict.fromkeys(ids))
        elif kind in ("user.message", "session.status_running"):
            named = None  # the session went on: that idle is over
    if named is None:
        return [e for same in open_calls.values() for e in same if e["type"] == CUSTOM_TOOL_USE]
    return [e for i in named for e in open_calls.get(i, ())]


def read_calls(payload: Mapping[str, Any], conversation: str | None = None) -> PendingCalls:
    """Custom tool calls pending in ``payload``; tool uses held for a confirmation are left
    ``unhandled`` (approval items)."""
    pending: PendingCalls = _read(payload, conversation, False)
    return pending


def read_records(payload: Mapping[str, Any], conversation: str | None = None) -> PendingRecords:
    """`read_calls`, the calls as the runtime's records (`Dialect.read_records`)."""
    pending: PendingRecords = _read(payload, conversation, True)
    return pending


def _read(payload: Mapping[str, Any], conversation: str | None, records: bool) -> Any:
    pending, make = reading(records)
    session = payload.get("session_id") if conversation is None else conversation
    session = session if isinstance(session, str) else ""
    calls: list[Any] = []
    unhandled: list[Mapping[str, Any]] = []
    for event in pending_events(payload):
        if event["type"] != CUSTOM_TOOL_USE:
            unhandled.append(event)
            continue
        call_id, name = event.get("id"), event.get("name")
        if type(call_id) is not str or type(name) is not str or not call_id or not name:
            for field, value in (("id", call_id), ("name", name)):
                if not isinstance(value, str) or not value:
                    raise WireFormatError(DIALECT, f"{CUSTOM_TOOL_USE}.{field}",
                                          "missing or not a string", payload)
            call_id, name = str(call_id), str(name)  # text subclasses: plain text
        arguments, raw, error = read_arguments(event.get("input"), none=False, what="input")
        calls.append(make(
            id=call_id, name=name, arguments=arguments, raw_arguments=raw,
            argument_error=error, dialect=DIALECT, conversation=session))
    if calls or unhandled:
        return pending(tuple(calls), tuple(unhandled))
    return pending((), reason="no custom tool use waits for a result in these events")


# ---------------------------------------------------------------------- results
def content_to_wire(content: Content) -> list[dict[str, Any]]:
    """A content result as ``text`` / ``image`` / ``document`` blocks: the Messages API's
    blocks (`toolbridge_anthropic_messages`), which a custom tool result takes as they are."""
    from toolbridge_anthropic_messages.translate import content_blocks

    return content_blocks(content)


def result_to_wire(result: ToolResult) -> dict[str, Any]:
    """One ``user.custom_tool_result`` event (``is_error`` with the error's text)."""
    event: dict[str, Any] = {"type": CUSTOM_TOOL_RESULT, "custom_tool_use_id": result.call.id}
    if not result.success:
        event["content"] = [{"type": "text", "text": result.error or "Tool failed."}]
        event["is_error"] = True
    elif isinstance(result.output, Content):
        event["content"] = content_to_wire(result.output)
    else:
        event["content"] = [{"type": "text", "text": output_text(result.output)}]
    return event


def results_to_wire(results: Sequence[ToolResult]) -> dict[str, Any]:
    """The body of ``POST /v1/sessions/{id}/events`` answering ``results``."""
    return {"events": [result_to_wire(r) for r in results]}


def records_to_wire(records: Sequence[CallRecord]) -> dict[str, Any]:
    """`results_to_wire` of answered records (`Dialect.write_records`)."""
    events = []
    for record in records:
        text = record.sent_text()
        if text is not None:
            events.append({"type": CUSTOM_TOOL_RESULT, "custom_tool_use_id": record.id,
                           "content": [{"type": "text", "text": text}]})
            continue
        result = record.result()
        assert result is not None  # only answered records are written
        events.append(result_to_wire(result))
    return {"events": events}
