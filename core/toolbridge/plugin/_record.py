"""`CallRecord`: one call as the pipeline carries it from read to write.

A record holds a `ToolCall`'s fields and, once the call is answered, its `ToolResult`'s; the
public models are built from it only when something asks for them (a hook, a `ToolContext`,
``execute``, an error path, a dialect that reads and writes through `Dialect.read_calls` and
`Dialect.write_results`). Built-in dialects read and write records directly
(`Dialect.read_records`, `Dialect.write_records`); the base class's versions adapt the
public methods, so every dialect goes through the same pipeline.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from ..model import Correlation, ToolCall, ToolResult, new_result
from ._translated import PendingCalls

__all__ = ["ENCODED", "CallRecord", "PendingRecords", "Reading", "reading", "write_encoded"]

T = TypeVar("T")

_new_call = ToolCall.trusted
_new_object = object.__new__


class CallRecord:
    """A call's fields (those of `ToolCall`, same names) and, once answered, its result's:
    ``success`` is ``None`` until then. ``text`` is the output's JSON text when the runtime
    encoded it (a writer sends it as is)."""

    __slots__ = ("_call", "_result", "argument_error", "arguments", "conversation",
                 "correlation", "dialect", "error", "id", "name", "output", "raw_arguments",
                 "success", "text", "turn")

    def __init__(self, *, id: str, name: str, dialect: str, arguments: dict[str, Any],
                 raw_arguments: str | None = None, argument_error: str | None = None,
                 conversation: str = "", turn: str = "",
                 correlation: Correlation | Callable[[], Correlation] | None = None) -> None:
        """The arguments of `ToolCall.trusted`, unchecked alike: readers that checked them.
        ``correlation`` may be what makes it (called when the `ToolCall` is made)."""
        self.id = id
        self.name = name
        self.dialect = dialect
        self.arguments = arguments
        self.raw_arguments = raw_arguments
        self.argument_error = argument_error
        self.conversation = conversation
        self.turn = turn
        self.correlation = correlation
        self.success: bool | None = None
        self.output: Any = None
        self.error: str | None = None
        self.text: str | None = None
        self._call: ToolCall | None = None
        self._result: ToolResult | None = None

    @classmethod
    def trusted(cls, *, id: str, name: str, dialect: str, arguments: dict[str, Any],
                raw_arguments: str | None = None, argument_error: str | None = None,
                conversation: str = "", turn: str = "",
                correlation: Correlation | Callable[[], Correlation] | None = None
                ) -> CallRecord:
        """``CallRecord(...)`` with the same keywords, for readers (it is on every call's path):
        a class called with keywords costs CPython a dictionary of them, a method does not."""
        record: CallRecord = _new_object(cls)
        record.__init__(id=id, name=name, dialect=dialect, arguments=arguments,  # type: ignore[misc]
                        raw_arguments=raw_arguments, argument_error=argument_error,
                        conversation=conversation, turn=turn, correlation=correlation)
        return record

    @classmethod
    def of(cls, call: ToolCall) -> CallRecord:
        """The record of a public ``call`` (which it keeps: `call` returns it)."""
        fields = call.__dict__
        record = cls(id=fields["id"], name=fields["name"], dialect=fields["dialect"],
                     arguments=fields["arguments"], raw_arguments=fields["raw_arguments"],
                     argument_error=fields["argument_error"],
                     conversation=fields["conversation"], turn=fields["turn"],
                     correlation=fields["correlation"])
        record._call = call
        return record

    def call(self) -> ToolCall:
        """The public `ToolCall`, made on first need."""
        call = self._call
        if call is None:
            correlation = self.correlation
            if correlation is not None and not isinstance(correlation, Correlation):
                correlation = self.correlation = correlation()
            call = self._call = _new_call(
                id=self.id, name=self.name, dialect=self.dialect, arguments=self.arguments,
                raw_arguments=self.raw_arguments, argument_error=self.argument_error,
                conversation=self.conversation, turn=self.turn, correlation=correlation)
        return call

    def sent_text(self) -> str | None:
        """What a writer sends for an answered record as is: a successful output that is a
        string, or the JSON text the runtime made of it; ``None`` when it must write from
        `result` (a failure, content, an output not encoded)."""
        if not self.success:
            return None
        output = self.output
        return output if type(output) is str else self.text

    def answer(self, success: bool, output: Any, error: str | None,
               text: str | None = None) -> None:
        """Make this the call's answer."""
        self.success, self.output, self.error, self.text = success, output, error, text
        self._result = None

    def answer_with(self, result: ToolResult, text: str | None = None) -> None:
        """Make the public ``result`` the call's answer (`result` returns it)."""
        fields = result.__dict__
        self.success, self.output, self.error = (fields["success"], fields["output"],
                                                 fields["error"])
        self.text = text
        self._result = result

    def fail(self, error: str) -> None:
        """Answer with an error result."""
        self.answer(False, None, error)

    def result(self) -> ToolResult | None:
        """The public `ToolResult` (made on first need), ``None`` while unanswered."""
        if self.success is None:
            return None
        result = self._result
        if result is None:
            result = self._result = new_result(self.call(), self.success, self.output,
                                               self.error)
        return result

    def __repr__(self) -> str:
        return f"<CallRecord {self.dialect} {self.name} id={self.id!r} success={self.success}>"


class PendingRecords(NamedTuple):
    """`toolbridge.plugin.PendingCalls`, its calls as records."""

    records: Sequence[CallRecord]
    unhandled: tuple[Mapping[str, Any], ...] = ()
    reason: str = ""



class Reading(NamedTuple):
    """What one reader serving both `Dialect.read_calls` and `Dialect.read_records` builds
    (`reading`): its result and its calls, with the same keywords either way."""

    pending: Callable[..., Any]
    """`PendingRecords` or `toolbridge.plugin.PendingCalls`."""
    call: Callable[..., Any]
    """`CallRecord.trusted` or `ToolCall.trusted`."""

    def later(self, correlation: Callable[..., Correlation]) -> Callable[..., Any]:
        """``correlation`` (a correlation's constructor) as this reading passes it on: for
        records, what makes it when the record's `ToolCall` is made (an error path, a hook),
        if ever."""
        if self.pending is PendingRecords:
            return functools.partial(functools.partial, correlation)
        return correlation


_RECORDS = Reading(PendingRecords, CallRecord.trusted)
_CALLS = Reading(PendingCalls, ToolCall.trusted)


def reading(records: bool) -> Reading:
    """What a reader builds: records (`Dialect.read_records`) or the public models."""
    return _RECORDS if records else _CALLS


class _Encoded(threading.local):
    known: Mapping[int, tuple[Any, str]] | None = None


ENCODED = _Encoded()
"""This thread's outputs already encoded as JSON text (by ``id``, with the output itself),
while `write_encoded` writes them: `toolbridge.runtime.output_text` answers from it."""


def write_encoded(write: Callable[[Sequence[ToolResult]], T], results: Sequence[ToolResult],
                  known: Mapping[int, tuple[Any, str]]) -> T:
    """``write(results)``, where `output_text` of an output in ``known`` (by ``id``, with the
    output itself) is the text already made for it."""
    previous = ENCODED.known
    ENCODED.known = known
    try:
        return write(results)
    finally:
        ENCODED.known = previous
