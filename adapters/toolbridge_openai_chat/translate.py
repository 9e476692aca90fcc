"""Pure translations between the neutral model and the Chat Completions wire (no I/O)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolbridge import (
    Content,
    Correlation,
    TextPart,
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
from toolbridge.runtime import output_text

from .wire import DIALECT, MAX_CONTENT_CHARS

if TYPE_CHECKING:
    from toolbridge import schema
else:
    schema = lazy_module("toolbridge.schema")  # the schema engine: on first use

__all__ = [
    "ChatCorrelation",
    "assistant_message_of",
    "error_output",
    "read_calls",
    "render_tool",
    "render_tool_choice",
    "render_tools",
    "tool_message",
    "write_results",
]


class ChatCorrelation(Correlation):
    """What answering a call needs: its id, and where its assistant message sits."""

    tool_call_id: str
    position: int | None = None
    """Index of the assistant message in the conversation's ``messages``, when known."""


# ---------------------------------------------------------------------- definitions
def render_tool(tool: ToolDefinition, *, policy: Any = "describe"
                ) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """``{"type": "function", "function": {...}}``, and the losses of its strict conversion."""
    imported = tool.vendor_extras.get(DIALECT, {}).get("function")
    if isinstance(imported, Mapping) and (
            imported.get("name") == tool.name
            and (imported.get("description") or "") == tool.description
            and imported.get("strict") == tool.strict
            and (imported.get("parameters") or tool.parameters) == tool.parameters):
        return {"type": "function", "function": dict(imported)}, ()
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    from toolbridge.schema import strict_parameters  # the schema engine: on first use

    sent = strict_parameters(tool.parameters, tool.strict, policy=policy)
    function["parameters"] = sent.schema
    if sent.strict or tool.strict is False:  # "strict when lossless" that was not: left out
        function["strict"] = sent.strict
    return {"type": "function", "function": function}, sent.losses


def render_tools(tools: Sequence[ToolDefinition], *, policy: Any = "describe") -> RenderedTools:
    """Every tool nested under ``function``, with the losses per tool name."""
    return RenderedTools.each(tools, lambda tool: render_tool(tool, policy=policy))


def render_tool_choice(choice: ToolChoice) -> Any:
    """``"auto"``, ``"none"``, ``"required"`` or ``{"type": "function", "function": {name}}``."""
    if choice.mode == "tool":
        return {"type": "function", "function": {"name": choice.tool}}
    return choice.mode


# ---------------------------------------------------------------------- pending calls
def assistant_message_of(payload: Mapping[str, Any]) -> tuple[Mapping[str, Any], str, int | None]:
    """The assistant message of ``payload``, its field path, and its position (if known).

    Accepts a completion (the first choice: the others are alternatives), an assistant
    message, or a conversation ``{"messages": [...]}`` ending with the assistant message.
    """
    if payload.get("object") == "chat.completion.chunk":
        raise WireFormatError(DIALECT, "object", "a lone chunk is not a payload: assemble the "
                              "stream's chunks (toolbridge_openai_chat.stream.assemble_chunks) "
                              "and pass the completion", payload)
    if "choices" in payload:
        choices = payload["choices"]
        if not isinstance(choices, list) or not choices:
            raise WireFormatError(DIALECT, "choices", "not a non-empty list", payload)
        choice = choices[0]
        if not isinstance(choice, Mapping):
            raise WireFormatError(DIALECT, "choices[0]", "not an object", payload)
        message = choice.get("message")
        if not isinstance(message, Mapping):
            raise WireFormatError(DIALECT, "choices[0].message", "missing or not an object",
                                  payload)
        return message, "choices[0].message.", None
    if "messages" in payload:
        messages = payload["messages"]
        if not isinstance(messages, list) or not messages:
            raise WireFormatError(DIALECT, "messages", "not a non-empty list", payload)
        position = len(messages) - 1
        message = messages[position]
        at = f"messages[{position}]"
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            raise WireFormatError(DIALECT, f"{at}.role", "the last message is not the "
                                  "assistant's: nothing is pending", payload)
        return message, f"{at}.", position
    if "role" in payload or "tool_calls" in payload:
        if payload.get("role", "assistant") != "assistant":
            raise WireFormatError(DIALECT, "role", "not an assistant message", payload)
        return payload, "", None
    raise WireFormatError(DIALECT, "choices", "missing: expected a chat.completion, an "
                          "assistant message or {\"messages\": [...]}", payload)


def _completion_id(payload: Mapping[str, Any]) -> str:
    """A ``chat.completion``'s ``id`` (unique per completion, even where call ids are not)."""
    completion_id = payload.get("id") if "choices" in payload else None
    return completion_id if isinstance(completion_id, str) else ""


def _text(value: Any, field: str, body: Any) -> str:
    if not isinstance(value, str) or not value:
        raise WireFormatError(DIALECT, field, "missing or not a non-empty string", body)
    return value


def read_calls(payload: Mapping[str, Any], conversation: str | None = None) -> PendingCalls:
    """The ``tool_calls`` of the assistant message; custom tool calls are left unhandled.

    With ``conversation`` calls are keyed ``(conversation, turn, tool_call_id)`` in the
    result store, the turn being the assistant message's position when ``payload`` is the
    conversation ``{"messages": [...]}``, or the completion's ``id`` when it is a
    ``chat.completion``; without it nothing identifies the conversation and nothing is stored.
    """
    pending: PendingCalls = _read(payload, conversation, False)
    return pending


def read_records(payload: Mapping[str, Any], conversation: str | None = None) -> PendingRecords:
    """`read_calls`, the calls as the runtime's records (`Dialect.read_records`); each
    call's correlation is made only when its `ToolCall` is."""
    pending: PendingRecords = _read(payload, conversation, True)
    return pending


def _read(payload: Mapping[str, Any], conversation: str | None, records: bool) -> Any:
    form = reading(records)
    pending, make = form
    correlate = form.later(ChatCorrelation.trusted)  # for records: made with the ToolCall
    message, at, position = assistant_message_of(payload)
    turn = ""
    if conversation is not None:
        turn = str(position) if position is not None else _completion_id(payload)
        if not turn:
            raise UsageError(f"{DIALECT}: conversation={conversation!r} needs to know which "
                             "turn the calls belong to: pass the chat.completion (its id) or "
                             "the conversation {\"messages\": [...]} (the assistant message "
                             "last, its position), not a bare message")
    tool_calls = message.get("tool_calls")
    if tool_calls is None:
        return pending((), reason="the assistant message has no tool_calls")
    if not isinstance(tool_calls, list):
        raise WireFormatError(DIALECT, f"{at}tool_calls", "not a list", payload)
    calls: list[Any] = []
    others: list[Mapping[str, Any]] = []
    for i, item in enumerate(tool_calls):
        # Exact types first (JSON gives dicts and strs: the ABC checks are slow per call); a
        # field path is formatted only for its error.
        if type(item) is not dict and not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, f"{at}tool_calls[{i}]", "not an object", payload)
        call_id = item.get("id")
        if type(call_id) is not str or not call_id:
            call_id = _text(call_id, f"{at}tool_calls[{i}].id", payload)
        kind = item.get("type", "function")
        if kind != "function":
            if not isinstance(kind, str):
                raise WireFormatError(DIALECT, f"{at}tool_calls[{i}].type", "not a string",
                                      payload)
            others.append(item)
            continue
        function = item.get("function")
        if type(function) is not dict and not isinstance(function, Mapping):
            raise WireFormatError(DIALECT, f"{at}tool_calls[{i}].function",
                                  "missing or not an object", payload)
        name = function.get("name")
        if type(name) is not str or not name:
            name = _text(name, f"{at}tool_calls[{i}].function.name", payload)
        arguments, raw, error = read_arguments(function.get("arguments"))
        calls.append(make(
            id=call_id, name=name, arguments=arguments, raw_arguments=raw,
            argument_error=error, dialect=DIALECT, conversation=conversation or "", turn=turn,
            correlation=correlate(tool_call_id=call_id, position=position)))
    return pending(tuple(calls), tuple(others), "" if calls or others else
                   "the assistant message's tool_calls is empty")


# ---------------------------------------------------------------------- results
def error_output(message: str) -> str:
    """A failed call's content: ``{"error": "<message>"}`` as JSON text (no error flag here)."""
    return json.dumps({"error": message}, ensure_ascii=False)


def _content(result: ToolResult) -> str | list[dict[str, str]]:
    if not result.success:
        return error_output(result.error or "the tool failed")
    output = result.output
    if isinstance(output, Content):
        if all(isinstance(p, TextPart) for p in output.parts):
            return [{"type": "text", "text": p.text} for p in output.parts
                    if isinstance(p, TextPart)]
        return output.as_text()  # tool messages take text only (no image parts)
    text = output_text(output)
    if len(text) > MAX_CONTENT_CHARS:
        return error_output(f"{result.call.name} returned {len(text):,} characters; a message "
                            f"holds at most {MAX_CONTENT_CHARS:,}")
    return text


def tool_message(result: ToolResult) -> dict[str, Any]:
    """``{"role": "tool", "tool_call_id", "content"}`` answering one call."""
    return {"role": "tool", "tool_call_id": result.call.id, "content": _content(result)}


def write_records(records: Sequence[CallRecord]) -> dict[str, Any]:
    """`write_results` of answered records (`Dialect.write_records`)."""
    messages = []
    for record in records:
        text = record.sent_text()
        if text is not None and len(text) <= MAX_CONTENT_CHARS:
            messages.append({"role": "tool", "tool_call_id": record.id, "content": text})
            continue
        result = record.result()
        assert result is not None  # only answered records are written
        messages.append(tool_message(result))
    return {"messages": messages}


def write_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """``{"messages": [tool message, ...]}``: append them after the assistant message."""
    return {"messages": [tool_message(r) for r in results]}


def decode_arguments(arguments: dict[str, Any], tool: ToolDefinition) -> dict[str, Any]:
    """Undo strict mode (`toolbridge.schema.decode_strict_arguments`): the decode of every
    call, on the arguments alone."""
    return schema.decode_strict_arguments(tool.parameters, tool.strict, arguments)
