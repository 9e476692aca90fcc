"""Pure translations between the neutral model and CES wire payloads (no I/O)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from toolbridge import Content, Correlation, ToolCall, ToolDefinition, ToolResult, WireFormatError
from toolbridge.plugin import (
    CallRecord,
    PendingCalls,
    PendingRecords,
    RenderedTools,
    lazy_module,
    read_arguments,
    reading,
)

from . import wire

if TYPE_CHECKING:
    from toolbridge import schema
else:
    schema = lazy_module("toolbridge.schema")  # the schema engine: on first use

__all__ = [
    "DIALECT",
    "CesCorrelation",
    "definition_from_tool",
    "read_calls",
    "read_records",
    "render_tools",
    "tool_id_of",
    "tool_resource",
    "write_records",
    "write_results",
]

DIALECT = "google-ces"

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


# ---------------------------------------------------------------------- definitions
def tool_id_of(tool: ToolDefinition) -> str:
    """The tool resource id used for ``tool``: ``vendor_extras["google-ces"]["toolId"]`` or
    the tool's name."""
    extras = tool.vendor_extras.get(DIALECT, {})
    return str(extras.get("toolId") or tool.name)


def tool_resource(
    tool: ToolDefinition, *, policy: Any = "describe"
) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """One ``Tool`` resource with a ``clientFunction``, and the schema losses (parameters,
    then ``returns`` with pointers under ``/returns``)."""
    from toolbridge.schema import convert_schema  # the schema engine: on first use

    params = convert_schema(tool.parameters, "ces", policy=policy)
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = params.schema
    losses: list[Any] = list(params.losses)
    if tool.returns is not None:
        returns = convert_schema(tool.returns, "ces", policy=policy)
        function["response"] = returns.schema
        losses += [dataclasses.replace(loss, pointer="/returns" + loss.pointer)
                   for loss in returns.losses]
    resource: dict[str, Any] = {"clientFunction": function}
    if tool.timeout is not None:
        resource["timeout"] = f"{tool.timeout:.9g}s"  # google.protobuf.Duration
    extras = {k: v for k, v in tool.vendor_extras.get(DIALECT, {}).items() if k != "toolId"}
    resource.update(extras)  # e.g. executionType, toolFakeConfig
    return resource, tuple(losses)


def render_tools(tools: Sequence[ToolDefinition], *, policy: Any = "describe") -> RenderedTools:
    """CES ``Tool`` resources for ``tools``, with the loss report per tool name."""
    return RenderedTools.each(tools, lambda tool: tool_resource(tool, policy=policy))


def definition_from_tool(resource: Mapping[str, Any]) -> ToolDefinition:
    """A neutral definition read back from a CES ``Tool`` with a ``clientFunction``
    (enum names or numbers); parameters become JSON Schema again."""
    tool = wire.normalize_tool_enums(resource)
    function = tool.get("clientFunction")
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise WireFormatError(DIALECT, "clientFunction.name", "missing; only client "
                              "function tools have a neutral form", dict(resource))
    from toolbridge.schema import to_json_schema

    params = function.get("parameters")
    parameters = (to_json_schema(params, "ces").schema
                  if isinstance(params, Mapping) else {"type": "object", "properties": {}})
    returns = function.get("response")
    return ToolDefinition(
        name=function["name"], description=str(function.get("description", "")),
        parameters=parameters,
        returns=to_json_schema(returns, "ces").schema
        if isinstance(returns, Mapping) else None,
    )


# ---------------------------------------------------------------------- pending calls
def _outputs(payload: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, SessionOutput) pairs from a RunSessionResponse, a SessionOutput or ToolCalls."""
    if "outputs" in payload:
        outputs = payload["outputs"]
        if not isinstance(outputs, list):
            raise WireFormatError(DIALECT, "outputs", "must be a list of SessionOutput objects",
                                  payload)
        pairs = []
        for i, output in enumerate(outputs):
            if not isinstance(output, Mapping):
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
    for prefix, output in _outputs(payload):
        turn_index = _turn_index(output, prefix, payload)
        holder = output.get("toolCalls", _MISSING)
        if holder is _MISSING:
            holder = output.get("tool_calls")
        if holder is None:
            continue
        path = prefix + "toolCalls"
        if not isinstance(holder, Mapping):
            raise WireFormatError(DIALECT, path, "must be a ToolCalls object", payload)
        items = holder.get("toolCalls", _MISSING)
        if items is _MISSING:
            items = holder.get("tool_calls", [])
        if not isinstance(items, list):
            raise WireFormatError(DIALECT, path + ".toolCalls", "must be a list", payload)
        calls.extend(_read_call(item, path, j, payload, session, turn_index, names, records)
                     for j, item in enumerate(items))
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



def decode_arguments(arguments: dict[str, Any], tool: ToolDefinition) -> dict[str, Any]:
    """Struct numbers are doubles: integral values become ints where the schema says
    integer; stringified enum values get their declared type back."""
    decoded = schema.compile_decoder(tool.parameters)(arguments)
    return decoded if isinstance(decoded, dict) else dict(arguments)


# ---------------------------------------------------------------------- results
def _response(result: ToolResult) -> dict[str, Any]:
    if not result.success:
        return {"error": result.error or "the tool failed"}
    output = result.output
    if isinstance(output, Content):
        output = output.as_text()
    return {"output": output}


def _entry(corr: Any, call_id: str, name: str, response: dict[str, Any]) -> dict[str, Any]:
    """One ``ToolResponse`` echoing the call's ``id``, ``tool``/``toolsetTool`` and name."""
    entry: dict[str, Any] = {}
    if type(corr) is _Echo or isinstance(corr, CesCorrelation):
        if corr.id:
            entry["id"] = corr.id
        if corr.tool:
            entry["tool"] = corr.tool
        elif corr.toolset_tool:
            entry["toolsetTool"] = corr.toolset_tool
        entry["displayName"] = corr.display_name or name
    else:
        entry["id"] = call_id
        entry["displayName"] = name
    entry["response"] = response
    return entry


def tool_response(result: ToolResult) -> dict[str, Any]:
    """One ``ToolResponse`` echoing the call's ``id``, ``tool``/``toolsetTool`` and name."""
    call = result.call
    return _entry(call.correlation, call.id, call.name, _response(result))


def _body(session: str, correlations: Sequence[Any],
          responses: list[dict[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    chosen = session
    if not chosen:  # the calls' own session, when they agree on one
        sessions = {c.session for c in correlations
                    if type(c) is _Echo or isinstance(c, CesCorrelation)} - {""}
        chosen = sessions.pop() if len(sessions) == 1 else ""
    if chosen:
        body["config"] = {"session": chosen}
    body["inputs"] = [{"toolResponses": {"toolResponses": responses}}]
    return body


def write_results(results: Sequence[ToolResult], *, session: str = "") -> dict[str, Any]:
    """The ``RunSessionRequest`` body answering ``results`` (``config.session`` when known)."""
    return _body(session, [r.call.correlation for r in results],
                 [tool_response(r) for r in results])


def write_records(records: Sequence[CallRecord], *, session: str = "") -> dict[str, Any]:
    """`write_results` of answered records (`Dialect.write_records`)."""
    responses = []
    for record in records:
        if record.success:
            output = record.output
            if isinstance(output, Content):
                output = output.as_text()
            response = {"output": output}
        else:
            response = {"error": record.error or "the tool failed"}
        echo = record.correlation
        if type(echo) is _Echo and echo.id and echo.tool:  # the usual call, as `_entry` does
            responses.append({"id": echo.id, "tool": echo.tool,
                              "displayName": echo.display_name or record.name,
                              "response": response})
        else:
            responses.append(_entry(echo, record.id, record.name, response))
    return _body(session, () if session else [r.correlation for r in records], responses)
