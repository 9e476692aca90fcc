"""A ``messages.create(stream=True)`` event stream assembled into one message (pure, no I/O).

Events: ``message_start`` (the message, content empty), per block ``content_block_start``,
``content_block_delta`` (``text_delta``, ``input_json_delta`` pieces of a ``tool_use``'s
input, ``thinking_delta``, ``signature_delta``, ``citations_delta``) and
``content_block_stop``, then ``message_delta`` (``stop_reason``, usage) and ``message_stop``;
``ping`` anywhere; an ``error`` event ends the stream with the API's error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from toolbridge import BackendError, WireFormatError
from toolbridge.http import SSEDecoder

from .wire import DIALECT

__all__ = ["MessageAssembler", "MessageEvents", "assemble_events"]

_TEXT_DELTAS = {"text_delta": "text", "thinking_delta": "thinking",
                "signature_delta": "signature"}


class MessageEvents:
    """A `toolbridge.http.Reader` of Messages streams: each frame's data is one JSON event;
    ``message_stop`` ends the stream; a stream that drops ends quietly (the assembler is then
    not `MessageAssembler.finished`)."""

    def __init__(self) -> None:
        self.decoder = SSEDecoder()
        self.finished = False

    def feed(self, line: str) -> Any:
        frame = self.decoder.feed(line)
        if frame is None:
            return None
        try:
            event = json.loads(frame[1])
        except ValueError:
            raise WireFormatError(DIALECT, "<event>", "event data is not JSON",
                                  frame[1][:2000]) from None
        if isinstance(event, Mapping) and event.get("type") == "message_stop":
            self.finished = True
        return event

    def ended(self, broke: Exception | None) -> None:
        return None


class MessageAssembler:
    """Feed events as they arrive; `message` is the assembled ``message``."""

    def __init__(self) -> None:
        self._message: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self.finished = False
        self.count = 0

    def feed(self, event: Any) -> None:
        """Add one event; `WireFormatError` names a malformed field, `BackendError` carries
        an ``error`` event's message."""
        at = f"events[{self.count}]"
        self.count += 1
        if not isinstance(event, Mapping) or not isinstance(event.get("type"), str):
            raise WireFormatError(DIALECT, f"{at}.type", "missing or not a string", event)
        kind = event["type"]
        if kind == "error":
            error = event.get("error")
            found: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
            kind, text = found.get("type", "an error"), found.get("message", "")
            raise BackendError(f"{DIALECT}: the stream ended with {kind}: {text}")
        if kind == "message_start":
            message = event.get("message")
            if not isinstance(message, Mapping):
                raise WireFormatError(DIALECT, f"{at}.message", "missing or not an object",
                                      event)
            self._message = {**message, "content": []}
        elif kind in ("content_block_start", "content_block_delta", "content_block_stop"):
            self._block_event(kind, event, at)
        elif kind == "message_delta":
            delta = event.get("delta")
            if not isinstance(delta, Mapping):
                raise WireFormatError(DIALECT, f"{at}.delta", "missing or not an object", event)
            self._message.update({k: v for k, v in delta.items()
                                  if k in ("stop_reason", "stop_sequence")})
            if isinstance(event.get("usage"), Mapping):
                self._message["usage"] = {**(self._message.get("usage") or {}),
                                          **event["usage"]}
        elif kind == "message_stop":
            self.finished = True

    def _block_event(self, kind: str, event: Mapping[str, Any], at: str) -> None:
        index = event.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise WireFormatError(DIALECT, f"{at}.index", "missing or not an integer", event)
        if kind == "content_block_start":
            block = event.get("content_block")
            if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
                raise WireFormatError(DIALECT, f"{at}.content_block", "missing or not a block",
                                      event)
            self._blocks[index] = dict(block)
            return
        block = self._blocks.get(index)
        if block is None:
            raise WireFormatError(DIALECT, f"{at}.index", f"no block {index} was started",
                                  event)
        if kind == "content_block_stop":
            return
        delta = event.get("delta")
        if not isinstance(delta, Mapping):
            raise WireFormatError(DIALECT, f"{at}.delta", "missing or not an object", event)
        delta_type = delta.get("type")
        if delta_type == "input_json_delta":
            piece = delta.get("partial_json")
            if not isinstance(piece, str):
                raise WireFormatError(DIALECT, f"{at}.delta.partial_json", "not a string",
                                      event)
            self._json.setdefault(index, []).append(piece)
        elif delta_type in _TEXT_DELTAS:
            field = _TEXT_DELTAS[delta_type]
            piece = delta.get(field)
            if not isinstance(piece, str):
                raise WireFormatError(DIALECT, f"{at}.delta.{field}", "not a string", event)
            block[field] = block.get(field, "") + piece
        elif delta_type == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))

    def message(self) -> dict[str, Any]:
        """The assembled message. A ``tool_use`` input whose JSON pieces do not parse to an
        object stays their text (`translate.read_calls` then gives the call its error)."""
        content = []
        for index, block in sorted(self._blocks.items()):
            if index in self._json:
                text = "".join(self._json[index])
                try:
                    block = {**block, "input": json.loads(text) if text else {}}
                except ValueError:
                    block = {**block, "input": text}
            content.append(block)
        return {**self._message, "content": content}


def assemble_events(events: Iterable[Any]) -> dict[str, Any]:
    """One message from a stream's events (see `MessageAssembler`)."""
    assembler = MessageAssembler()
    for event in events:
        assembler.feed(event)
    return assembler.message()
