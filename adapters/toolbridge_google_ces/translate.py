"""Pure translations between the neutral model and CES wire payloads (no I/O)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolbridge import Content, ToolDefinition, ToolResult, WireFormatError
from toolbridge.plugin import CallRecord, RenderedTools, lazy_module

from . import wire
from ._pending import CesCorrelation, _Echo, read_calls, read_records

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
            kind = type(output)  # JSON data by exact type first: the Content check is slow
            if kind is not dict and kind is not str and kind is not list and isinstance(
                    output, Content):
                output = output.as_text()
            response = {"output": output}
        else:
            response = {"error": record.error or "the tool failed"}
        echo = record.correlation
        if type(echo) is _Echo:
            call_id, tool, _, display, _, _ = echo
            if call_id and tool:  # the usual call, as `_entry` writes it
                responses.append({"id": call_id, "tool": tool,
                                  "displayName": display or record.name, "response": response})
                continue
        responses.append(_entry(echo, record.id, record.name, response))
    return _body(session, () if session else [r.correlation for r in records], responses)
