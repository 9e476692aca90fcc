"""The Anthropic Messages API (``POST /v1/messages``) as the toolbridge dialect
``anthropic-messages``.

Tools are ``{name, description, input_schema, strict?}`` entries of each request
(`toolbridge_anthropic_messages.tools`: strictness follows Anthropic's own policy); an
assistant message asks with ``tool_use`` blocks ``{id, name, input}`` (``stop_reason:
"tool_use"``); the next user message answers with one ``tool_result`` block ``{tool_use_id,
content, is_error?}`` per ``tool_use``, before any other content. There is no hosted
conversation: pass ``conversation=...`` to `toolbridge.Toolbox.handle` (with the
conversation's ``{"messages": [...]}``) for results kept in the store.

Importing this package is light: the schema engine, the client and the emulator load on
first use.
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

from .wire import DIALECT, MAX_RESULT_CHARS, NAME_PATTERN

if TYPE_CHECKING:
    from toolbridge.plugin import (
        CallRecord,
        ImportedTools,
        PendingCalls,
        PendingRecords,
        RenderedTools,
    )

    from . import tools as tool_rendering
    from . import translate
    from .client import AsyncMessagesClient, MessagesClient
    from .emulator import MessagesEmulator
    from .options import MessagesEmulatorOptions, MessagesServeOptions
    from .stream import MessageAssembler, assemble_events
    from .tools import InputSchema, input_schema, render_tool, render_tools, strict_load
    from .translate import MessagesCorrelation
else:
    translate = lazy_module(f"{__name__}.translate")
    tool_rendering = lazy_module(f"{__name__}.tools")

__all__ = [
    "AnthropicMessagesDialect",
    "AsyncMessagesClient",
    "InputSchema",
    "MessageAssembler",
    "MessagesClient",
    "MessagesCorrelation",
    "MessagesEmulator",
    "MessagesEmulatorOptions",
    "MessagesServeOptions",
    "assemble_events",
    "input_schema",
    "render_tool",
    "render_tools",
    "strict_load",
]


class AnthropicMessagesDialect(Dialect):
    """The Messages API (Claude), stateless like Chat Completions."""

    name: ClassVar[str] = DIALECT
    limits: ClassVar[DialectLimits] = DialectLimits(
        max_result_chars=MAX_RESULT_CHARS, name_pattern=NAME_PATTERN, content_parts=True)

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        """Each tool with its ``input_schema``; the toolset within the strict limits."""
        rendered = tool_rendering.render_tools(tools, policy=policy)
        self.limits.check_tools(rendered.definitions, self.name)
        return rendered

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload)

    def read_calls_in(self, payload: Mapping[str, Any], conversation: str) -> PendingCalls:
        """Calls keyed ``(conversation, turn, tool_use_id)``: the turn is the assistant
        message's position in ``{"messages": [...]}``, or the message's id."""
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
        """A strict tool whose root was wrapped as ``{"value": ...}`` is unwrapped."""
        return _decode(call.arguments, tool)

    def decode_record(self, record: CallRecord, tool: ToolDefinition) -> dict[str, Any]:
        return _decode(record.arguments, tool)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Custom tools of a ``tools`` list (server tools are skipped)."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """Custom tools of a ``tools`` list; server tools (``web_search_...``) are skipped,
        each with its reason."""
        from .tools_import import import_tools

        return import_tools(definitions)


def _decode(arguments: dict[str, Any], tool: ToolDefinition) -> dict[str, Any]:
    if tool.strict is not True:
        return arguments
    from toolbridge.schema import unwrap_arguments

    unwrapped = unwrap_arguments(tool.parameters, "anthropic-strict", arguments)
    return unwrapped if isinstance(unwrapped, dict) else dict(arguments)


_LAZY = {
    "MessagesCorrelation": ".translate",
    "MessageAssembler": ".stream", "assemble_events": ".stream",
    "MessagesEmulatorOptions": ".options", "MessagesServeOptions": ".options",
    "MessagesClient": ".client", "AsyncMessagesClient": ".client",
    "MessagesEmulator": ".emulator",
    "InputSchema": ".tools", "input_schema": ".tools", "render_tool": ".tools",
    "render_tools": ".tools", "strict_load": ".tools",
}

__getattr__ = lazy_attributes(__name__, _LAZY)


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(AnthropicMessagesDialect())


_SDK_HINT = ('Anthropic SDK base URL: {base_url}  '
             '(Anthropic(base_url="{base_url}", api_key="test"))')
"""How the anthropic SDK reaches the emulator (``toolbridge emulate`` prints it)."""




@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:MessagesServeOptions",
                   f"{__name__}.backend:MessagesConnection", waits=False)]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:MessagesEmulatorOptions",
                     f"{__name__}.emulator:MessagesEmulator.from_options",
                     hint=_SDK_HINT)]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=55)]
