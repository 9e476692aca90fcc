"""Server-sent events framing, for adapter clients that read event streams."""

from __future__ import annotations

__all__ = ["SSEDecoder"]


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
