"""OpenAI Chat Completions (and every server that speaks it: Azure OpenAI, vLLM, Ollama,
LiteLLM), as the toolbridge dialect ``openai-chat``.

Tools are nested ``{"type": "function", "function": {...}}`` entries of each request; an
assistant message lists its calls in ``tool_calls`` (JSON-string arguments); each result goes
back as a ``{"role": "tool", "tool_call_id", "content"}`` message after that assistant message.
Failed calls are sent as the content ``{"error": "<message>"}`` (the API has no error flag).
There is no hosted conversation: pass ``conversation=...`` to `toolbridge.Toolbox.handle`
(with the conversation's ``{"messages": [...]}``) for results kept in the store.

Importing this package is light: the client and the emulator load on first use.
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
    Serves,
    hookimpl,
    lazy_attributes,
    lazy_module,
)

from .wire import DIALECT, MAX_CONTENT_CHARS, MAX_TOOLS

if TYPE_CHECKING:
    from toolbridge.plugin import CallRecord, PendingCalls, PendingRecords, RenderedTools

    from . import translate
    from .client import AsyncChatClient, ChatClient
    from .emulator import ChatEmulator
    from .options import ChatEmulatorOptions, ChatServeOptions
    from .stream import ChunkAssembler, assemble_chunks
    from .translate import ChatCorrelation
else:
    translate = lazy_module(f"{__name__}.translate")

__all__ = [
    "AsyncChatClient",
    "ChatClient",
    "ChatCorrelation",
    "ChatEmulator",
    "ChatEmulatorOptions",
    "ChatServeOptions",
    "ChunkAssembler",
    "OpenAIChatDialect",
    "assemble_chunks",
]


class OpenAIChatDialect(Dialect):
    """Chat Completions on any OpenAI-compatible server."""

    name: ClassVar[str] = DIALECT
    # Every listed call needs its own tool message, a repeated id too (a server may repeat one).
    limits: ClassVar[DialectLimits] = DialectLimits(
        max_result_chars=MAX_CONTENT_CHARS, max_tools=MAX_TOOLS, repeated_result_ids=True)

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        rendered = translate.render_tools(tools, policy=policy)
        self.limits.check_tools(rendered.definitions, self.name)
        return rendered

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload)

    def read_calls_in(self, payload: Mapping[str, Any], conversation: str) -> PendingCalls:
        """Calls keyed ``(conversation, turn, tool_call_id)``: the turn is the assistant
        message's position in ``{"messages": [...]}``, or a ``chat.completion``'s id."""
        return translate.read_calls(payload, conversation)

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return translate.write_results(results)

    def read_records(self, payload: Mapping[str, Any],
                     conversation: str | None = None) -> PendingRecords:
        return translate.read_records(payload, conversation)

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
        """Function tools of a ``tools`` list (``custom`` tools are skipped)."""
        from .tools_import import read_tools

        return read_tools(definitions)

_LAZY = {
    "ChatCorrelation": ".translate",
    "ChunkAssembler": ".stream", "assemble_chunks": ".stream",
    "ChatEmulatorOptions": ".options",
    "ChatServeOptions": ".options",
   "ChatClient": ".client", "AsyncChatClient": ".client", "ChatEmulator": ".emulator"}


__getattr__ = lazy_attributes(__name__, _LAZY)


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(OpenAIChatDialect())


_SDK_HINT = ('OpenAI SDK base URL: {base_url}/v1  '
             '(OpenAI(base_url="{base_url}/v1", api_key="test"))')
"""How the openai SDK reaches the emulator (``toolbridge emulate`` prints it)."""




@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:ChatServeOptions",
                   f"{__name__}.backend:ChatConnection", waits=False)]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:ChatEmulatorOptions",
                     f"{__name__}.emulator:ChatEmulator.from_options",
                     hint=_SDK_HINT)]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=50)]
