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
    Demos,
    Dialect,
    DialectLimits,
    DialectRegistry,
    Emulates,
    MigratesFrom,
    Serves,
    hookimpl,
    lazy_attributes,
    lazy_module,
)

from .wire import DIALECT, MAX_OUTPUT_CHARS, MAX_TOOLS

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

    def read_records(self, payload: Mapping[str, Any],
                     conversation: str | None = None) -> PendingRecords:
        if conversation is not None:
            return super().read_records(payload, conversation)  # refused there
        return translate.read_records(payload)

    def write_records(self, records: Sequence[CallRecord]) -> dict[str, Any]:
        return translate.write_records(records)

    def render_tool_choice(self, choice: ToolChoice) -> Any:
        return translate.render_tool_choice(choice)

    def decode_arguments(self, call: ToolCall, tool: ToolDefinition) -> dict[str, Any]:
        """Undo strict mode (`toolbridge.schema.decode_strict_arguments`)."""
        return translate.decode_arguments(call.arguments, tool)

    def decode_record(self, record: CallRecord, tool: ToolDefinition) -> dict[str, Any]:
        return translate.decode_arguments(record.arguments, tool)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Function tools of a ``tools`` list or ``{"tools": [...]}`` (others are skipped)."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, with the skipped ``code_interpreter`` / ``file_search`` entries."""
        from .tools_import import import_tools

        return import_tools(definitions)



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


_SDK_HINT = ('OpenAI SDK base URL: {base_url}/v1  '
             '(OpenAI(base_url="{base_url}/v1", api_key="test"))')
"""How the openai SDK reaches the emulator (``toolbridge emulate`` prints it)."""


def _registered() -> OpenAIAssistantsDialect:
    """The registered instance of this dialect."""
    from toolbridge import get_dialect

    found = get_dialect(DIALECT)
    assert isinstance(found, OpenAIAssistantsDialect)
    return found


def _connect(options: Any, tools: Sequence[ToolDefinition]) -> Connection:
    """The serve driver's `Connection` (options: `AssistantsOptions`)."""
    from .backend import AssistantsConnection

    return AssistantsConnection(_registered(), options, tools)



def _migration_source(options: dict[str, Any], *, assistant_ids: Sequence[str] | None = None,
                      thread_ids: Sequence[str] | None = None, wait_runs: float | None = None
                      ) -> Any:
    """`read_workload` through an `AssistantsClient` built from ``options``
    (``token_env=VAR``: an Entra token read from that variable on every request)."""
    import os

    from .client import AssistantsClient
    from .migrate import read_workload

    variable = options.pop("token_env", None)
    if variable is not None:
        options["azure_ad_token_provider"] = lambda: os.environ[str(variable)]
    with AssistantsClient(**options) as client:
        return read_workload(client, assistant_ids=assistant_ids, thread_ids=thread_ids,
                             wait_runs=wait_runs)


@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:AssistantsOptions", _connect)]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:AssistantsEmulatorOptions",
                     f"{__name__}.emulator:AssistantsEmulator.from_options",
                     hint=_SDK_HINT)]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=20)]


@hookimpl
def toolbridge_migration_sources() -> list[MigratesFrom]:
    return [MigratesFrom("openai-assistants", DIALECT, _migration_source,
                         summary="a live Assistants API: OpenAI, Azure OpenAI, Foundry classic")]
