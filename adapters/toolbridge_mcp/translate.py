"""Pure translations between the neutral model and MCP's tool wire (no I/O).

A definition is an MCP ``Tool``; a pending call is a ``tools/call`` request (or its
``params``); a result is the JSON-RPC response carrying a ``CallToolResult``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import (
    Content,
    Correlation,
    DocumentPart,
    ImagePart,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UsageError,
    WireFormatError,
)
from toolbridge.plugin import PendingCalls, RenderedTools, read_arguments
from toolbridge.runtime import output_text

from .wire import DIALECT, IDEMPOTENCY_META, NAME_RULE

__all__ = [
    "KEYED_TURN",
    "McpCorrelation",
    "annotations_of",
    "call_tool_result",
    "local_name",
    "read_call",
    "read_calls",
    "read_tool",
    "read_tools",
    "render_tool",
    "render_tools",
    "write_results",
]

_UNFIT = re.compile(r"[^A-Za-z0-9_-]")

KEYED_TURN = "idempotency-key"
"""The store key's turn of a call that carries an idempotency key: it is stored under
``("mcp", "", "idempotency-key", <key>)``, the same for every re-issue of the call."""


class McpCorrelation(Correlation):
    """What answering a call needs: the JSON-RPC id of the ``tools/call`` request."""

    request_id: str | int | None = None


# ---------------------------------------------------------------------- definitions
def annotations_of(tool: ToolDefinition) -> dict[str, Any]:
    """The ``ToolAnnotations`` the definition declares (``vendor_extras["mcp"]["annotations"]``
    adds to or overrides them): ``readOnlyHint`` from `read_only`, ``destructiveHint`` from
    ``side_effects``, ``idempotentHint`` from ``idempotent``."""
    hints: dict[str, Any] = {}
    if tool.read_only:
        hints["readOnlyHint"] = True
    elif tool.side_effects:
        hints["readOnlyHint"] = False
        hints["destructiveHint"] = True
    if tool.idempotent:
        hints["idempotentHint"] = True
    extra = tool.vendor_extras.get(DIALECT, {}).get("annotations")
    if isinstance(extra, Mapping):
        hints.update(extra)
    return hints


def render_tool(tool: ToolDefinition, *, policy: Any = "describe"
                ) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """The MCP ``Tool``: the neutral schema as ``inputSchema`` (JSON Schema 2020-12, which MCP
    takes whole: nothing is lost), ``outputSchema`` when the result is a JSON object."""
    from toolbridge.schema import normalize_root  # the schema engine: on first use

    extras = tool.vendor_extras.get(DIALECT, {})
    remote = extras.get("name")  # the MCP name of a tool read from MCP, while it fits
    wire: dict[str, Any] = {"name": remote if isinstance(remote, str) and local_name(remote)
                            == tool.name and NAME_RULE.match(remote) else tool.name}
    title = extras.get("title")
    if isinstance(title, str):
        wire["title"] = title
    if tool.description:
        wire["description"] = tool.description
    wire["inputSchema"] = normalize_root(tool.parameters)
    if tool.returns is not None and tool.returns.get("type") == "object":
        # Through 2025-11-25 an output schema's root must be an object (so must
        # structuredContent): other results go as text only, on every revision.
        wire["outputSchema"] = normalize_root(tool.returns)
    hints = annotations_of(tool)
    if hints:
        wire["annotations"] = hints
    return wire, ()


def render_tools(tools: Sequence[ToolDefinition], *, policy: Any = "describe") -> RenderedTools:
    """Every tool as an MCP ``Tool`` (the ``tools`` of a ``tools/list`` result)."""
    return RenderedTools.each(tools, lambda tool: render_tool(tool, policy=policy))


def read_tool(tool: Mapping[str, Any], where: str) -> ToolDefinition:
    """The neutral definition of one MCP ``Tool``; its schemas through
    `toolbridge.schema.normalize_root` (servers often send ``{"type": "object"}``).

    ``readOnlyHint`` reads as `read_only`; a tool that does not say it only reads is taken to
    change the world (MCP's defaults: not read-only, destructive), so ``side_effects=True``;
    ``idempotentHint`` reads as ``idempotent``. The annotations are kept in
    ``vendor_extras["mcp"]``, and so is a name MCP allows but toolbridge does not
    (``book.room`` becomes ``book_room``; `local_name`).
    """
    from toolbridge.schema import normalize_root

    remote = tool.get("name")
    if not isinstance(remote, str) or not remote:
        raise WireFormatError(DIALECT, f"{where}.name", "missing or not a string", tool)
    name = local_name(remote)
    description = tool.get("description") or ""
    if not isinstance(description, str):
        raise WireFormatError(DIALECT, f"{where}.description", "not a string", tool)
    schemas: dict[str, dict[str, Any]] = {}
    for field, neutral in (("inputSchema", "parameters"), ("outputSchema", "returns")):
        value = tool.get(field)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise WireFormatError(DIALECT, f"{where}.{field}", "not a JSON Schema object", tool)
        schemas[neutral] = normalize_root(value)
    hints = tool.get("annotations") or {}
    if not isinstance(hints, Mapping):
        raise WireFormatError(DIALECT, f"{where}.annotations", "not an object", tool)
    read_only = hints.get("readOnlyHint") is True
    extras: dict[str, Any] = {"annotations": dict(hints)} if hints else {}
    if isinstance(tool.get("title"), str):
        extras["title"] = tool["title"]
    if name != remote:
        extras["name"] = remote
    try:
        return ToolDefinition(
            name=name, description=description, read_only=read_only,
            side_effects=not read_only, idempotent=hints.get("idempotentHint") is True,
            vendor_extras={DIALECT: extras} if extras else {}, **schemas)
    except ValueError as exc:
        raise WireFormatError(DIALECT, where, f"not a definition toolbridge takes: {exc}",
                              tool) from None


def local_name(remote: str, prefix: str | None = None) -> str:
    """A toolbridge name (``[A-Za-z0-9_-]{1,64}``) for an MCP tool name: other characters
    (MCP also allows ``.``) become ``_``, ``prefix`` goes first (``<prefix>_<name>``)."""
    name = _UNFIT.sub("_", remote)
    return (f"{prefix}_{name}" if prefix else name)[:64]


def read_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]
               ) -> list[ToolDefinition]:
    """Every ``Tool`` of a list (or of a ``tools/list`` result ``{"tools": [...]}``)."""
    data = definitions.get("tools") if isinstance(definitions, Mapping) else definitions
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Sequence):
        raise WireFormatError(DIALECT, "tools", "missing or not a list", definitions)
    found: list[ToolDefinition] = []
    for i, item in enumerate(data):
        if not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, f"tools[{i}]", "expected an object", item)
        found.append(read_tool(item, f"tools[{i}]"))
    return found


# ---------------------------------------------------------------------- pending calls
def read_call(params: Mapping[str, Any], request_id: str | int | None,
              body: Any = None) -> ToolCall:
    """The call a ``tools/call`` request's ``params`` make.

    With an idempotency key (``_meta["io.toolbridge/idempotencyKey"]``) the call's id is the
    key and it is stored under ``("mcp", "", "idempotency-key", key)``: a re-issue of the call
    (a new request id) is answered from the result store. Without one its id is the request
    id and nothing identifies it across requests: it is not stored, and a re-issue runs it
    again.
    """
    body = params if body is None else body
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise WireFormatError(DIALECT, "params.name", "missing or not a non-empty string", body)
    meta = params.get("_meta")
    meta = {} if meta is None else meta
    if not isinstance(meta, Mapping):
        raise WireFormatError(DIALECT, "params._meta", "not an object", body)
    key = meta.get(IDEMPOTENCY_META)
    if key is not None and (not isinstance(key, str) or not key or len(key) > 256):
        raise WireFormatError(DIALECT, f"params._meta[{IDEMPOTENCY_META!r}]",
                              "not a non-empty string of at most 256 characters", body)
    arguments, raw, error = read_arguments(params.get("arguments"))
    call_id = key if key is not None else ("" if request_id is None else str(request_id))
    return ToolCall.trusted(
        id=call_id or "call", name=name, arguments=arguments, raw_arguments=raw,
        argument_error=error, dialect=DIALECT, turn=KEYED_TURN if key is not None else "",
        correlation=McpCorrelation.trusted(request_id=request_id))


def read_calls(payload: Mapping[str, Any]) -> PendingCalls:
    """The call of a ``tools/call`` JSON-RPC request, or of its ``params`` alone."""
    if "method" in payload:
        method = payload.get("method")
        if not isinstance(method, str):
            raise WireFormatError(DIALECT, "method", "not a string", payload)
        if method != "tools/call":
            return PendingCalls((), reason=f"the request is {method[:64]!r}, not a tools/call")
        params = payload.get("params")
        if not isinstance(params, Mapping):
            raise WireFormatError(DIALECT, "params", "missing or not an object", payload)
        request_id = payload.get("id")
        if request_id is not None and not isinstance(request_id, (str, int)):
            raise WireFormatError(DIALECT, "id", "not a string or an integer", payload)
        return PendingCalls((read_call(params, request_id, payload),))
    if "name" in payload:
        return PendingCalls((read_call(payload, None),))
    raise WireFormatError(DIALECT, "method", "missing: expected a tools/call request or its "
                          "params {\"name\", \"arguments\"}", payload)


# ---------------------------------------------------------------------- results
def _content_block(part: TextPart | ImagePart | DocumentPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, DocumentPart):  # a linked file, or (inline: no URI) its description
        if part.url is None:
            return {"type": "text", "text": part.as_text()}
        return {"type": "resource_link", "uri": part.url, "mimeType": part.media_type,
                "name": part.title or part.url.rsplit("/", 1)[-1] or "document"}
    head, comma, data = part.url.partition(",")
    if part.url.startswith("data:") and head.endswith(";base64") and comma:
        return {"type": "image", "data": data, "mimeType": head[5:-7]}
    return {"type": "resource_link", "uri": part.url, "name": part.url.rsplit("/", 1)[-1]
            or "image"}


def call_tool_result(result: ToolResult) -> dict[str, Any]:
    """The ``CallToolResult``: an error as ``isError`` with its message, a JSON object output
    as ``structuredContent`` plus its text, `Content` as content blocks, text as text."""
    if not result.success:
        return {"content": [{"type": "text", "text": result.error or "the tool failed"}],
                "isError": True}
    output = result.output
    if isinstance(output, Content):
        return {"content": [_content_block(p) for p in output.parts], "isError": False}
    body: dict[str, Any] = {"content": [{"type": "text", "text": output_text(output)}],
                            "isError": False}
    if isinstance(output, dict):
        body["structuredContent"] = output
    return body


def _response(result: ToolResult) -> dict[str, Any]:
    correlation = result.call.correlation
    request_id = correlation.request_id if isinstance(correlation, McpCorrelation) else None
    answer = call_tool_result(result)
    if result.call.turn == KEYED_TURN:
        answer["_meta"] = {IDEMPOTENCY_META: result.call.id}
    return {"jsonrpc": "2.0", "id": request_id, "result": answer}


def write_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """The JSON-RPC response answering the call (its ``result`` a ``CallToolResult``; a keyed
    call's key echoed in its ``_meta``); ``{}`` when the call awaits approval (no answer
    yet). MCP answers one call per request."""
    if not results:
        return {}
    if len(results) != 1:
        raise UsageError(f"{DIALECT}: a tools/call request is answered by exactly one result, "
                         f"not {len(results)}")
    return _response(results[0])
