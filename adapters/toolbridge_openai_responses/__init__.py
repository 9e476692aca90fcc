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

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from toolbridge import ToolCall, ToolChoice, ToolDefinition, ToolResult
from toolbridge.plugin import (
    ApprovesItems,
    Demos,
    Dialect,
    DialectLimits,
    DialectRegistry,
    Emulates,
    MigratesTo,
    Serves,
    hookimpl,
    lazy_attributes,
    lazy_module,
)

from .wire import DIALECT, MAX_OUTPUT_CHARS, MAX_TOOLS

if TYPE_CHECKING:
    from toolbridge.plugin import CallRecord, PendingCalls, PendingRecords, RenderedTools

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
        """Function tools of a ``tools`` list (namespaces flattened, others skipped)."""
        from .tools_import import read_tools

        return read_tools(definitions)


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


_SDK_HINT = ('OpenAI SDK base URL: {base_url}/v1  '
             '(OpenAI(base_url="{base_url}/v1", api_key="test"))')
"""How the openai SDK reaches the emulator (``toolbridge emulate`` prints it)."""




def _token_env(options: dict[str, Any]) -> dict[str, Any]:
    """``token_env=VAR``: a bearer token read from that variable on every request."""
    variable = options.pop("token_env", None)
    if variable is not None:
        options["token_provider"] = lambda: os.environ[str(variable)]
    return options


def _conversations_target(options: dict[str, Any]) -> Any:
    """A `ConversationsTarget` (configuration files + conversations) for client ``options``."""
    from toolbridge import UsageError

    from .migration import ConversationsTarget

    if options.get("project_endpoint"):
        raise UsageError("-o project_endpoint is for --to azure-foundry, not openai-responses")
    return ConversationsTarget(**_token_env(options))


def _foundry_target(options: dict[str, Any]) -> Any:
    """A `FoundryTarget` (saved agent versions + conversations): ``project_endpoint`` and an
    Entra credential (``token_env=VAR``, or azure-identity's default credential)."""
    from toolbridge import UsageError

    from .migration import FoundryTarget

    if not options.get("project_endpoint"):
        raise UsageError("azure-foundry needs -o project_endpoint=https://<resource>"
                         ".services.ai.azure.com/api/projects/<project>")
    options = _token_env(options)
    if "token_provider" not in options and "credential" not in options:
        try:
            from azure.identity import DefaultAzureCredential
        except ImportError:
            raise UsageError("azure-foundry needs an Entra credential: install "
                             "azure-identity, or pass -o token_env=VARIABLE") from None
        options["credential"] = DefaultAzureCredential()
    return FoundryTarget(**options)


@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:ResponsesServeOptions",
                   f"{__name__}.backend:ResponsesConnection")]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:ResponsesEmulatorOptions",
                     f"{__name__}.emulator:ResponsesEmulator.from_options",
                     hint=_SDK_HINT)]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=40)]


@hookimpl
def toolbridge_migration_targets() -> list[MigratesTo]:
    return [MigratesTo("openai-responses", DIALECT, _conversations_target,
                       summary="Responses + Conversations: configuration files and conversations"),
            MigratesTo("azure-foundry", DIALECT, _foundry_target,
                       summary="Foundry Agent Service: saved agent versions and conversations")]


@hookimpl
def toolbridge_approval_items() -> list[ApprovesItems]:
    return [ApprovesItems(DIALECT, f"{__name__}.approvals:read_approval",
                          f"{__name__}.approvals:answer_approval",
                          f"{__name__}.approvals:approval_body")]
