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
    ImportedTools,
    PendingCalls,
    RenderedTools,
    hookimpl,
)
from toolbridge.schema import unwrap_arguments

from . import translate
from .client import AssistantsClient, AsyncAssistantsClient, RunExpiredError
from .migrate import tools_from_assistant
from .serve import arun_conversation, aserve_run, run_conversation, serve_run
from .wire import DIALECT, MAX_OUTPUT_CHARS, MAX_TOOLS, AssistantsCorrelation, run_of

if TYPE_CHECKING:
    from .emulator import AssistantsEmulator

__all__ = [
    "AssistantsClient",
    "AssistantsCorrelation",
    "AssistantsEmulator",
    "AsyncAssistantsClient",
    "OpenAIAssistantsDialect",
    "RunExpiredError",
    "arun_conversation",
    "aserve_run",
    "run_conversation",
    "serve_run",
    "tools_from_assistant",
]


class OpenAIAssistantsDialect(Dialect):
    """Assistants API runs on OpenAI or Azure OpenAI."""

    name: ClassVar[str] = DIALECT
    limits: ClassVar[DialectLimits] = DialectLimits(
        max_result_chars=MAX_OUTPUT_CHARS, max_tools=MAX_TOOLS)

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        return translate.render_tools(tools, policy=policy)

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload)

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return translate.write_results(results)

    def render_tool_choice(self, choice: ToolChoice) -> Any:
        return translate.render_tool_choice(choice)

    def decode_arguments(self, call: ToolCall, tool: ToolDefinition) -> dict[str, Any]:
        """Undo strict mode: unwrap a root sent as ``{"value": ...}``, and drop ``null`` sent
        for optional parameters that do not accept null."""
        arguments = call.arguments
        if tool.strict is True:  # only a strict tool can have been wrapped (never lossless)
            arguments = unwrap_arguments(tool.parameters, "openai-strict", arguments)
        decoded = translate.drop_absent_nulls(arguments, tool.parameters, tool.parameters)
        return decoded if isinstance(decoded, dict) else arguments

    def conversation_of(self, payload: Mapping[str, Any]) -> str:
        run, _ = run_of(payload)
        thread = run.get("thread_id") if isinstance(run, Mapping) else None
        return thread if isinstance(thread, str) else ""

    async def aserve(self, toolbox: Any, **options: Any) -> Any:
        """Drive one run to a final state; returns the final run object.

        Options: ``base_url``, ``api_key`` (OpenAI) or ``azure_endpoint``, ``api_version``,
        ``api_key`` / ``azure_ad_token_provider`` (Azure); ``thread_id`` and ``run_id`` (an
        existing run) or ``assistant_id`` (create one); ``stream`` (default true).
        """
        from .serve import aserve_from_options

        return await aserve_from_options(toolbox, options)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Function tools of a ``tools`` list or ``{"tools": [...]}`` (others are skipped)."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, with the skipped ``code_interpreter`` / ``file_search`` entries."""
        from .tools_import import import_tools

        return import_tools(definitions)

    async def aconverse(self, toolbox: Any, messages: Sequence[str], **options: Any) -> Any:
        """`arun_conversation`: ``base_url`` (the root; ``None`` = the real service with
        ``$OPENAI_API_KEY`` or the ``$AZURE_OPENAI_*`` variables), ``api_key``, ``model``."""
        from .converse import aconverse

        return await aconverse(toolbox, messages, **options)

    def create_emulator(self, **options: Any) -> Any:
        from .emulator import AssistantsEmulator

        return AssistantsEmulator(**options)


def __getattr__(name: str) -> Any:
    if name == "AssistantsEmulator":
        from .emulator import AssistantsEmulator

        return AssistantsEmulator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(OpenAIAssistantsDialect())
