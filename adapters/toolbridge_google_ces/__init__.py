"""Google CES (Customer Engagement Suite) client functions, as the toolbridge dialect
``google-ces``.

Definitions are CES ``Tool`` resources with a ``clientFunction``; pending calls are the
``toolCalls`` of a ``runSession`` answer; results go back as ``toolResponses``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolbridge import ToolCall, ToolDefinition, ToolResult
from toolbridge.plugin import (
    Demos,
    Dialect,
    DialectLimits,
    DialectRegistry,
    Emulates,
    Serves,
    hookimpl,
    lazy_attributes,
    lazy_module,
)

from . import wire
from .wire import DIALECT, endpoint, new_session_id, session_name

if TYPE_CHECKING:
    from toolbridge.plugin import (
        CallRecord,
        Connection,
        ImportedTools,
        PendingCalls,
        PendingRecords,
        RenderedTools,
    )

    from . import translate
    from .backend import CesBackend, CesConnection
    from .client import AsyncCesClient, CesApiError, CesClient, SyncReport, TokenProvider
    from .emulator import GoogleCesEmulator
    from .options import CesEmulatorOptions, CesOptions
    from .serve import arun_conversation, run_conversation
    from .translate import CesCorrelation, definition_from_tool, tool_id_of
else:
    translate = lazy_module(f"{__name__}.translate")

__all__ = [
    "AsyncCesClient",
    "CesBackend",
    "CesConnection",
    "CesEmulatorOptions",
    "CesOptions",
    "CesApiError",
    "CesClient",
    "CesCorrelation",
    "GoogleCesDialect",
    "GoogleCesEmulator",
    "SyncReport",
    "TokenProvider",
    "arun_conversation",
    "definition_from_tool",
    "endpoint",
    "new_session_id",
    "run_conversation",
    "session_name",
    "tool_id_of",
]


class GoogleCesDialect(Dialect):
    """CES client functions. Bind a session (and tool resource names) for the store key::

        toolbox.handle(GoogleCesDialect(session="projects/p/locations/us/apps/a/sessions/s"),
                       response)
    """

    name = DIALECT
    # Google states no size limit for a ToolResponse: the cap is ours (`wire.MAX_RESULT_BYTES`).
    # Results are Structs, never content parts.
    limits = DialectLimits(max_result_bytes=wire.MAX_RESULT_BYTES, content_parts=False,
                           results_match_by_tool=True)

    def __init__(self, *, session: str = "", tool_names: Mapping[str, str] | None = None):
        if session:
            try:
                wire.parse_session(session)
            except ValueError as exc:
                from toolbridge import UsageError

                raise UsageError(str(exc)) from None
        self.session = session
        """Session name put on every call read (``ToolCall.conversation``) and in results."""
        self.tool_names = dict(tool_names or {})
        """Tool resource name -> function name, for calls that carry no ``displayName``."""

    def bind(self, session: str, tool_names: Mapping[str, str] | None = None) -> GoogleCesDialect:
        """A copy of this dialect bound to ``session``."""
        return GoogleCesDialect(session=session, tool_names={**self.tool_names,
                                                              **(tool_names or {})})

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        return translate.render_tools(tools, policy=policy)

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload, session=self.session, tool_names=self.tool_names)

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return translate.write_results(results, session=self.session)

    def read_records(self, payload: Mapping[str, Any],
                     conversation: str | None = None) -> PendingRecords:
        if conversation is not None:
            return super().read_records(payload, conversation)  # read_calls_in refuses it
        return translate.read_records(payload, session=self.session, tool_names=self.tool_names)

    def write_records(self, records: Sequence[CallRecord]) -> dict[str, Any]:
        return translate.write_records(records, session=self.session)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Client-function ``Tool`` resources as neutral definitions (other kinds skipped)."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, with the skipped tool kinds (OpenAPI, search, MCP, ...)."""
        from .tools_import import import_tools

        return import_tools(definitions)

    def decode_arguments(self, call: ToolCall, tool: ToolDefinition) -> dict[str, Any]:
        """Struct numbers are doubles: integral values become ints where the schema says
        integer; stringified enum values get their declared type back."""
        return translate.decode_arguments(call.arguments, tool)

    def decode_record(self, record: CallRecord, tool: ToolDefinition) -> dict[str, Any]:
        return translate.decode_arguments(record.arguments, tool)


# The client (httpx), the serve helpers, the backend and the emulator (the emulators extra)
# load on first use: importing the package (plugin discovery does) stays light.
_LAZY = {
    "CesEmulatorOptions": ".options",
    "CesOptions": ".options",
    "AsyncCesClient": ".client", "CesApiError": ".client", "CesClient": ".client",
    "SyncReport": ".client", "TokenProvider": ".client",
    "CesBackend": ".backend", "CesConnection": ".backend",
    "GoogleCesEmulator": ".emulator",
    "arun_conversation": ".serve", "run_conversation": ".serve",
    "CesCorrelation": ".translate", "definition_from_tool": ".translate",
    "tool_id_of": ".translate",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(GoogleCesDialect())


def _registered() -> GoogleCesDialect:
    """The registered instance of this dialect."""
    from toolbridge import get_dialect

    found = get_dialect(DIALECT)
    assert isinstance(found, GoogleCesDialect)
    return found


def _connect(options: Any, tools: Sequence[ToolDefinition]) -> Connection:
    """The serve driver's `Connection` (options: `CesOptions`)."""
    from .backend import CesConnection

    return CesConnection(_registered(), options, tools)



@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:CesOptions", _connect)]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:CesEmulatorOptions",
                     f"{__name__}.emulator:GoogleCesEmulator.from_options",
                     hint='SDK endpoint: {base_url}')]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=30)]
