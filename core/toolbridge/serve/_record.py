"""What the driver writes into a transcript for each call and result (once per call)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..model import ToolCall, ToolResult
from ..runtime import output_text

if TYPE_CHECKING:
    from ._settings import DriverSettings
    from ._transcript import Transcript

__all__ = ["KEEP", "Key", "Recorder", "remember"]

Key = tuple[str, str]
"""(turn, call id): a call of one conversation."""
KEEP = 1024
"""Calls remembered per conversation, submitted or recorded (a stale step older than that is
answered from the store again, and the backend refuses the duplicate)."""


def remember(keys: dict[Key, None], key: Key) -> None:
    """Add ``key`` to an ordered, bounded set (the oldest beyond `KEEP` are forgotten)."""
    keys[key] = None
    while len(keys) > KEEP:
        del keys[next(iter(keys))]


class Recorder:
    """The transcript's ``call`` and ``result`` entries and the progress report, once per call
    (a call answered again after a recovery, from the store, is not shown twice)."""

    __slots__ = ("recorded", "report", "transcript")

    def __init__(self, transcript: Transcript, settings: DriverSettings) -> None:
        self.transcript = transcript
        self.report = settings.on_answer
        self.recorded: dict[Key, None] = {}

    def seen(self, call: ToolCall) -> bool:
        return (call.turn, call.id) in self.recorded

    def call(self, call: ToolCall) -> None:
        if not self.transcript.keep or self.seen(call):
            return
        shown = call.raw_arguments if call.raw_arguments is not None else json.dumps(
            call.arguments, ensure_ascii=False, separators=(",", ":"), default=str)
        data: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
        if call.argument_error is not None:
            data["argument_error"] = call.argument_error
        self.transcript.add("call", f"{call.name}({shown})", data)

    def result(self, result: ToolResult, seconds: float) -> None:
        key = (result.call.turn, result.call.id)
        if key in self.recorded:
            return
        remember(self.recorded, key)
        if result.success:
            text = output_text(result.output)
            data: dict[str, Any] = {"id": result.call.id, "success": True,
                                    "output": text if hasattr(result.output, "model_dump")
                                    else result.output}
        else:
            text = f"error: {result.error}"
            data = {"id": result.call.id, "success": False, "error": result.error}
        self.transcript.add("result", text, data)
        if self.report is not None:
            self.report(self.transcript, result, seconds)
