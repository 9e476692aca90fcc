"""The `Dialect` interface: the three translations every backend dialect provides."""

from __future__ import annotations

import abc
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from .._policy import LossPolicy
from ..model import NAME_PATTERN, ToolCall, ToolChoice, ToolDefinition, ToolResult

if TYPE_CHECKING:
    from ._record import CallRecord, PendingRecords
    from ._translated import ImportedTools, PendingCalls, RenderedTools

__all__ = ["Dialect", "DialectLimits", "LossPolicy"]



@dataclass(frozen=True)
class DialectLimits:
    """What a dialect's backend accepts; the runtime enforces these before writing results."""

    max_result_bytes: int | None = None
    """Largest result, in UTF-8 bytes of its wire text."""
    max_result_chars: int | None = None
    """Largest result, in characters of its wire text."""
    max_tools_bytes: int | None = None
    """Largest tool list, in bytes of compact JSON."""
    max_tools: int | None = None
    """Most tools one agent or assistant may hold."""
    name_pattern: re.Pattern[str] = NAME_PATTERN
    """Tool names the backend accepts."""
    content_parts: bool = False
    """Whether results may be content arrays (text and images) instead of text."""
    repeated_result_ids: bool = False
    """Whether the backend takes one result per listed call even when a call id is listed
    twice (results answer the calls one for one). Otherwise results are matched by id: a
    payload's call whose id repeats an earlier one's is answered only by that first call's
    result. Either way only the first call with an id runs."""
    results_match_by_tool: bool = False
    """Whether results are matched to calls by id and tool together (a CES ``ToolResponse``
    echoes both): a call repeating an earlier one's id but naming another tool is then a call
    of its own, answered by its own (error) result; one naming the same tool is not."""

    def check_tools(self, definitions: Sequence[Mapping[str, Any]], dialect: str) -> None:
        """Refuse a rendered tool list past `max_tools` or `max_tools_bytes` with a
        `UsageError` naming the limit (the backend would refuse the list); dialects call it
        where their tools render."""
        from ..errors import UsageError

        count = len(definitions)
        if self.max_tools is not None and count > self.max_tools:
            raise UsageError(
                f"{dialect}: {count} tools, over the {self.max_tools} one agent or assistant "
                "may hold (DialectLimits.max_tools); split them across agents or defer rarely "
                "used ones")
        if self.max_tools_bytes is not None:
            import json

            size = len(json.dumps(list(definitions), separators=(",", ":"),
                                  ensure_ascii=False).encode("utf-8", "surrogatepass"))
            if size > self.max_tools_bytes:
                raise UsageError(
                    f"{dialect}: the tool list is {size:,} bytes of compact JSON, over the "
                    f"{self.max_tools_bytes:,} the backend accepts "
                    "(DialectLimits.max_tools_bytes); shorten descriptions and schemas")


class Dialect(abc.ABC):
    """One backend's dialect of function calling.

    Subclass it, set `name` and `limits`, implement the three translations, and register an
    instance from the `toolbridge_register_dialects` hook. Translations are pure: payloads in,
    payloads out, no I/O. Payloads reach `read_calls` already decoded to JSON-compatible data.
    This is the core contract; a serve backend, an emulator, the demo and migration are
    capabilities declared through their own hooks (`toolbridge.plugin.Serves`, `Emulates`,
    `Demos`, `MigratesTo`, `MigratesFrom`).
    """

    name: ClassVar[str]
    """Stable id used by `toolbridge.get_dialect` and in every error message."""
    limits: ClassVar[DialectLimits] = DialectLimits()

    @abc.abstractmethod
    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: LossPolicy = "describe"
    ) -> RenderedTools:
        """Render tool definitions as the backend expects them in its tool list."""

    @abc.abstractmethod
    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        """Read the pending calls out of a backend payload; raise `WireFormatError` if malformed."""

    def read_calls_in(self, payload: Mapping[str, Any], conversation: str) -> PendingCalls:
        """`read_calls` for a payload of the caller's ``conversation`` (``handle(...,
        conversation=...)``): the id keys the result store where the wire names no conversation
        (Chat Completions). Dialects whose payloads name their own raise `UsageError`.
        """
        from ..errors import UsageError

        raise UsageError(f"dialect {self.name!r} takes no conversation=...: its payloads name "
                         "their conversation")

    @abc.abstractmethod
    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        """Write results as the request body that submits them, in the wire's own field names."""

    # Record-level reading and writing (optional): what the runtime calls. These defaults go
    # through the public methods above; the built-in dialects override them to read and write
    # `toolbridge.plugin.CallRecord` directly (no public model per call). A dialect may
    # implement the public methods only. A subclass that overrides a public method below the
    # class defining its record form has that override called (`record_forms`).
    def read_records(self, payload: Mapping[str, Any],
                     conversation: str | None = None) -> PendingRecords:
        """`read_calls` (``conversation``: `read_calls_in`), its calls as records."""
        from ._record import CallRecord, PendingRecords

        pending = (self.read_calls(payload) if conversation is None
                   else self.read_calls_in(payload, conversation))
        return PendingRecords([CallRecord.of(call) for call in pending.calls],
                              pending.unhandled, pending.reason)

    def write_records(self, records: Sequence[CallRecord]) -> dict[str, Any]:
        """`write_results` of the answered ``records``; outputs the runtime already encoded as
        JSON text are not encoded again."""
        from ._record import write_encoded

        results = [record.result() for record in records]
        known = {id(r.output): (r.output, r.text) for r in records if r.text is not None}
        if not known:
            return self.write_results(results)  # type: ignore[arg-type]  # all answered
        return write_encoded(self.write_results, results, known)  # type: ignore[arg-type]

    def decode_record(self, record: CallRecord, tool: ToolDefinition) -> dict[str, Any]:
        """`decode_arguments` of ``record``'s call. Built-in dialects whose decoding reads
        only the arguments override it (and implement `decode_arguments` with the same
        function), so no `ToolCall` is made to decode."""
        return self.decode_arguments(record.call(), tool)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Neutral definitions from a tool list in this dialect's wire form (for import/convert).

        Dialects that cannot read their own tool lists raise `UsageError`.
        """
        from ..errors import UsageError

        raise UsageError(f"dialect {self.name!r} cannot read tool definitions")

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, also saying which entries were left out and why (hosted tools such as
        ``code_interpreter`` have no neutral form); ``toolbridge convert`` reports them.

        The default reads with `read_tools` and reports nothing skipped: a dialect whose tool
        lists hold other kinds of tools overrides this (and has `read_tools` return its
        ``definitions``).
        """
        from ._translated import ImportedTools

        return ImportedTools(self.read_tools(definitions))

    def render_tool_choice(self, choice: ToolChoice) -> Any:
        """``choice`` in the dialect's wire shape; `UsageError` if the dialect cannot express it."""
        from ..errors import UsageError

        raise UsageError(f"dialect {self.name!r} has no tool_choice setting")

    def decode_arguments(self, call: ToolCall, tool: ToolDefinition) -> dict[str, Any]:
        """Arguments as the tool declared them, undoing the wire's encoding.

        Runs before validation. The default returns ``call.arguments``; a dialect whose wire
        changes types (CES sends every number as a double) restores them here, e.g. with
        `toolbridge.schema.compile_decoder`.
        """
        return call.arguments

    def conversation_of(self, payload: Mapping[str, Any]) -> str:
        """Deprecated, and removed in the next release: nothing reads it. Returns ``""``.

        A call's conversation is `ToolCall.conversation`, set by `read_calls`.
        """
        import warnings

        warnings.warn("Dialect.conversation_of is deprecated and unused (read "
                      "ToolCall.conversation); it is removed in the next release",
                      DeprecationWarning, stacklevel=2)
        return ""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class RecordForms(NamedTuple):
    """The record-level methods the runtime calls for one dialect class (`record_forms`)."""

    read: Callable[..., PendingRecords]
    write: Callable[..., dict[str, Any]]
    decode: Callable[..., dict[str, Any]] | None
    """``None``: the dialect keeps arguments as the model sent them."""


def _owner(kind: type, method: str) -> type:
    return next(c for c in kind.__mro__ if method in vars(c))


@functools.cache
def record_forms(kind: type[Dialect]) -> RecordForms:
    """The record forms for dialects of ``kind``: its own ``read_records``, ``write_records``
    and ``decode_record``, unless a subclass overrides the public method a form stands for
    below the class defining that form; then `Dialect`'s, which calls the override (one
    pipeline for every dialect, its subclasses included)."""
    def chosen(form: str, *public: str) -> Any:
        defined = _owner(kind, form)
        if all(issubclass(defined, _owner(kind, name)) for name in public):
            return getattr(kind, form)
        return getattr(Dialect, form)

    keeps = (_owner(kind, "decode_arguments") is Dialect
             and _owner(kind, "decode_record") is Dialect)
    return RecordForms(chosen("read_records", "read_calls", "read_calls_in"),
                       chosen("write_records", "write_results"),
                       None if keeps else chosen("decode_record", "decode_arguments"))
