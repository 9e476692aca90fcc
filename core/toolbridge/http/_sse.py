"""Server-sent events framing, for adapter clients that read event streams."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JsonEvents", "SSEDecoder"]


class SSEDecoder:
    """Feed an event stream line by line; a blank line ends a frame.

    `feed` returns ``(event name, data)`` when a frame ends (the name is ``""`` when the
    stream sent none; multi-line data is joined with newlines), else ``None``. Comment lines
    (``:``) and unknown fields are ignored, as the SSE specification says. Interpreting the
    data (JSON, ``[DONE]``, error events) is the dialect's business.
    """

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> tuple[str, str] | None:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            frame = (self._event, "\n".join(self._data))
            self._event, self._data = "", []
            return frame
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        return None


class JsonEvents:
    """A `toolbridge.http.Reader` of OpenAI-style streams: each frame's data is one JSON
    value, ``[DONE]`` ends the stream, a stream that drops ends quietly. Data that is not JSON
    is a `WireFormatError` of ``dialect`` naming ``what`` (``"<event>"``, ``"<chunk>"``)."""

    def __init__(self, dialect: str, what: str = "<event>") -> None:
        self.dialect = dialect
        self.what = what
        self.decoder = SSEDecoder()
        self.finished = False

    def feed(self, line: str) -> Any:
        frame = self.decoder.feed(line)
        if frame is None:
            return None
        if frame[1].startswith("[DONE]"):
            self.finished = True
            return None
        try:
            return json.loads(frame[1])
        except ValueError:
            from ..errors import WireFormatError

            raise WireFormatError(self.dialect, self.what, f"{self.what.strip('<>')} data is "
                                  "not JSON", frame[1][:2000]) from None

    def ended(self, broke: Exception | None) -> None:
        return None
