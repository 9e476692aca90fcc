"""OpenAI Agents API managed sessions, as the toolbridge dialect ``openai-agents``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolbridge import ToolDefinition, ToolResult
from toolbridge.plugin import (
    Dialect,
    DialectLimits,
    DialectRegistry,
    ImportedTools,
    PendingCalls,
    RenderedTools,
    hookimpl,
)

from .translate import DIALECT, calls_from_wire, results_to_wire, tools_to_wire
from .wire import MAX_RESULT_BYTES, MAX_TOOLS_BYTES, RESULT_MARGIN_BYTES

if TYPE_CHECKING:
    from .client import AgentsClient, AsyncAgentsClient, PendingCallRaceError
    from .emulator import AgentsEmulator
    from .serve import arun_conversation, aserve_session, run_conversation, serve_session

__all__ = [
    "AgentsClient",
    "AgentsEmulator",
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
        return RenderedTools(tools_to_wire(tools))

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        """Pending function calls of a session or ``agent.session.requires_action`` event."""
        calls, unhandled = calls_from_wire(payload)
        return PendingCalls(calls, unhandled)

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        """``{"events": [tool_result, ...]}`` for ``POST /agents/sessions/{id}/events``."""
        return results_to_wire(results)

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

    async def aserve(self, toolbox: Any, **options: Any) -> Any:
        """Serve one session: options ``session_id``, ``base_url``, ``api_key``, ``watch``."""
        from .serve import serve_from_options

        return await serve_from_options(toolbox, options)

    async def aconverse(self, toolbox: Any, messages: Sequence[str], **options: Any) -> Any:
        """`arun_conversation`: options ``base_url``, ``api_key``, ``model``, ``instructions``.

        ``base_url`` is the service root (``/v1`` is added); ``None`` means the real service
        with ``$OPENAI_API_KEY``.
        """
        from .serve import arun_conversation

        base_url = options.get("base_url")
        if base_url:
            root = str(base_url).rstrip("/")
            options["base_url"] = root if root.endswith("/v1") else root + "/v1"
        elif options.get("api_key") is None and options.get("client") is None:
            import os

            if not os.environ.get("OPENAI_API_KEY"):
                from toolbridge import UsageError

                raise UsageError(f"{DIALECT}: the real service needs OPENAI_API_KEY (not set); "
                                 "export it, or pass api_key=... or base_url=... (emulator)")
        return await arun_conversation(toolbox, messages, **options)

    def create_emulator(self, **options: Any) -> Any:
        """The emulated Agents API (`AgentsEmulator`); ``script``, ``faults`` as usual."""
        from .emulator import AgentsEmulator

        return AgentsEmulator(**options)


_LAZY = {
    "AgentsClient": ".client", "AsyncAgentsClient": ".client", "PendingCallRaceError": ".client",
    "AgentsEmulator": ".emulator",
    "serve_session": ".serve", "aserve_session": ".serve",
    "run_conversation": ".serve", "arun_conversation": ".serve",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolbridge_openai_agents' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(OpenAIAgentsDialect())
