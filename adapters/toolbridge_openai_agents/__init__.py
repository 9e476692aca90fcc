"""OpenAI Agents API managed sessions, as the toolbridge dialect ``openai-agents``."""

from __future__ import annotations

import os
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
    MigratesTo,
    Serves,
    hookimpl,
    lazy_attributes,
    lazy_module,
)

from .wire import DIALECT, MAX_RESULT_BYTES, MAX_TOOLS_BYTES, RESULT_MARGIN_BYTES

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
    from .backend import AgentsBackend, AgentsConnection
    from .client import AgentsClient, AsyncAgentsClient, PendingCallRaceError
    from .emulator import AgentsEmulator
    from .migration import AgentsTarget
    from .options import AgentsEmulatorOptions, AgentsFaults, AgentsOptions
    from .serve import arun_conversation, aserve_session, run_conversation, serve_session
else:
    translate = lazy_module(f"{__name__}.translate")

__all__ = [
    "AgentsBackend",
    "AgentsClient",
    "AgentsConnection",
    "AgentsEmulator",
    "AgentsEmulatorOptions",
    "AgentsFaults",
    "AgentsTarget",
    "AgentsOptions",
    "AsyncAgentsClient",
    "OpenAIAgentsDialect",
    "PendingCallRaceError",
    "arun_conversation",
    "aserve_session",
    "run_conversation",
    "serve_session",
]


class OpenAIAgentsDialect(Dialect):
    """Agents API sessions: flat function tools, ``required_actions``, ``tool_result`` events."""

    name = DIALECT
    limits = DialectLimits(
        max_result_bytes=MAX_RESULT_BYTES - RESULT_MARGIN_BYTES,
        content_parts=True,
        max_tools_bytes=MAX_TOOLS_BYTES,
    )

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        """``agent.tools``; schemas go as plain JSON Schema (the service has no strict mode)."""
        return translate.render_tools(tools)

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        """Pending function calls of a session or ``agent.session.requires_action`` event."""
        return translate.read_calls(payload)

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        """``{"events": [tool_result, ...]}`` for ``POST /agents/sessions/{id}/events``."""
        return translate.results_to_wire(results)

    def read_records(self, payload: Mapping[str, Any],
                     conversation: str | None = None) -> PendingRecords:
        if conversation is not None:
            return super().read_records(payload, conversation)  # refused there
        return translate.read_records(payload)

    def write_records(self, records: Sequence[CallRecord]) -> dict[str, Any]:
        return translate.records_to_wire(records)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Function entries of an ``agent.tools`` list (``tool_search`` is skipped)."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, with the skipped entries (``tool_search``, hosted tools)."""
        from .tools_import import import_tools

        return import_tools(definitions)


_LAZY = {
    "AgentsEmulatorOptions": ".options",
    "AgentsFaults": ".options",
    "AgentsOptions": ".options",
    "AgentsClient": ".client", "AsyncAgentsClient": ".client", "PendingCallRaceError": ".client",
    "AgentsEmulator": ".emulator", "AgentsTarget": ".migration",
    "AgentsBackend": ".backend", "AgentsConnection": ".backend",
    "serve_session": ".serve", "aserve_session": ".serve",
    "run_conversation": ".serve", "arun_conversation": ".serve",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(OpenAIAgentsDialect())


_SDK_HINT = ('OpenAI SDK base URL: {base_url}/v1  '
             '(OpenAI(base_url="{base_url}/v1", api_key="test"))')
"""How the openai SDK reaches the emulator (``toolbridge emulate`` prints it)."""


def _registered() -> OpenAIAgentsDialect:
    """The registered instance of this dialect."""
    from toolbridge import get_dialect

    found = get_dialect(DIALECT)
    assert isinstance(found, OpenAIAgentsDialect)
    return found


def _connect(options: Any, tools: Sequence[ToolDefinition]) -> Connection:
    """The serve driver's `Connection` (options: `AgentsOptions`)."""
    from .backend import AgentsConnection

    return AgentsConnection(_registered(), options, tools)



def _migration_target(options: dict[str, Any]) -> Any:
    """The migration target for client ``options``."""
    from .migration import AgentsTarget

    variable = options.pop("token_env", None)  # a bearer token read from it on every request
    if variable is not None:
        options["token_provider"] = lambda: os.environ[str(variable)]
    if options.get("project_endpoint"):
        from toolbridge import UsageError

        raise UsageError("-o project_endpoint is for --to azure-foundry, not openai-agents")
    return AgentsTarget(**options)


@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:AgentsOptions", _connect)]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:AgentsEmulatorOptions",
                     f"{__name__}.emulator:AgentsEmulator.from_options",
                     hint=_SDK_HINT)]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=10)]


@hookimpl
def toolbridge_migration_targets() -> list[MigratesTo]:
    return [MigratesTo("openai-agents", DIALECT, _migration_target,
                       summary="Agents API: saved agents and sessions")]


@hookimpl
def toolbridge_approval_items() -> list[ApprovesItems]:
    return [ApprovesItems(DIALECT, f"{__name__}.approvals:read_approval",
                          f"{__name__}.approvals:answer_approval",
                          f"{__name__}.approvals:approval_body")]
