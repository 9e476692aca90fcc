"""The `Dialect` interface: the three translations every backend dialect provides."""

from __future__ import annotations

import abc
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .._lazy import lazy_options
from ..model import NAME_PATTERN, ToolCall, ToolChoice, ToolDefinition, ToolResult

if TYPE_CHECKING:
    from ._backend import Connection
    from ._options import DialectOptions, ServeOptions
    from ._translated import ImportedTools, PendingCalls, RenderedTools

__all__ = ["Dialect", "DialectLimits", "LossPolicy"]

LossPolicy = Literal["allow", "describe", "error", "lossless"]
"""`toolbridge.schema.LossPolicy`, spelled here so that loading plugins loads no schema code."""


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


class Dialect(abc.ABC):
    """One backend's dialect of function calling.

    Subclass it, set `name` and `limits`, implement the three translations, and register an
    instance from the `toolbridge_register_dialects` hook. Translations are pure: payloads in,
    payloads out, no I/O. Payloads reach `read_calls` already decoded to JSON-compatible data.
    To serve conversations, a dialect also gives `connect` (its `toolbridge.plugin.Backend`
    seam) with its typed `serve_options`; to be emulated, `create_emulator`.
    """

    name: ClassVar[str]
    """Stable id used by `toolbridge.get_dialect` and in every error message."""
    limits: ClassVar[DialectLimits] = DialectLimits()
    serve_options: ClassVar[type[ServeOptions]] = lazy_options(
        f"{__package__}._options:ServeOptions")
    """The options `connect` takes (``toolbridge serve -o KEY=VALUE`` is parsed into them)."""
    emulator_options: ClassVar[type[DialectOptions]] = lazy_options(
        f"{__package__}._options:DialectOptions")
    """The options `create_emulator` takes."""

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

    def connect(self, options: ServeOptions, tools: Sequence[ToolDefinition]) -> Connection:
        """A `Connection` to this dialect's backend for ``tools``, configured by ``options``
        (an instance of `serve_options`); the serve driver (`toolbridge.serve`) holds
        conversations through it. Dialects without a serve backend raise `UsageError`.
        """
        from ..errors import UsageError

        raise UsageError(f"dialect {self.name!r} has no serve backend")

    def migration_target(self, options: Mapping[str, Any]) -> Any:
        """A `toolbridge.migration.MigrationTarget` writing migrated assistants and threads
        to this dialect's backend, configured by ``options`` (the client's: ``base_url``,
        ``api_key``, ...). Dialects that are no migration target raise `UsageError`.
        """
        from ..errors import UsageError

        raise UsageError(f"dialect {self.name!r} is not a migration target")

    def migration_source(self, options: Mapping[str, Any], *,
                         assistant_ids: Sequence[str] | None = None,
                         thread_ids: Sequence[str] | None = None) -> Any:
        """A `toolbridge.migration.Workload` read from this dialect's live backend (client
        ``options``): the assistants (all, or ``assistant_ids``), the threads (``thread_ids``,
        else all where the backend lists them) and their messages. Dialects that are no
        migration source raise `UsageError`.
        """
        from ..errors import UsageError

        raise UsageError(f"dialect {self.name!r} is not a migration source")

    def create_emulator(self, options: DialectOptions | None = None) -> Any:
        """This dialect's emulated backend (a `toolbridge.emulation.Emulator`), configured by
        ``options`` (an instance of `emulator_options`: ``script``, ``faults`` and the
        dialect's own). Dialects without an emulator raise `UsageError`.
        """
        from ..errors import UsageError

        raise UsageError(f"dialect {self.name!r} ships no emulator")

    def conversation_of(self, payload: Mapping[str, Any]) -> str:
        """The session or thread a payload belongs to, for logs; empty when unknown."""
        return ""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
