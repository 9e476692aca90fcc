"""CES pending calls: a ``runSession`` answer's ``toolCalls`` read as calls or records.

The usual call (``id``, ``tool`` and ``displayName`` as text, ``args`` an object, no
``toolsetTool``) is read inline; any other goes through every check of `_read_call`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, NamedTuple

from toolbridge import Correlation, ToolCall, WireFormatError
from toolbridge.plugin import CallRecord, PendingCalls, PendingRecords, read_arguments, reading

from .wire import DIALECT

__all__ = ["CesCorrelation", "read_calls", "read_records"]

_OUTPUT_FIELDS = frozenset({"text", "audio", "toolCalls", "citations", "googleSearchSuggestions",
                            "endSession", "payload", "turnIndex", "turnCompleted",
                            "diagnosticInfo", "context"})


class CesCorrelation(Correlation):
    """What a CES call needs echoed in its `ToolResponse`."""

    id: str = ""
    """``ToolCall.id``; empty when the call carried none (then none is echoed)."""
    tool: str | None = None
    """``ToolCall.tool``: the tool's resource name."""
    toolset_tool: dict[str, Any] | None = None
    """``ToolCall.toolsetTool`` (``{toolset, toolId}``), the alternative to ``tool``."""
    display_name: str | None = None
    """``ToolCall.displayName``: the function name."""
    session: str = ""
    """The session the call belongs to, when known (goes into ``config.session``)."""
    turn_index: int | None = None
    """``SessionOutput.turnIndex`` of the output holding the call."""


def _outputs(payload: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, SessionOutput) pairs from a RunSessionResponse, a SessionOutput or ToolCalls."""
    if "outputs" in payload:
        outputs = payload["outputs"]
        if not isinstance(outputs, list):
            raise WireFormatError(DIALECT, "outputs", "must be a list of SessionOutput objects",
                                  payload)
        pairs = []
        for i, output in enumerate(outputs):
            if type(output) is not dict and not isinstance(output, Mapping):
                raise WireFormatError(DIALECT, f"outputs[{i}]", "must be an object", payload)
            pairs.append((f"outputs[{i}].", output))
        return pairs
    if isinstance(payload.get("toolCalls"), list):  # a bare ToolCalls message
        return [("", {"toolCalls": payload})]
    if not payload or set(payload) & _OUTPUT_FIELDS:
        return [("", payload)]
    raise WireFormatError(
        DIALECT, "<payload>", "expected a runSession response ({\"outputs\": [...]}), a "
        f"SessionOutput or a ToolCalls message; got keys {sorted(map(str, payload))}", payload)


def _text(value: Any, path: str, payload: Mapping[str, Any]) -> str | None:
    if type(value) is str:  # the common case, by exact type first
        return value or None
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise WireFormatError(DIALECT, path, f"must be a string, got {type(value).__name__}",
                              payload)
    return value


def _turn_index(output: Mapping[str, Any], path: str, payload: Mapping[str, Any]) -> int | None:
    value = output.get("turnIndex", output.get("turn_index"))
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite double
        raise WireFormatError(DIALECT, path + "turnIndex", "must be an integer",
                              payload) from None


def read_calls(payload: Mapping[str, Any], *, session: str = "",
               tool_names: Mapping[str, str] | None = None) -> PendingCalls:
    """The client-function calls a CES payload waits on.

    ``conversation`` is ``session``; ``turn`` is empty, because the call ``id`` is unique in
    the session and is the only value that stays the same however the call is re-delivered
    (whole response, single output, proto-plus message). ``tool_names`` maps tool resource
    names to function names for calls without ``displayName``.
    """
    pending: PendingCalls = _read(payload, session, tool_names, False)
    return pending


def read_records(payload: Mapping[str, Any], *, session: str = "",
                 tool_names: Mapping[str, str] | None = None) -> PendingRecords:
    """`read_calls`, the calls as the runtime's records (`Dialect.read_records`). The
    correlation is made with the record: every result echoes it."""
    pending: PendingRecords = _read(payload, session, tool_names, True)
    return pending


def _read(payload: Mapping[str, Any], session: str, tool_names: Mapping[str, str] | None,
          records: bool) -> Any:
    pending = reading(records).pending
    calls: list[Any] = []
    names = tool_names or {}
    fast = records and type(session) is str  # records of plain text: read inline
    new_record = CallRecord.trusted
    for prefix, output in _outputs(payload):
        turn_index = _turn_index(output, prefix, payload)
        holder = output.get("toolCalls", _MISSING)
        if holder is _MISSING:
            holder = output.get("tool_calls")
        if holder is None:
            continue
        path = prefix + "toolCalls"
        if type(holder) is not dict and not isinstance(holder, Mapping):  # the ABC is slow
            raise WireFormatError(DIALECT, path, "must be a ToolCalls object", payload)
        items = holder.get("toolCalls", _MISSING)
        if items is _MISSING:
            items = holder.get("tool_calls", [])
        if not isinstance(items, list):
            raise WireFormatError(DIALECT, path + ".toolCalls", "must be a list", payload)
        for j, item in enumerate(items):
            if fast and type(item) is dict:
                call_id, tool, display = item.get("id"), item.get("tool"), item.get("displayName")
                args = item.get("args")
                if (type(call_id) is str and type(tool) is str and type(display) is str
                        and call_id and tool and display and type(args) is dict
                        and "toolsetTool" not in item and "toolset_tool" not in item):
                    # The usual call, every field checked here as `_read_call` checks it.
                    args, _, error = read_arguments(args)
                    echo: Any = _new_echo(_Echo, (call_id, tool, None, display, session,
                                                  turn_index))
                    calls.append(new_record(
                        id=call_id, name=display, arguments=args, argument_error=error,
                        dialect=DIALECT, conversation=session, turn="", correlation=echo))
                    continue
            calls.append(_read_call(item, path, j, payload, session, turn_index, names,
                                    records))
    if calls:
        return pending(tuple(calls))
    return pending((), reason="no output holds toolCalls (the agent answered with text, "
                        "or ended the turn)")


_MISSING: Any = object()
"""A field absent under its camelCase name: then its snake_case one is read (proto-plus
JSON may spell either)."""


class _Echo(NamedTuple):
    """What a result echoes of its call (`CesCorrelation`'s fields), as a record holds it
    (`read_records`): the writer reads it as it is; called, it is the `CesCorrelation`
    (`toolbridge.plugin.CallRecord` calls it when the record's `ToolCall` is made)."""

    id: str
    tool: str | None
    toolset_tool: dict[str, Any] | None
    display_name: str | None
    session: str
    turn_index: int | None

    def __call__(self) -> CesCorrelation:
        return CesCorrelation.trusted(
            id=self.id, tool=self.tool, toolset_tool=self.toolset_tool,
            display_name=self.display_name, session=self.session, turn_index=self.turn_index)


_new_echo = tuple.__new__  # _Echo(...) without its Python __new__


def _read_call(item: Any, path: str, j: int, payload: Mapping[str, Any], session: str,
               turn_index: int | None, tool_names: Mapping[str, str], record: bool) -> Any:
    # Exact types first: JSON gives dicts, and the Mapping ABC check is slow per call; the
    # call's field path is formatted for errors only.
    if type(item) is not dict and not isinstance(item, Mapping):
        raise WireFormatError(DIALECT, f"{path}.toolCalls[{j}]", "must be a ToolCall object",
                              payload)
    call_id, tool = item.get("id"), item.get("tool")
    display = item.get("displayName", _MISSING)
    if display is _MISSING:
        display = item.get("display_name")
    plain = (type(call_id) is str and type(tool) is str and type(display) is str
             and call_id and tool and display)
    if not plain:
        at = f"{path}.toolCalls[{j}]"
        call_id = _text(call_id, at + ".id", payload)
        tool = _text(tool, at + ".tool", payload)
        display = _text(display, at + ".displayName", payload)
    toolset = item.get("toolsetTool", _MISSING)
    if toolset is _MISSING:
        toolset = item.get("toolset_tool")
    if toolset is not None and not isinstance(toolset, Mapping):
        raise WireFormatError(DIALECT, f"{path}.toolCalls[{j}].toolsetTool",
                              "must be an object", payload)
    if tool and toolset is not None:
        raise WireFormatError(DIALECT, f"{path}.toolCalls[{j}]", "has both tool and "
                              "toolsetTool; they are one oneof, set at most one", payload)
    name = display or (tool_names.get(tool) if tool else None)
    if name is None:
        if tool:
            name = tool.rsplit("/", 1)[-1]
        elif toolset:
            name = str(toolset.get("toolId", toolset.get("tool_id", "")))
    if not name:
        raise WireFormatError(DIALECT, f"{path}.toolCalls[{j}]", "names no tool (no "
                              "displayName, tool or toolsetTool)", payload)
    args = item.get("args", {})
    if args is None:
        args = {}
    if type(args) is not dict and not isinstance(args, Mapping):
        raise WireFormatError(DIALECT, f"{path}.toolCalls[{j}].args",
                              "must be a JSON object (a Struct)", payload)
    # Too deep, or a name that is not text: the one call gets an error result.
    args, _, error = read_arguments(args)
    # Every field is checked above (text by `_text`, the arguments by `read_arguments`), so
    # the trusted constructors skip pydantic's validation; a text subclass (never from JSON)
    # goes through the validating ones.
    exact = (plain and toolset is None and type(session) is str) or (
        type(name) is str and type(session) is str
        and (call_id is None or type(call_id) is str) and (tool is None or type(tool) is str)
        and (display is None or type(display) is str)
        and (not toolset or all(type(k) is str for k in toolset)))
    toolset_tool = dict(toolset) if toolset else None
    if record and exact:  # the correlation's fields, made into it only if ever asked
        correlation: Any = _new_echo(_Echo, (call_id or "", tool, toolset_tool, display,
                                             session, turn_index))
    else:
        correlation = (CesCorrelation.trusted if exact else CesCorrelation)(
            id=call_id or "", tool=tool, toolset_tool=toolset_tool, display_name=display,
            session=session, turn_index=turn_index)
    make: Any = (CallRecord.trusted if record else ToolCall.trusted) if exact else ToolCall
    call = make(
        # Without an id nothing identifies the call across deliveries: a fresh id means the
        # result store never confuses two such calls (a re-delivery runs again).
        id=call_id or f"no-id-{uuid.uuid4().hex}", name=name, arguments=args,
        argument_error=error, dialect=DIALECT, conversation=session, turn="",
        correlation=correlation,
    )
    return CallRecord.of(call) if record and not exact else call
