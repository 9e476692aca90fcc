"""The Gemini API's ``generateContent``, as the toolbridge dialect ``gemini``.

Tools are ``functionDeclarations`` (``parameters`` as an OpenAPI-style ``Schema``, or
``parametersJsonSchema``: `render_declaration` picks the one that loses less); a candidate's
``model`` content lists its calls as ``{"functionCall": {id?, name, args}}`` parts, the first
carrying a ``thoughtSignature`` that must come back with that content; results go back as one
``user`` turn of ``{"functionResponse": {id?, name, response}}`` parts, one per call. There is
no hosted conversation: pass ``conversation=...`` to `toolbridge.Toolbox.handle` (with the
conversation's ``{"contents": [...]}``) for results kept in the store.

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

from .wire import DIALECT, MAX_RESULT_BYTES, MAX_TOOLS, NAME_PATTERN

if TYPE_CHECKING:
    from toolbridge.plugin import (
        CallRecord,
        ImportedTools,
        PendingCalls,
        PendingRecords,
        RenderedTools,
    )

    from . import declarations, translate
    from .client import AsyncGeminiClient, GeminiClient
    from .declarations import (
        json_schema_losses,
        render_declaration,
        render_parameters,
        render_tools,
        tools_field,
    )
    from .emulator import GeminiEmulator
    from .options import GeminiEmulatorOptions, GeminiServeOptions
    from .translate import GeminiCorrelation
else:
    declarations = lazy_module(f"{__name__}.declarations")
    translate = lazy_module(f"{__name__}.translate")

__all__ = [
    "AsyncGeminiClient",
    "GeminiClient",
    "GeminiCorrelation",
    "GeminiDialect",
    "GeminiEmulator",
    "GeminiEmulatorOptions",
    "GeminiServeOptions",
    "json_schema_losses",
    "render_declaration",
    "render_parameters",
    "render_tools",
    "tools_field",
]


class GeminiDialect(Dialect):
    """``generateContent`` on the Gemini API (``generativelanguage.googleapis.com``)."""

    name: ClassVar[str] = DIALECT
    # Results are JSON objects (`response`), never content parts; Google states no size limit
    # per part: the cap is ours (`wire.MAX_RESULT_BYTES`). Each call gets its own part, a
    # repeated id too: Gemini matches responses to calls by position, id and name.
    limits: ClassVar[DialectLimits] = DialectLimits(
        max_result_bytes=MAX_RESULT_BYTES, max_tools=MAX_TOOLS, name_pattern=NAME_PATTERN,
        repeated_result_ids=True)

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        """One ``FunctionDeclaration`` per tool; a request's ``tools`` is
        ``[{"functionDeclarations": definitions}]`` (`tools_field`)."""
        rendered = declarations.render_tools(tools, policy=policy)
        self.limits.check_tools(rendered.definitions, self.name)
        return rendered

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload)

    def read_calls_in(self, payload: Mapping[str, Any], conversation: str) -> PendingCalls:
        """Calls keyed ``(conversation, turn, id)``: the turn is the model content's position
        in ``{"contents": [...]}``, or a response's ``responseId``."""
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
        """``args`` is a ``Struct``: numbers are doubles, so integral values become ints
        where the schema says integer; stringified enum values get their type back."""
        return translate.decode_arguments(call.arguments, tool)

    def decode_record(self, record: CallRecord, tool: ToolDefinition) -> dict[str, Any]:
        return translate.decode_arguments(record.arguments, tool)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Function declarations of a ``tools`` list (other tool kinds skipped)."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, with the skipped tool kinds (search, code execution, ...)."""
        from .tools_import import import_tools

        return import_tools(definitions)


_LAZY = {
    "json_schema_losses": ".declarations", "render_declaration": ".declarations",
    "render_parameters": ".declarations", "render_tools": ".declarations",
    "tools_field": ".declarations",
    "GeminiCorrelation": ".translate",
    "GeminiEmulatorOptions": ".options", "GeminiServeOptions": ".options",
    "GeminiClient": ".client", "AsyncGeminiClient": ".client",
    "GeminiEmulator": ".emulator",
}

__getattr__ = lazy_attributes(__name__, _LAZY)


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(GeminiDialect())


_SDK_HINT = ('google-genai: genai.Client(api_key="test", '
             'http_options={{"base_url": "{base_url}"}})')
"""How the google-genai SDK reaches the emulator (``toolbridge emulate`` prints it)."""




@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:GeminiServeOptions",
                   f"{__name__}.backend:GeminiConnection", waits=False)]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:GeminiEmulatorOptions",
                     f"{__name__}.emulator:GeminiEmulator.from_options",
                     hint=_SDK_HINT)]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=60)]
