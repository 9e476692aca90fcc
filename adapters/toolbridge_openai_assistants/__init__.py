"""OpenAI (and Azure OpenAI) Assistants API runs, as the toolbridge dialect ``openai-assistants``.

Tools go on an assistant nested as ``{"type": "function", "function": {...}}``; a run in
``requires_action`` lists its calls with JSON-string arguments; every output of the run goes
back in one ``submit_tool_outputs`` body. Failed calls are sent as the output text
``{"error": "<message>"}`` (the API has no error flag).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from toolbridge import ToolCall, ToolChoice, ToolDefinition, ToolResult
from toolbridge.plugin import (
    Dialect,
    DialectLimits,
    DialectRegistry,
    hookimpl,
    lazy_attributes,
    lazy_module,
    lazy_options,
)

from .wire import DIALECT, MAX_OUTPUT_CHARS, MAX_TOOLS, run_of

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
    from .backend import AssistantsBackend, AssistantsConnection
    from .client import AssistantsClient, AsyncAssistantsClient, RunExpiredError
    from .emulator import AssistantsEmulator
    from .migrate import read_workload, tools_from_assistant
    from .options import AssistantsEmulatorOptions, AssistantsFaults, AssistantsOptions
    from .serve import arun_conversation, aserve_run, run_conversation, serve_run
    from .translate import AssistantsCorrelation
else:
    translate = lazy_module(f"{__name__}.translate")

__all__ = [
    "AssistantsBackend",
    "AssistantsClient",
    "AssistantsConnection",
    "AssistantsCorrelation",
    "AssistantsEmulator",
    "AssistantsEmulatorOptions",
    "AssistantsFaults",
    "AssistantsOptions",
    "AsyncAssistantsClient",
    "OpenAIAssistantsDialect",
    "RunExpiredError",
    "arun_conversation",
    "aserve_run",
    "run_conversation",
    "serve_run",
    "read_workload",
    "tools_from_assistant",
]


class OpenAIAssistantsDialect(Dialect):
    """Assistants API runs on OpenAI or Azure OpenAI."""

    name: ClassVar[str] = DIALECT
    serve_options = lazy_options(f"{__name__}.options:AssistantsOptions")
    emulator_options = lazy_options(f"{__name__}.options:AssistantsEmulatorOptions")
    # submit_tool_outputs takes one output per listed call, a repeated id too.
    limits: ClassVar[DialectLimits] = DialectLimits(
        max_result_chars=MAX_OUTPUT_CHARS, max_tools=MAX_TOOLS, repeated_result_ids=True)

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        rendered = translate.render_tools(tools, policy=policy)
        self.limits.check_tools(rendered.definitions, self.name)
        return rendered

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload)

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return translate.write_results(results)

    def render_tool_choice(self, choice: ToolChoice) -> Any:
        return translate.render_tool_choice(choice)

    def decode_arguments(self, call: ToolCall, tool: ToolDefinition) -> dict[str, Any]:
        """Undo strict mode (`toolbridge.schema.decode_strict_arguments`)."""
        from toolbridge.schema import decode_strict_arguments

        return decode_strict_arguments(tool.parameters, tool.strict, call.arguments)

    def conversation_of(self, payload: Mapping[str, Any]) -> str:
        run, _ = run_of(payload)
        thread = run.get("thread_id") if isinstance(run, Mapping) else None
        return thread if isinstance(thread, str) else ""

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Function tools of a ``tools`` list or ``{"tools": [...]}`` (others are skipped)."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, with the skipped ``code_interpreter`` / ``file_search`` entries."""
        from .tools_import import import_tools

        return import_tools(definitions)

    def connect(self, options: ServeOptions, tools: Sequence[ToolDefinition]) -> Connection:
        """An `AssistantsConnection`: one client, one assistant created for new threads."""
        from .backend import AssistantsConnection
        from .options import AssistantsOptions

        return AssistantsConnection(self, AssistantsOptions.parse(options), tools)

    def migration_source(self, options: Mapping[str, Any], *,
                         assistant_ids: Sequence[str] | None = None,
                         thread_ids: Sequence[str] | None = None) -> Any:
        """`read_workload` through an `AssistantsClient` built from ``options``."""
        from .client import AssistantsClient
        from .migrate import read_workload

        with AssistantsClient(**options) as client:
            return read_workload(client, assistant_ids=assistant_ids, thread_ids=thread_ids)

    def create_emulator(self, options: DialectOptions | None = None) -> Any:
        """The emulated Assistants API (`AssistantsEmulator`)."""
        from .emulator import AssistantsEmulator
        from .options import AssistantsEmulatorOptions

        parsed = AssistantsEmulatorOptions.parse(options)
        return AssistantsEmulator(script=parsed.script, faults=parsed.faults,
                                  poll_after_ms=parsed.poll_after_ms,
                                  expire_after=parsed.expire_after)


# The client (httpx), the serve helpers, the backend, migration and the emulator (the
# emulators extra) load on first use: importing the package (plugin discovery does) stays light.
_LAZY = {
    "AssistantsCorrelation": ".translate",
    "AssistantsEmulatorOptions": ".options",
    "AssistantsFaults": ".options",
    "AssistantsOptions": ".options",
    "AssistantsClient": ".client", "AsyncAssistantsClient": ".client",
    "RunExpiredError": ".client", "tools_from_assistant": ".migrate",
    "read_workload": ".migrate",
    "AssistantsBackend": ".backend", "AssistantsConnection": ".backend",
    "AssistantsEmulator": ".emulator",
    "arun_conversation": ".serve", "aserve_run": ".serve", "run_conversation": ".serve",
    "serve_run": ".serve",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(OpenAIAssistantsDialect())
