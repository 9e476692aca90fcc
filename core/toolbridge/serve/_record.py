"""What the driver writes into a transcript: a line per call the backend listed and per result
sent (once each), and a note for a listed call nothing was sent for."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..model import ToolCall, ToolResult
from ..runtime import output_text

if TYPE_CHECKING:
    from ._settings import DriverSettings
    from ._transcript import Transcript

__all__ = ["KEEP", "CallKey", "Key", "Recorder", "remember"]

Key = tuple[str, str]
"""(turn, call id): a call of one conversation."""
CallKey = tuple[str, str, str, str, int]
"""(turn, call id, tool, arguments, occurrence): one listed call, told apart from another that
repeats its id (a model may reuse one), and the same however often it is delivered again."""
KEEP = 1024
"""Calls remembered per conversation, submitted or recorded (a stale step older than that is
answered from the store again, and the backend refuses the duplicate)."""


def remember(keys: dict[Any, None], key: Any) -> None:
    """Add ``key`` to an ordered, bounded set (the oldest beyond `KEEP` are forgotten)."""
    keys[key] = None
    while len(keys) > KEEP:
        del keys[next(iter(keys))]


def _shown_arguments(call: ToolCall) -> str:
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False, separators=(",", ":"), default=str,
                      sort_keys=False)


def identify(calls: Sequence[ToolCall]) -> list[CallKey]:
    """The `CallKey` of each of a step's listed calls (the nth with the same id, tool and
    arguments is occurrence n)."""
    counts: dict[tuple[str, str, str, str], int] = {}
    keys: list[CallKey] = []
    for call in calls:
        base = (call.turn, call.id, call.name, _shown_arguments(call))
        nth = counts.get(base, 0)
        counts[base] = nth + 1
        keys.append((*base, nth))
    return keys


class Recorder:
    """The transcript's ``call``, ``result`` and per-call ``note`` entries, and the progress
    report: each listed call once, each result once, when it is sent (a call delivered again
    after a recovery, answered from the store, is not shown twice)."""

    __slots__ = ("_keys", "_took", "calls", "report", "results", "transcript")

    def __init__(self, transcript: Transcript, settings: DriverSettings) -> None:
        self.transcript = transcript
        self.report = settings.on_answer
        self.calls: dict[CallKey, None] = {}
        """Calls shown (bounded)."""
        self.results: dict[CallKey, None] = {}
        """Calls whose result was sent, or noted as not sent (bounded)."""
        self._keys: dict[int, CallKey] = {}
        """By ``id`` of a call object being answered: its key (until its result is sent)."""
        self._took: dict[int, float] = {}
        """By ``id`` of a result not yet sent: the seconds its call took."""

    def seen(self, key: CallKey) -> bool:
        return key in self.calls

    def call(self, call: ToolCall, key: CallKey) -> None:
        """The backend listed ``call`` (shown once per key)."""
        self._keys[id(call)] = key
        if key in self.calls:
            return
        remember(self.calls, key)
        if not self.transcript.keep:
            return
        data: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
        if call.argument_error is not None:
            data["argument_error"] = call.argument_error
        self.transcript.add("call", f"{call.name}({_shown_arguments(call)})", data,
                            call=call.id, tool=call.name)

    def unanswered(self, call: ToolCall, key: CallKey) -> None:
        """``call`` is listed under an id already answered in this turn: nothing goes back for
        it (the backend matches results to calls by id and holds that id's result)."""
        first = key not in self.calls
        self.call(call, key)
        self._keys.pop(id(call), None)
        if first and key not in self.results:
            remember(self.results, key)
            self.transcript.add("note", "not answered: its id was answered before in this "
                                "turn, and the backend takes one result per id",
                                {"id": call.id, "name": call.name}, call=call.id,
                                tool=call.name)

    def ran(self, results: Sequence[ToolResult], seconds: float) -> None:
        """``results`` are ready (sent later, with what they answer)."""
        for result in results:
            self._took[id(result)] = seconds

    def sent(self, results: Sequence[ToolResult], body: Sequence[ToolResult]) -> None:
        """``results`` were ready to go; ``body`` is those the body carries (the others
        repeat an earlier call's id, on a wire that takes one result per id)."""
        carried = {id(r) for r in body}
        for result in results:
            call = result.call
            key = self._keys.pop(id(call), None) or identify([call])[0]
            seconds = self._took.pop(id(result), 0.0)
            if key in self.results:
                continue
            remember(self.results, key)
            if id(result) not in carried:
                self.transcript.add("note", "not sent: its id repeats an earlier call's, and "
                                    "the backend takes one result per id (the earlier call's "
                                    "answers it)", {"id": call.id, "name": call.name},
                                    call=call.id, tool=call.name)
                continue
            self._result(result, seconds)

    def _result(self, result: ToolResult, seconds: float) -> None:
        call = result.call
        data: dict[str, Any] = {"id": call.id, "name": call.name, "success": result.success}
        if result.success:
            text = output_text(result.output)
            data["output"] = text if hasattr(result.output, "model_dump") else result.output
        else:
            text = f"error: {result.error}"
            data["error"] = result.error
        self.transcript.add("result", text, data, call=call.id, tool=call.name)
        if self.report is not None:
            self.report(self.transcript, result, seconds)

    def forget(self) -> None:
        """The turn is over: no call of it is being answered any more."""
        self._keys.clear()
        self._took.clear()
