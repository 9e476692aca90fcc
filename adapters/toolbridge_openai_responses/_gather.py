"""A Responses event stream gathered into the response it describes (pure, no I/O).

The response id comes from ``response.created`` (or ``.queued`` / ``.in_progress``), each
finished item from ``response.output_item.done``, the end from ``response.completed`` (or
``.incomplete`` / ``.failed``). Events are de-duplicated by ``sequence_number``, so a
re-attached or duplicated stream feeds the same gatherer safely.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolbridge import BackendError, WireFormatError

from .wire import DIALECT

__all__ = ["StreamGatherer"]

_SNAPSHOTS = ("response.created", "response.queued", "response.in_progress")
_TERMINAL = ("response.completed", "response.incomplete", "response.failed",
             "response.cancelled")


class StreamGatherer:
    """Feed events in order; `result` is the response once `done`."""

    def __init__(self) -> None:
        self.response_id: str | None = None
        self.last_sequence = -1
        """``sequence_number`` of the last event taken: re-attach with ``starting_after``."""
        self.background = False
        self.snapshot: dict[str, Any] | None = None
        self.final: dict[str, Any] | None = None
        self.items: dict[int, dict[str, Any]] = {}

    @property
    def done(self) -> bool:
        return self.final is not None

    def feed(self, event: Any) -> bool:
        """Take one event; False when it repeats one already taken."""
        if not isinstance(event, Mapping):
            raise WireFormatError(DIALECT, "<event>", "not an object", event)
        sequence = event.get("sequence_number")
        if isinstance(sequence, int) and not isinstance(sequence, bool):
            if sequence <= self.last_sequence:
                return False
            self.last_sequence = sequence
        kind = event.get("type")
        if kind == "error" or (kind is None and event.get("error")):
            message = event.get("message") or event.get("error")
            raise BackendError(f"{DIALECT}: error event in the stream: {message}",
                               body=dict(event))
        if kind in _SNAPSHOTS or kind in _TERMINAL:
            response = event.get("response")
            if not isinstance(response, Mapping) or not isinstance(response.get("id"), str):
                raise WireFormatError(DIALECT, "response.id", f"{kind} without a response id",
                                      event)
            self.response_id = self.response_id or response["id"]
            self.background = self.background or response.get("background") is True
            if kind in _TERMINAL:
                self.final = dict(response)
            else:
                self.snapshot = dict(response)
        elif kind == "response.output_item.done":
            index, item = event.get("output_index"), event.get("item")
            if not isinstance(index, int) or not isinstance(item, Mapping):
                raise WireFormatError(DIALECT, "output_index", "output_item.done without an "
                                      "output_index and item", event)
            self.items[index] = dict(item)
        return True

    def result(self) -> dict[str, Any]:
        """The final response; a null or empty ``output`` is refilled from the items seen
        (as the SDK's accumulator does)."""
        if self.final is None:
            raise BackendError(f"{DIALECT}: the stream of {self.response_id} has not ended")
        response = dict(self.final)
        if not response.get("output") and self.items:
            response["output"] = [self.items[i] for i in sorted(self.items)]
        return response
