"""Pure translations between the neutral model and the Messages wire (no I/O).

Calls are an assistant message's ``tool_use`` blocks (several in parallel); the answer is one
user message whose content starts with a ``tool_result`` block per ``tool_use``, in their
order (the API refuses other content before them, and any ``tool_use`` left unanswered).
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
    ToolChoice,
    ToolResult,
    UsageError,
    WireFormatError,
)
from toolbridge.plugin import CallRecord, PendingCalls, PendingRecords, read_arguments, reading
from toolbridge.runtime import output_text

from .wire import DIALECT, MAX_RESULT_CHARS

__all__ = [
    "MessagesCorrelation",
    "assistant_message_of",
    "content_blocks",
    "document_block",
    "read_calls",
    "read_records",
    "render_tool_choice",
    "result_block",
    "tool_result_content",
    "write_records",
    "write_results",
]

_DATA_URL = re.compile(r"^data:(image/(?:jpeg|png|gif|webp));base64,(.*)$", re.DOTALL)


class MessagesCorrelation(Correlation):
    """What answering a call needs: its ``tool_use`` id, and where its message sits."""

    tool_use_id: str
    position: int | None = None
    """Index of the assistant message in the conversation's ``messages``, when known."""


def render_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    """``{"type": "auto" | "any" | "none"}`` or ``{"type": "tool", "name": ...}``."""
    if choice.mode == "tool":
        return {"type": "tool", "name": choice.tool}
    return {"type": "any" if choice.mode == "required" else choice.mode}


# ---------------------------------------------------------------------- pending calls
def assistant_message_of(payload: Mapping[str, Any]) -> tuple[Mapping[str, Any], str, int | None]:
    """The assistant message of ``payload``, its field path, and its position (if known).

    Accepts a ``message`` response (``messages.create``), an assistant message
    ``{"role": "assistant", "content": [...]}``, or a conversation ``{"messages": [...]}``
    ending with the assistant message.
    """
    if "messages" in payload and "role" not in payload:
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
    if payload.get("type") in ("message_start", "content_block_start", "content_block_delta",
                               "message_delta", "message_stop"):
        raise WireFormatError(DIALECT, "type", "a lone stream event is not a payload: "
                              "assemble the stream (toolbridge_anthropic_messages.stream) "
                              "and pass the message", payload)
    if "content" in payload or "role" in payload:
        if payload.get("role", "assistant") != "assistant":
            raise WireFormatError(DIALECT, "role", "not an assistant message", payload)
        return payload, "", None
    raise WireFormatError(DIALECT, "content", "missing: expected a message, an assistant "
                          "message or {\"messages\": [...]}", payload)


def _text(value: Any, field: str, body: Any) -> str:
    if not isinstance(value, str) or not value:
        raise WireFormatError(DIALECT, field, "missing or not a non-empty string", body)
    return value


def read_calls(payload: Mapping[str, Any], conversation: str | None = None) -> PendingCalls:
    """The ``tool_use`` blocks of the assistant message (other blocks are not asks).

    With ``conversation`` calls are keyed ``(conversation, turn, tool_use_id)`` in the result
    store, the turn being the assistant message's position in ``{"messages": [...]}``, or the
    message's ``id``.
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
    correlate = form.later(MessagesCorrelation.trusted)  # for records: made with the ToolCall
    message, at, position = assistant_message_of(payload)
    turn = ""
    if conversation is not None:
        message_id = message.get("id") if position is None else None
        turn = str(position) if position is not None else (
            message_id if isinstance(message_id, str) else "")
        if not turn:
            raise UsageError(f"{DIALECT}: conversation={conversation!r} needs to know which "
                             "turn the calls belong to: pass the message (its id) or the "
                             "conversation {\"messages\": [...]} (the assistant message last)")
    content = message.get("content")
    if isinstance(content, str):
        return pending((), reason="the assistant message is text only")
    if not isinstance(content, list):
        raise WireFormatError(DIALECT, f"{at}content", "missing or not a list", payload)
    calls: list[Any] = []
    for i, block in enumerate(content):
        # Exact types first (JSON gives dicts and strs: the ABC checks are slow per block); a
        # field path is formatted only for its error.
        if type(block) is not dict and not isinstance(block, Mapping):
            raise WireFormatError(DIALECT, f"{at}content[{i}]", "not an object", payload)
        if block.get("type") != "tool_use":
            continue  # text, thinking, server tools (the API runs those itself)
        call_id, name = block.get("id"), block.get("name")
        if type(call_id) is not str or type(name) is not str or not call_id or not name:
            call_id = _text(call_id, f"{at}content[{i}].id", payload)
            name = _text(name, f"{at}content[{i}].name", payload)
        arguments, raw, error = read_arguments(block.get("input"), what="input")
        calls.append(make(
            id=call_id, name=name, arguments=arguments, raw_arguments=raw,
            argument_error=error, dialect=DIALECT, conversation=conversation or "", turn=turn,
            correlation=correlate(tool_use_id=call_id, position=position)))
    return pending(tuple(calls), (), "" if calls else
                   "the assistant message has no tool_use blocks")


# ---------------------------------------------------------------------- results
def _image(part: ImagePart) -> dict[str, Any]:
    found = _DATA_URL.match(part.url)
    if found:
        return {"type": "image", "source": {"type": "base64", "media_type": found.group(1),
                                            "data": found.group(2)}}
    return {"type": "image", "source": {"type": "url", "url": part.url}}


def document_block(part: DocumentPart) -> dict[str, Any]:
    """A ``document`` block: a base64 PDF, plain text, or a PDF URL (a text file at a URL,
    which the API cannot fetch, as its description)."""
    text = part.plain_text()
    source: dict[str, Any]
    if text is not None:
        source = {"type": "text", "media_type": "text/plain", "data": text}
    elif part.data is not None:
        source = {"type": "base64", "media_type": part.media_type, "data": part.data}
    elif part.media_type == "application/pdf":
        source = {"type": "url", "url": part.url}
    else:
        return {"type": "text", "text": part.as_text()}
    block: dict[str, Any] = {"type": "document", "source": source}
    if part.title:
        block["title"] = part.title
    return block


def content_blocks(content: Content) -> list[dict[str, Any]]:
    """A content result as ``text`` / ``image`` / ``document`` blocks (the Messages API's
    and Managed Agents' shared block shapes)."""
    return [{"type": "text", "text": p.text} if isinstance(p, TextPart) else
            _image(p) if isinstance(p, ImagePart) else document_block(p) for p in content.parts]


def tool_result_content(result: ToolResult) -> tuple[str | list[dict[str, Any]], bool]:
    """A result's ``content`` (its text, or text, image and document blocks) and whether it
    is an error (``is_error``): a failure's message, or an output too long to send."""
    if not result.success:
        return result.error or "the tool failed", True
    output = result.output
    if isinstance(output, Content):
        return content_blocks(output), False
    text = output_text(output)
    if len(text) > MAX_RESULT_CHARS:
        return (f"{result.call.name} returned {len(text):,} characters; toolbridge sends at "
                f"most {MAX_RESULT_CHARS:,} per tool_result"), True
    return text, False


def result_block(result: ToolResult) -> dict[str, Any]:
    """``{"type": "tool_result", "tool_use_id", "content", "is_error"?}`` for one call."""
    content, error = tool_result_content(result)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call.id,
                             "content": content}
    if error:
        block["is_error"] = True
    return block


def write_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """``{"messages": [{"role": "user", "content": [tool_result, ...]}]}``: the one user
    message to append after the assistant message, its results in the calls' order."""
    return {"messages": [{"role": "user", "content": [result_block(r) for r in results]}]}


def write_records(records: Sequence[CallRecord]) -> dict[str, Any]:
    """`write_results` of answered records (`Dialect.write_records`)."""
    blocks = []
    for record in records:
        text = record.sent_text()
        if text is not None and len(text) <= MAX_RESULT_CHARS:
            blocks.append({"type": "tool_result", "tool_use_id": record.id,
                           "content": text})
            continue
        result = record.result()
        assert result is not None  # only answered records are written
        blocks.append(result_block(result))
    return {"messages": [{"role": "user", "content": blocks}]}
