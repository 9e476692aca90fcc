"""toolbridge: write a tool handler once, serve it on every function-calling backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    ArgumentError,
    BackendError,
    PluginError,
    SchemaConversionError,
    ToolbridgeError,
    ToolDefinitionError,
    ToolError,
    UnknownDialectError,
    UsageError,
    WireFormatError,
)
from .model import (
    Content,
    Correlation,
    ImagePart,
    TextPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
)
from .plugin import (
    Dialect,
    DialectLimits,
    DialectRegistry,
    PendingCalls,
    RenderedTools,
    dialects,
    get_dialect,
    hookimpl,
    plugin_manager,
    register_plugin,
)
from .runtime import output_text
from .toolbox import Toolbox
from .tools import ToolContext

__all__ = [
    "ArgumentError",
    "BackendError",
    "Content",
    "Conversion",
    "Correlation",
    "Dialect",
    "DialectLimits",
    "DialectRegistry",
    "Emulator",
    "Faults",
    "ImagePart",
    "Journal",
    "PendingCalls",
    "PluginError",
    "RenderedTools",
    "RetryPolicy",
    "RunningEmulator",
    "SchemaConversionError",
    "SSEDecoder",
    "SchemaLoss",
    "Script",
    "ScriptCall",
    "ScriptError",
    "ScriptedModel",
    "Secret",
    "StreamDropped",
    "TextPart",
    "ToolCall",
    "ToolChoice",
    "ToolContext",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "ToolResult",
    "Toolbox",
    "ToolbridgeError",
    "Transcript",
    "TranscriptEntry",
    "UnknownDialectError",
    "UsageError",
    "WireFormatError",
    "__version__",
    "asend_with_retries",
    "build_http_request",
    "compile_decoder",
    "convert_schema",
    "decode_arguments",
    "dialects",
    "get_dialect",
    "hookimpl",
    "normalize_schema",
    "output_text",
    "plugin_manager",
    "raise_for_backend",
    "register_plugin",
    "send_with_retries",
    "sse_frames",
    "to_json_schema",
    "tools_from_openapi",
    "MemoryStore",
    "Oversize",
    "ResultStore",
    "SizePolicy",
    "SqliteStore",
    "StoreClaim",
    "StoreKey",
    "StoredResult",
    "open_store",
    "PostgresStore",
]

__version__ = "0.1.0"

# Names whose modules pull in heavier libraries load on first access.
_LAZY: dict[str, str] = {
    "SSEDecoder": ".http",
    "Transcript": ".serve",
    "TranscriptEntry": ".serve",
    "SchemaLoss": ".schema",
    "Conversion": ".schema",
    "convert_schema": ".schema",
    "to_json_schema": ".schema",
    "normalize_schema": ".schema",
    "compile_decoder": ".schema",
    "decode_arguments": ".schema",
    "tools_from_openapi": ".schema",
    "build_http_request": ".schema",
    "RetryPolicy": ".http",
    "Secret": ".http",
    "send_with_retries": ".http",
    "asend_with_retries": ".http",
    "raise_for_backend": ".http",
    "Emulator": ".emulation",
    "Script": ".emulation",
    "ScriptCall": ".emulation",
    "ScriptError": ".emulation",
    "ScriptedModel": ".emulation",
    "Faults": ".emulation",
    "Journal": ".emulation",
    "RunningEmulator": ".emulation",
    "StreamDropped": ".emulation",
    "sse_frames": ".emulation",
    "MemoryStore": ".store",
    "ResultStore": ".store",
    "SqliteStore": ".store",
    "StoreClaim": ".store",
    "StoreKey": ".store",
    "StoredResult": ".store",
    "open_store": ".store",
    "PostgresStore": ".store",
    "Oversize": ".runtime",
    "SizePolicy": ".runtime",
}

if TYPE_CHECKING:
    from .emulation import (
        Emulator,
        Faults,
        Journal,
        RunningEmulator,
        Script,
        ScriptCall,
        ScriptedModel,
        ScriptError,
        StreamDropped,
        sse_frames,
    )
    from .http import (
        RetryPolicy,
        Secret,
        SSEDecoder,
        asend_with_retries,
        raise_for_backend,
        send_with_retries,
    )
    from .runtime import Oversize, SizePolicy
    from .schema import (
        Conversion,
        SchemaLoss,
        build_http_request,
        compile_decoder,
        convert_schema,
        decode_arguments,
        normalize_schema,
        to_json_schema,
        tools_from_openapi,
    )
    from .serve import Transcript, TranscriptEntry
    from .store import (
        MemoryStore,
        PostgresStore,
        ResultStore,
        SqliteStore,
        StoreClaim,
        StoredResult,
        StoreKey,
        open_store,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolbridge' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
