"""Pure translations between the neutral model and the Responses wire (no I/O)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from toolbridge import (
    Content,
    Correlation,
    DocumentPart,
    ImagePart,
    TextPart,
    ToolCall,
    ToolChoice,
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
    lazy_module,
    read_arguments,
    reading,
)
from toolbridge.runtime import output_is_json, output_text

from .wire import CLIENT_ITEM_TYPES, DIALECT, MAX_OUTPUT_CHARS

if TYPE_CHECKING:
    from toolbridge import schema
else:
    schema = lazy_module("toolbridge.schema")  # the schema engine: on first use

__all__ = [
    "ResponsesCorrelation",
    "continuation",
    "error_output",
    "output_to_wire",
    "read_calls",
    "render_tool",
    "render_tool_choice",
    "render_tools",
    "response_of",
    "write_results",
]


class ResponsesCorrelation(Correlation):
    """What answering a call needs: the response, the conversation (if any), the call."""

    response_id: str
    call_id: str
    conversation_id: str | None = None
    """Set when the response belongs to a conversation: the results continue it."""
    namespace: str | None = None
    """The call's ``namespace``, for namespaced (or deferred) functions."""
    item_id: str | None = None
    """The ``fc_...`` item id (never sent back as the output's ``id``)."""


class _Asked(NamedTuple):
    """`ResponsesCorrelation`'s fields, as a record holds them (`read_records`): the writer
    reads them as they are; called, they are the correlation (`toolbridge.plugin.CallRecord`
    calls it when the record's `ToolCall` is made)."""

    response_id: str
    call_id: str
    conversation_id: str | None
    namespace: str | None
    item_id: str | None

    def __call__(self) -> ResponsesCorrelation:
        return ResponsesCorrelation.trusted(
            response_id=self.response_id, call_id=self.call_id,
            conversation_id=self.conversation_id, namespace=self.namespace,
            item_id=self.item_id)


_new_asked = tuple.__new__  # _Asked(...) without its Python __new__
_MISSING: Any = object()

# Keys a rendered function owns; vendor_extras may add the others (allowed_callers, async).
_OWN = frozenset({"type", "name", "description", "parameters", "strict", "defer_loading",
                  "output_schema", "function", "namespace"})
_TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


# ---------------------------------------------------------------------- definitions
def render_tool(tool: ToolDefinition, *, policy: Any = "describe"
                ) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """One flat function tool, and the schema losses of its strict conversion.

    ``strict`` is always sent: the Responses API treats an absent ``strict`` as true.
    """
    imported = _imported(tool)
    if imported is not None:
        return imported, ()
    wire: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description:
        wire["description"] = tool.description
    from toolbridge.schema import strict_parameters  # the schema engine: on first use

    sent = strict_parameters(tool.parameters, tool.strict, policy=policy)
    wire["parameters"], wire["strict"] = sent.schema, sent.strict
    if tool.defer_loading:
        wire["defer_loading"] = True
    if tool.returns is not None and output_is_json(tool.returns):
        # Describes the JSON a string output encodes (function_tool_param.py); a handler's
        # string is sent as it is, not JSON-encoded, so a schema admitting one would be wrong.
        wire["output_schema"] = tool.returns
    extras = tool.vendor_extras.get(DIALECT, {})
    wire.update({k: v for k, v in extras.items() if k not in _OWN})
    return wire, sent.losses


def _imported(tool: ToolDefinition) -> dict[str, Any] | None:
    """The original definition of a tool read by `read_tools`, while it is unchanged."""
    original = tool.vendor_extras.get(DIALECT, {}).get("function")
    if not isinstance(original, Mapping):
        return None
    same = (original.get("name") == tool.name
            and (original.get("description") or "") == tool.description
            and original.get("strict") == tool.strict
            and bool(original.get("defer_loading", False)) == tool.defer_loading
            and original.get("output_schema") == tool.returns
            and (original.get("parameters") or tool.parameters) == tool.parameters)
    return dict(original) if same else None


def render_tools(tools: Sequence[ToolDefinition], *, policy: Any = "describe") -> RenderedTools:
    """The ``tools`` list: functions (grouped back into their namespaces), plus one
    ``tool_search`` entry when any function is deferred."""
    rendered = RenderedTools.each(tools, lambda tool: render_tool(tool, policy=policy))
    definitions: list[dict[str, Any]] = []
    namespaces: dict[str, dict[str, Any]] = {}
    for tool, wire in zip(tools, rendered.definitions, strict=True):
        space = tool.vendor_extras.get(DIALECT, {}).get("namespace")
        if not isinstance(space, Mapping) or not isinstance(space.get("name"), str):
            definitions.append(wire)
            continue
        group = namespaces.get(space["name"])
        if group is None:
            group = namespaces[space["name"]] = {
                "type": "namespace", "name": space["name"],
                "description": str(space.get("description") or ""), "tools": []}
            definitions.append(group)
        group["tools"].append(wire)
    if any(t.defer_loading for t in tools):
        # Deferred functions stay hidden unless tool search is on (lib/_tools.py).
        definitions.append({"type": "tool_search"})
    return RenderedTools(definitions, rendered.losses)


def render_tool_choice(choice: ToolChoice) -> Any:
    """``"auto"``, ``"none"``, ``"required"`` or ``{"type": "function", "name": ...}``."""
    if choice.mode == "tool":
        return {"type": "function", "name": choice.tool}
    return choice.mode


# ---------------------------------------------------------------------- pending calls
def response_of(payload: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """The response object in ``payload`` and the field prefix naming it in errors.

    Accepts a response (``POST /responses``, ``GET /responses/{id}``, a stream gathered by the
    client) or a terminal stream event (``response.completed`` carries the whole response).
    """
    kind = payload.get("type")
    if kind in _TERMINAL_EVENTS:
        response = payload.get("response")
        if not isinstance(response, Mapping):
            raise WireFormatError(DIALECT, "response", "missing or not an object", payload)
        return response, "response."
    if isinstance(kind, str) and (kind.startswith("response.") or kind == "error"):
        raise WireFormatError(
            DIALECT, "type",
            f"a lone {kind!r} event is not a payload: gather the stream (the id from "
            "response.created, the calls from response.output_item.done, the end from "
            "response.completed) and pass the response, or pass the response.completed event",
            payload)
    if kind == "function_call":
        raise WireFormatError(DIALECT, "type", "a function_call item alone has no response "
                              "id; pass the response whose output holds it", payload)
    if "output" not in payload and payload.get("object") != "response":
        raise WireFormatError(DIALECT, "output",
                              "missing: expected a response object or a response.completed "
                              "event", payload)
    return payload, ""


def _text(value: Any, field: str, body: Any) -> str:
    if not isinstance(value, str) or not value:
        raise WireFormatError(DIALECT, field, "missing or not a non-empty string", body)
    return value


def _conversation(value: Any, field: str, body: Any) -> str | None:
    """The id of a response's ``conversation`` (``{"id": ...}``, or the request's string)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return _text(value.get("id"), f"{field}.id", body)
    return _text(value, field, body)


def read_calls(payload: Mapping[str, Any], conversation: str | None = None) -> PendingCalls:
    """The ``function_call`` items of a finished response's ``output``.

    A response still ``queued`` or ``in_progress`` has no pending calls yet (its items are not
    final), nor has one that ``failed``, was ``cancelled`` or is ``incomplete``. Client-side
    items other than functions (``custom_tool_call``, ``mcp_approval_request``, ...) are
    returned unhandled. Store keys: ``(conversation, "", call_id)`` for a response of a
    conversation, else ``(conversation or response id, response id, call_id)``, where
    ``conversation`` (the caller's) keys the store when the response names none.
    """
    pending: PendingCalls = _read(payload, conversation, False)
    return pending


def read_records(payload: Mapping[str, Any], conversation: str | None = None) -> PendingRecords:
    """`read_calls`, the calls as the runtime's records (`Dialect.read_records`): each keeps
    its correlation's fields (the writer reads them), the correlation made only when its
    `ToolCall` is."""
    pending: PendingRecords = _read(payload, conversation, True)
    return pending


def _read(payload: Mapping[str, Any], conversation: str | None, records: bool) -> Any:
    pending, make = reading(records)
    response, at = response_of(payload)
    response_id = _text(response.get("id"), f"{at}id", payload)
    status = response.get("status")
    if status is not None and not isinstance(status, str):
        raise WireFormatError(DIALECT, f"{at}status", "not a string", payload)
    output = response.get("output")
    if output is None and status in (None, "queued", "in_progress"):
        return pending((), reason=f"the response's status is {status!r}: it has no output "
                            "yet")
    if not isinstance(output, list):
        raise WireFormatError(DIALECT, f"{at}output", "missing or not a list", payload)
    conversation_id = _conversation(response.get("conversation"), f"{at}conversation", payload)
    if conversation is not None and conversation_id not in (None, conversation):
        raise UsageError(f"{DIALECT}: response {response_id} belongs to conversation "
                         f"{conversation_id}, not {conversation!r}")
    key = conversation_id or conversation or response_id
    # In a conversation, calls are keyed by the conversation and their (unique) call id alone:
    # after a restart its items still list a pending call, but not the response that asked.
    turn = "" if conversation_id else response_id
    calls: list[Any] = []
    others: list[Mapping[str, Any]] = []
    for i, item in enumerate(output):
        # Exact types first (JSON gives dicts and strs: the ABC checks are slow per item);
        # an error's field path is formatted only when there is an error.
        if type(item) is not dict and not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, f"{at}output[{i}]", "not an object", payload)
        kind = item.get("type")
        if type(kind) is not str and not isinstance(kind, str):
            raise WireFormatError(DIALECT, f"{at}output[{i}].type", "missing or not a string",
                                  payload)
        if kind in CLIENT_ITEM_TYPES:
            others.append(item)
        if kind != "function_call":
            continue
        call_id, name = item.get("call_id"), item.get("name")
        if type(call_id) is not str or type(name) is not str or not call_id or not name:
            call_id = _text(call_id, f"{at}output[{i}].call_id", payload)
            name = _text(name, f"{at}output[{i}].name", payload)
        given = item.get("arguments", _MISSING)
        if given is _MISSING:
            raise WireFormatError(DIALECT, f"{at}output[{i}].arguments", "missing", payload)
        namespace, item_id = item.get("namespace"), item.get("id")
        if not (namespace is None or type(namespace) is str) or not (
                item_id is None or type(item_id) is str):
            for field, value in (("namespace", namespace), ("id", item_id)):
                if value is not None and not isinstance(value, str):
                    raise WireFormatError(DIALECT, f"{at}output[{i}].{field}", "not a string",
                                          payload)
        arguments, raw, error = read_arguments(given)
        calls.append(make(
            id=call_id, name=name, arguments=arguments, raw_arguments=raw,
            argument_error=error, dialect=DIALECT, conversation=key, turn=turn,
            # for records, the correlation's fields: made into it with the ToolCall, if ever
            correlation=_new_asked(_Asked, (response_id, call_id, conversation_id, namespace,
                                            item_id)) if records
            else ResponsesCorrelation.trusted(
                response_id=response_id, call_id=call_id, conversation_id=conversation_id,
                namespace=namespace, item_id=item_id)))
    if status not in (None, "completed"):
        return pending((), tuple(others), "" if others else (
            f"the response's status is {status!r}: its calls are not pending"))
    if not calls and not others:
        return pending((), reason=f"the response's status is {status!r}: its output holds "
                       "no function_call")
    return pending(tuple(calls), tuple(others))


# ---------------------------------------------------------------------- results
def error_output(message: str) -> str:
    """A failed call's output: ``{"error": "<message>"}`` as JSON text (no error flag here)."""
    return json.dumps({"error": message}, ensure_ascii=False)


def input_file(part: DocumentPart) -> dict[str, str]:
    """An ``input_file`` part: the bytes as a ``data:`` URL with a file name, or the URL."""
    if part.url is not None:
        wire = {"type": "input_file", "file_url": part.url}
        if part.title:
            wire["filename"] = part.title
        return wire
    name = part.title or ("document.pdf" if part.media_type == "application/pdf"
                          else "document.txt")
    return {"type": "input_file", "filename": name,
            "file_data": f"data:{part.media_type};base64,{part.data}"}


def output_to_wire(result: ToolResult) -> str | list[dict[str, str]]:
    """A result's ``output``: text, or ``input_text`` / ``input_image`` / ``input_file``
    parts."""
    if not result.success:
        return error_output(result.error or "the tool failed")
    if isinstance(result.output, Content):
        return [{"type": "input_text", "text": p.text} if isinstance(p, TextPart) else
                {"type": "input_image", "image_url": p.url} if isinstance(p, ImagePart) else
                input_file(p) for p in result.output.parts]
    text = output_text(result.output)
    if len(text) > MAX_OUTPUT_CHARS:
        return error_output(f"{result.call.name} returned {len(text):,} characters; the "
                            f"Responses API accepts at most {MAX_OUTPUT_CHARS:,} per output")
    return text


def continuation(call: ToolCall) -> dict[str, str]:
    """``{"conversation": id}`` for a call of a conversation, else ``{"previous_response_id"}``."""
    return _continuing(call.correlation, call.id, call.turn)


def _continuing(correlation: Any, call_id: str, turn: str) -> dict[str, str]:
    if type(correlation) is _Asked or isinstance(correlation, ResponsesCorrelation):
        if correlation.conversation_id:
            return {"conversation": correlation.conversation_id}
        return {"previous_response_id": correlation.response_id}
    if not turn:
        raise UsageError(f"{DIALECT}: call {call_id!r} has no response id; read calls with "
                         "read_calls so the continuation can be named")
    return {"previous_response_id": turn}


def write_records(records: Sequence[CallRecord]) -> dict[str, Any]:
    """`write_results` of answered records (`Dialect.write_records`)."""
    if not records:
        return {"input": []}
    turns = {(r.conversation, r.turn) for r in records}
    if len(turns) > 1:
        raise UsageError(f"{DIALECT}: results of several responses cannot continue one "
                         f"request (responses: {sorted(t for _, t in turns)})")
    items: list[dict[str, Any]] = []
    for record in records:
        text = record.sent_text()
        if text is not None and len(text) <= MAX_OUTPUT_CHARS:
            items.append({"type": "function_call_output", "call_id": record.id,
                          "output": text})
            continue
        result = record.result()
        assert result is not None  # only answered records are written
        items.append({"type": "function_call_output", "call_id": record.id,
                      "output": output_to_wire(result)})
    first = records[0]
    return {**_continuing(first.correlation, first.id, first.turn), "input": items}


def write_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """The body fragment continuing the response: ``input`` (one ``function_call_output``
    per call) and ``previous_response_id`` or ``conversation``.

    Model, tools and instructions, which a continuing request also needs, are the caller's.
    """
    if not results:
        return {"input": []}
    turns = {(r.call.conversation, r.call.turn) for r in results}
    if len(turns) > 1:
        raise UsageError(f"{DIALECT}: results of several responses cannot continue one "
                         f"request (responses: {sorted(t for _, t in turns)})")
    items = [{"type": "function_call_output", "call_id": r.call.id, "output": output_to_wire(r)}
             for r in results]
    return {**continuation(results[0].call), "input": items}


def decode_arguments(arguments: dict[str, Any], tool: ToolDefinition) -> dict[str, Any]:
    """Undo strict mode (`toolbridge.schema.decode_strict_arguments`): the decode of every
    call, on the arguments alone."""
    return schema.decode_strict_arguments(tool.parameters, tool.strict, arguments)
