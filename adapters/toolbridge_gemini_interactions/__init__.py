"""Gemini Interactions API (``client.interactions`` in google-genai), as the toolbridge
dialect ``gemini-interactions``.

Tools are flat ``{"type": "function", "name", "description", "parameters"}`` entries of each
create; an interaction that ``requires_action`` lists its calls as ``function_call`` steps
(``id``, ``name``, ``arguments`` as an object); the results go back as ``function_result``
input steps (``call_id``, ``name``, ``result``, ``is_error``) of the next create, which names
the interaction that asked in ``previous_interaction_id``. The service holds the chain.

Importing this package is light: the client and the emulator load on first use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from toolbridge import ToolChoice, ToolDefinition, ToolResult
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

from .wire import DIALECT, MAX_RESULT_CHARS, MAX_TOOLS, NAME_PATTERN

if TYPE_CHECKING:
    from toolbridge.plugin import (
        CallRecord,
        ImportedTools,
        PendingCalls,
        PendingRecords,
        RenderedTools,
    )

    from . import translate
    from .client import AsyncInteractionsClient, InteractionsClient
    from .emulator import InteractionsEmulator
    from .options import InteractionsEmulatorOptions, InteractionsServeOptions
    from .translate import InteractionCorrelation
else:
    translate = lazy_module(f"{__name__}.translate")

__all__ = [
    "AsyncInteractionsClient",
    "GeminiInteractionsDialect",
    "InteractionCorrelation",
    "InteractionsClient",
    "InteractionsEmulator",
    "InteractionsEmulatorOptions",
    "InteractionsServeOptions",
]


class GeminiInteractionsDialect(Dialect):
    """The Interactions API of the Gemini API (``/v1/interactions``)."""

    name: ClassVar[str] = DIALECT
    limits: ClassVar[DialectLimits] = DialectLimits(
        max_result_chars=MAX_RESULT_CHARS, max_tools=MAX_TOOLS, name_pattern=NAME_PATTERN,
        content_parts=True)

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        rendered = translate.render_tools(tools, policy=policy)
        self.limits.check_tools(rendered.definitions, self.name)
        return rendered

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload)

    def read_calls_in(self, payload: Mapping[str, Any], conversation: str) -> PendingCalls:
        """`read_calls`, keying the store by ``conversation`` (the chain's own id is that of
        its first interaction, which later interactions do not name)."""
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

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """Function tools of a ``tools`` list (the service's own tools are skipped)."""
        return self.import_tools(definitions).definitions

    def import_tools(self, definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
        """`read_tools`, with the skipped entries (the service's own tools)."""
        from .tools_import import import_tools

        return import_tools(definitions)


_LAZY = {
    "InteractionCorrelation": ".translate",
    "InteractionsEmulatorOptions": ".options", "InteractionsServeOptions": ".options",
    "InteractionsClient": ".client", "AsyncInteractionsClient": ".client",
    "InteractionsEmulator": ".emulator",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(GeminiInteractionsDialect())


_SDK_HINT = ('google-genai: genai.Client(api_key="test", http_options={{"base_url": '
             '"{base_url}"}}).interactions')
"""How google-genai reaches the emulator (``toolbridge emulate`` prints it)."""




@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:InteractionsServeOptions",
                   f"{__name__}.backend:InteractionsConnection")]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:InteractionsEmulatorOptions",
                     f"{__name__}.emulator:InteractionsEmulator.from_options",
                     hint=_SDK_HINT)]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=60)]
