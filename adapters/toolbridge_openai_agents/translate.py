"""Pure translations between the neutral model and the Agents API wire (no I/O)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from toolbridge import (
    Content,
    ImagePart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UsageError,
    WireFormatError,
)
from toolbridge.plugin import (
    CallRecord,
    PendingCalls,
    PendingRecords,
    RenderedTools,
    read_arguments,
)
from toolbridge.runtime import output_text

from .wire import DIALECT, MAX_TOOLS_BYTES, TOOL_RESULT

__all__ = [
    "DIALECT",
    "calls_from_wire",
    "content_to_wire",
    "read_calls",
    "render_tools",
    "result_to_wire",
    "results_to_wire",
    "session_of",
    "tool_to_wire",
    "tools_to_wire",
]

log = logging.getLogger("toolbridge.openai_agents")

# Agents function tools have no `strict` flag (agent_tool_param.py); never send one.
_RESERVED = frozenset({"type", "name", "description", "parameters", "strict"})


# ---------------------------------------------------------------------- definitions
def tool_to_wire(tool: ToolDefinition) -> dict[str, Any]:
    """One flat function tool. ``description`` is required here: an empty one is generated."""
    description = tool.description.strip()
    if not description:
        description = f"Calls the {tool.name} function."
        log.info("tool %r has no description; the Agents API requires one, sending %r",
                 tool.name, description)
    from toolbridge.schema import normalize_root  # the schema engine: on first use

    # Sent as declared (no strict mode here), its root spelt out as the API expects.
    wire: dict[str, Any] = {
        "type": "function", "name": tool.name, "description": description,
        "parameters": normalize_root(tool.parameters),
    }
    if tool.defer_loading:
        wire["defer_loading"] = True
    extras = tool.vendor_extras.get(DIALECT, {})
    wire.update({k: v for k, v in extras.items() if k not in _RESERVED})
    return wire


def tools_to_wire(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """The ``agent.tools`` list: functions, plus ``tool_search`` when any is deferred.

    Raises `UsageError` when the list exceeds the 3 MiB the service accepts.
    """
    wire = [tool_to_wire(t) for t in tools]
    if any(w.get("defer_loading") for w in wire):
        # Deferred functions stay hidden unless tool search is on (seeds 000-002).
        wire.append({"type": "tool_search"})
    size = len(json.dumps(wire, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_TOOLS_BYTES:
        raise UsageError(
            f"{DIALECT}: the tool list is {size:,} bytes of compact JSON, over the "
            f"{MAX_TOOLS_BYTES:,}-byte limit; shorten descriptions and schemas, or defer "
            "rarely used tools to another agent"
        )
    return wire


def render_tools(tools: Sequence[ToolDefinition]) -> RenderedTools:
    """`tools_to_wire`, as `Dialect.render_tools` returns it (nothing is lost: no conversion)."""
    return RenderedTools(tools_to_wire(tools))


# ---------------------------------------------------------------------- pending calls
def session_of(payload: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """The session object in ``payload`` and its field path prefix.

    Accepts a session (``GET /agents/sessions/{id}``) or a session event such as
    ``agent.session.requires_action``.
    """
    kind = payload.get("type")
    if isinstance(kind, str) and kind.startswith("agent.session") and "session" in payload:
        session = payload["session"]
        if not isinstance(session, Mapping):
            raise WireFormatError(DIALECT, "session", "expected an object", payload)
        return session, "session."
    if "required_actions" in payload or payload.get("object") == "agent.session":
        return payload, ""
    if isinstance(kind, str):
        raise WireFormatError(
            DIALECT, "type",
            f"a {kind!r} event carries no pending calls; pass the session or an "
            "'agent.session.requires_action' event (only required_actions are pending)", payload,
        )
    raise WireFormatError(
        DIALECT, "required_actions",
        "missing: expected an agent session or an 'agent.session.requires_action' event", payload,
    )


C = TypeVar("C", ToolCall, CallRecord)


def calls_from_wire(
    payload: Mapping[str, Any], make: Any = ToolCall.trusted
) -> tuple[tuple[C, ...], tuple[Mapping[str, Any], ...]]:
    """Function calls from ``required_actions``, and the other required actions left over.

    ``make`` builds each call from checked fields: `ToolCall.trusted`, or `CallRecord.trusted`
    (the runtime's record, `read_records`)."""
    session, prefix = session_of(payload)
    session_id = session.get("id")
    if not isinstance(session_id, str) or not session_id:
        raise WireFormatError(DIALECT, prefix + "id", "missing or not a string", payload)
    actions = session.get("required_actions")
    if not isinstance(actions, list):
        raise WireFormatError(DIALECT, prefix + "required_actions", "expected a list", payload)
    calls: list[C] = []
    unhandled: list[Mapping[str, Any]] = []
    trusted_call = make
    for index, action in enumerate(actions):
        if type(action) is not dict and not isinstance(action, Mapping):
            raise WireFormatError(DIALECT, f"{prefix}required_actions[{index}]",
                                  "expected an object", payload)
        if action.get("type") != "function_call":
            unhandled.append(action)
            continue
        turn_id, call_id, name = action.get("turn_id"), action.get("call_id"), action.get("name")
        if type(turn_id) is not str or type(call_id) is not str or type(name) is not str or (
                not (turn_id and call_id and name)):
            turn_id, call_id, name = _checked_ids(prefix, index, turn_id, call_id, name, payload)
        # An object on the wire; a JSON string is decoded, as the SDK's dispatcher does.
        arguments, raw, error = read_arguments(action.get("arguments"), none=False)
        # Every field is checked above, so the trusted constructor skips pydantic's
        # validation (it cost as much as the SDK's whole parse of the session). No correlation:
        # the ids a result echoes are the call's own `id`, `turn` and `conversation`.
        calls.append(trusted_call(
            id=call_id, name=name, arguments=arguments, raw_arguments=raw, argument_error=error,
            dialect=DIALECT, conversation=session_id, turn=turn_id,
        ))
    return tuple(calls), tuple(unhandled)


def read_calls(payload: Mapping[str, Any]) -> PendingCalls:
    """`calls_from_wire`, as `Dialect.read_calls` returns it."""
    calls: tuple[ToolCall, ...]
    calls, unhandled = calls_from_wire(payload)
    if calls or unhandled:
        return PendingCalls(calls, unhandled)
    return PendingCalls((), reason=_idle(payload))


def read_records(payload: Mapping[str, Any]) -> PendingRecords:
    """`read_calls`, the calls as the runtime's records (`Dialect.read_records`)."""
    records: tuple[CallRecord, ...]
    records, unhandled = calls_from_wire(payload, CallRecord.trusted)
    if records or unhandled:
        return PendingRecords(records, unhandled)
    return PendingRecords((), reason=_idle(payload))


def _idle(payload: Mapping[str, Any]) -> str:
    status = session_of(payload)[0].get("status")
    return f"the session's status is {status!r}: its required_actions are empty"


def _checked_ids(prefix: str, index: int, turn_id: Any, call_id: Any, name: Any,
                 body: Any) -> tuple[str, str, str]:
    """The ids and name as plain strings; `WireFormatError` names the first one missing or
    not a string."""
    for field, value in (("turn_id", turn_id), ("call_id", call_id), ("name", name)):
        if not isinstance(value, str) or not value:
            raise WireFormatError(DIALECT, f"{prefix}required_actions[{index}].{field}",
                                  "missing or not a string", body)
    return str(turn_id), str(call_id), str(name)


# ---------------------------------------------------------------------- results
def content_to_wire(content: Content) -> list[dict[str, str]]:
    """A content result as ``input_text`` / ``input_image`` parts; a document (which tool
    results cannot carry here) as the text describing it."""
    return [{"type": "input_image", "image_url": p.url} if isinstance(p, ImagePart) else
            {"type": "input_text", "text": p.as_text()} for p in content.parts]


def result_to_wire(result: ToolResult) -> dict[str, Any]:
    """One ``agent.session.input.tool_result`` event."""
    call = result.call
    turn_id, call_id = call.turn, call.id
    if not turn_id:
        raise UsageError(f"{DIALECT}: call {call_id!r} has no turn id; read calls with "
                         "read_calls so both turn_id and call_id can be echoed")
    event: dict[str, Any] = {"type": TOOL_RESULT, "turn_id": turn_id, "call_id": call_id,
                             "success": result.success}
    if not result.success:
        event["error"] = result.error or "Tool failed."
    elif isinstance(result.output, Content):
        event["output"] = content_to_wire(result.output)
    else:
        # Objects are sent as compact JSON text, as the SDK does (lib/streaming/agents/_tools.py).
        event["output"] = output_text(result.output)
    return event


def results_to_wire(results: Sequence[ToolResult]) -> dict[str, Any]:
    """The body of ``POST /agents/sessions/{id}/events`` answering ``results``."""
    events: list[dict[str, Any]] = []
    for result in results:
        # The common case (text output) inline, reading each model's fields once: this is on
        # every payload's path, and a pydantic model's attributes are slow to get.
        fields = result.__dict__
        if fields["success"]:
            call = fields["call"].__dict__
            output = fields["output"]
            if call["turn"] and (type(output) is str or not isinstance(output, Content)):
                events.append({"type": TOOL_RESULT, "turn_id": call["turn"],
                               "call_id": call["id"], "success": True,
                               "output": output_text(output)})
                continue
        events.append(result_to_wire(result))
    return {"events": events}


def records_to_wire(records: Sequence[CallRecord]) -> dict[str, Any]:
    """`results_to_wire` of answered records (`Dialect.write_records`)."""
    events: list[dict[str, Any]] = []
    for record in records:
        output = record.output
        if record.success and record.turn and (type(output) is str
                                               or not isinstance(output, Content)):
            text = record.text
            events.append({"type": TOOL_RESULT, "turn_id": record.turn, "call_id": record.id,
                           "success": True,
                           "output": output_text(output) if text is None else text})
            continue
        result = record.result()
        assert result is not None  # only answered records are written
        events.append(result_to_wire(result))
    return {"events": events}
