"""OpenAI Agents API managed sessions, as the toolbridge dialect ``openai-agents``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolbridge import ToolDefinition, ToolResult
from toolbridge.plugin import (
    Dialect,
    DialectLimits,
    DialectRegistry,
    hookimpl,
    lazy_attributes,
    lazy_module,
    lazy_options,
)

from .wire import DIALECT, MAX_RESULT_BYTES, MAX_TOOLS_BYTES, RESULT_MARGIN_BYTES

if TYPE_CHECKING:
    from toolbridge.plugin import (
        Connection,
        DialectOptions,
        ImportedTools,
        PendingCalls,
        RenderedTools,
        ServeOptions,
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
    serve_options = lazy_options(f"{__name__}.options:AgentsOptions")
    emulator_options = lazy_options(f"{__name__}.options:AgentsEmulatorOptions")
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

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Function entries of an ``agent.tools`` list (``tool_search`` is skipped)."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, with the skipped entries (``tool_search``, hosted tools)."""
        from .tools_import import import_tools

        return import_tools(definitions)

    def conversation_of(self, payload: Mapping[str, Any]) -> str:
        session = payload.get("session", payload)
        value = session.get("id") if isinstance(session, Mapping) else None
        return value if isinstance(value, str) else ""

    def connect(self, options: ServeOptions, tools: Sequence[ToolDefinition]) -> Connection:
        """An `AgentsConnection` (one client for every session it serves)."""
        from .backend import AgentsConnection
        from .options import AgentsOptions

        return AgentsConnection(self, AgentsOptions.parse(options), tools)

    def migration_target(self, options: Mapping[str, Any]) -> Any:
        """An `AgentsTarget` (saved agents and sessions), the client built from ``options``."""
        from .migration import AgentsTarget

        return AgentsTarget(**options)

    def create_emulator(self, options: DialectOptions | None = None) -> Any:
        """The emulated Agents API (`AgentsEmulator`): ``script``, ``faults``."""
        from .emulator import AgentsEmulator
        from .options import AgentsEmulatorOptions

        parsed = AgentsEmulatorOptions.parse(options)
        return AgentsEmulator(script=parsed.script, faults=parsed.faults)


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
