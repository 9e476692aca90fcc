"""OpenAI Responses API (with Conversations, Azure OpenAI and the Azure Foundry Agent Service),
as the toolbridge dialect ``openai-responses``.

Tools are flat ``{"type": "function", "name", "parameters", "strict"}`` entries of each request;
a finished response lists its calls as ``function_call`` items of ``output`` (JSON-string
arguments); the results go back as ``function_call_output`` input items of the next request,
continuing by ``previous_response_id`` or ``conversation``. Failed calls are sent as the output
text ``{"error": "<message>"}`` (the API has no error flag).

Importing this package is light: the client and the emulator load on first use.
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

from .wire import DIALECT, MAX_OUTPUT_CHARS, MAX_TOOLS

if TYPE_CHECKING:
    from toolbridge.plugin import Connection, PendingCalls, RenderedTools, ServeOptions

    from . import translate
    from .client import (
        AsyncResponsesClient,
        ResponsesClient,
        ResponseStreamError,
        StreamGatherer,
    )
    from .emulator import ResponsesEmulator
    from .migration import ConversationsTarget, FoundryTarget, load_config
    from .options import ResponsesEmulatorOptions, ResponsesServeOptions
    from .translate import ResponsesCorrelation
else:
    translate = lazy_module(f"{__name__}.translate")

__all__ = [
    "AsyncResponsesClient",
    "ConversationsTarget",
    "FoundryTarget",
    "OpenAIResponsesDialect",
    "ResponseStreamError",
    "ResponsesClient",
    "ResponsesCorrelation",
    "ResponsesEmulator",
    "ResponsesEmulatorOptions",
    "ResponsesServeOptions",
    "StreamGatherer",
    "load_config",
]


class OpenAIResponsesDialect(Dialect):
    """Responses API: OpenAI, Azure OpenAI ``/openai/v1/``, and Foundry project endpoints."""

    name: ClassVar[str] = DIALECT
    limits: ClassVar[DialectLimits] = DialectLimits(
        max_result_chars=MAX_OUTPUT_CHARS, max_tools=MAX_TOOLS, content_parts=True)
    serve_options = lazy_options(f"{__name__}.options:ResponsesServeOptions")
    emulator_options = lazy_options(f"{__name__}.options:ResponsesEmulatorOptions")

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        rendered = translate.render_tools(tools, policy=policy)
        self.limits.check_tools(rendered.definitions, self.name)
        return rendered

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload)

    def read_calls_in(self, payload: Mapping[str, Any], conversation: str) -> PendingCalls:
        """`read_calls`, keying the store by ``conversation`` when the response names none."""
        return translate.read_calls(payload, conversation)

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return translate.write_results(results)

    def render_tool_choice(self, choice: ToolChoice) -> Any:
        return translate.render_tool_choice(choice)

    def decode_arguments(self, call: ToolCall, tool: ToolDefinition) -> dict[str, Any]:
        """Undo strict mode (`toolbridge.schema.decode_strict_arguments`)."""
        from toolbridge.schema import decode_strict_arguments

        return decode_strict_arguments(tool.parameters, tool.strict, call.arguments)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Function tools of a ``tools`` list (namespaces flattened, others skipped)."""
        from .tools_import import read_tools

        return read_tools(definitions)

    def conversation_of(self, payload: Mapping[str, Any]) -> str:
        try:
            response, _ = translate.response_of(payload)
        except Exception:
            return ""
        conversation = response.get("conversation")
        if isinstance(conversation, Mapping):
            conversation = conversation.get("id")
        if isinstance(conversation, str) and conversation:
            return conversation
        value = response.get("id")
        return value if isinstance(value, str) else ""

    def connect(self, options: ServeOptions, tools: Sequence[ToolDefinition]) -> Connection:
        """A `ResponsesConnection` (the serve driver's seam) for ``options``
        (`ResponsesServeOptions`)."""
        from .backend import ResponsesConnection
        from .options import ResponsesServeOptions

        return ResponsesConnection(ResponsesServeOptions.parse(options), tools)

    def migration_target(self, options: Mapping[str, Any]) -> Any:
        """A `FoundryTarget` (prompt agents + conversations) when ``options`` name a
        ``project_endpoint``, else a `ConversationsTarget` (configuration files +
        conversations; ``config_dir`` says where)."""
        from .migration import ConversationsTarget, FoundryTarget

        if options.get("project_endpoint"):
            return FoundryTarget(**options)
        return ConversationsTarget(**options)

    def create_emulator(self, options: Any = None, **more: Any) -> Any:
        """The emulated Responses API (`ResponsesEmulator`): OpenAI, Azure and Foundry URL
        forms. ``options``: `ResponsesEmulatorOptions` or its fields as keywords."""
        from .emulator import ResponsesEmulator
        from .options import ResponsesEmulatorOptions

        parsed = ResponsesEmulatorOptions.parse(options, **more)
        return ResponsesEmulator(**dict(parsed))


_LAZY = {
    "ResponsesCorrelation": ".translate",
    "ResponsesEmulatorOptions": ".options",
    "ResponsesServeOptions": ".options",
    "ResponsesClient": ".client", "AsyncResponsesClient": ".client",
    "ResponseStreamError": ".client", "StreamGatherer": ".client",
    "ResponsesEmulator": ".emulator",
    "ConversationsTarget": ".migration", "FoundryTarget": ".migration",
    "load_config": ".migration",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(OpenAIResponsesDialect())
