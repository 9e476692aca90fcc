"""Claude Managed Agents sessions, as the toolbridge dialect ``anthropic-sessions``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolbridge import ToolDefinition, ToolResult
from toolbridge.plugin import (
    ApprovesItems,
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

from .wire import DIALECT, MAX_RESULT_BYTES, RESULT_MARGIN_BYTES, TOOL_NAME_PATTERN

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
    from .backend import SessionsBackend, SessionsConnection
    from .client import AsyncSessionsClient, SessionsClient
    from .emulator import SessionsEmulator
    from .options import SessionsEmulatorOptions, SessionsFaults, SessionsOptions
else:
    translate = lazy_module(f"{__name__}.translate")

__all__ = [
    "AnthropicSessionsDialect",
    "AsyncSessionsClient",
    "SessionsBackend",
    "SessionsClient",
    "SessionsConnection",
    "SessionsEmulator",
    "SessionsEmulatorOptions",
    "SessionsFaults",
    "SessionsOptions",
]


class AnthropicSessionsDialect(Dialect):
    """Managed Agents sessions: ``custom`` tools, ``agent.custom_tool_use`` events answered
    with ``user.custom_tool_result``."""

    name = DIALECT
    limits = DialectLimits(max_result_bytes=MAX_RESULT_BYTES - RESULT_MARGIN_BYTES,
                           content_parts=True,
                           name_pattern=re.compile(TOOL_NAME_PATTERN))

    def render_tools(self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
                     ) -> RenderedTools:
        """The agent's ``tools``: one ``{"type": "custom", name, description,
        input_schema}`` each."""
        return translate.render_tools(tools)

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        """Custom tool uses pending in a page of session events (or one such event)."""
        return translate.read_calls(payload)

    def read_calls_in(self, payload: Mapping[str, Any], conversation: str) -> PendingCalls:
        """`read_calls` for events of the session ``conversation`` (events name none)."""
        return translate.read_calls(payload, conversation)

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        """``{"events": [user.custom_tool_result, ...]}`` for ``POST .../events``."""
        return translate.results_to_wire(results)

    def read_records(self, payload: Mapping[str, Any],
                     conversation: str | None = None) -> PendingRecords:
        return translate.read_records(payload, conversation)

    def write_records(self, records: Sequence[CallRecord]) -> dict[str, Any]:
        return translate.records_to_wire(records)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """The ``custom`` entries of an agent's ``tools``."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, with the skipped entries (toolsets the service runs)."""
        from .tools_import import import_tools

        return import_tools(definitions)


__getattr__ = lazy_attributes(__name__, {
    "SessionsOptions": ".options", "SessionsEmulatorOptions": ".options",
    "SessionsFaults": ".options", "SessionsClient": ".client",
    "AsyncSessionsClient": ".client", "SessionsEmulator": ".emulator",
    "SessionsBackend": ".backend", "SessionsConnection": ".backend",
})


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(AnthropicSessionsDialect())


_SDK_HINT = ('anthropic SDK base URL: {base_url}  '
             '(Anthropic(base_url="{base_url}", api_key="test"))')
"""How the anthropic SDK reaches the emulator (``toolbridge emulate`` prints it)."""


def _connect(options: Any, tools: Sequence[ToolDefinition]) -> Connection:
    """The serve driver's `Connection` (options: `SessionsOptions`)."""
    from toolbridge import get_dialect

    from .backend import SessionsConnection

    return SessionsConnection(get_dialect(DIALECT), options, tools)



@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:SessionsOptions", _connect)]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:SessionsEmulatorOptions",
                     f"{__name__}.emulator:SessionsEmulator.from_options",
                     hint=_SDK_HINT)]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=60)]


@hookimpl
def toolbridge_approval_items() -> list[ApprovesItems]:
    return [ApprovesItems(DIALECT, f"{__name__}.approvals:read_approval",
                          f"{__name__}.approvals:answer_approval",
                          f"{__name__}.approvals:approval_body")]
