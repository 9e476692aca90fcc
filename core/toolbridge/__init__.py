"""toolbridge: write a tool handler once, serve it on every function-calling backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._output import output_text
from .context import ToolContext
from .dialect import Dialect, DialectLimits, PendingCalls, RenderedTools
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
from .hookspecs import hookimpl
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
from .registry import DialectRegistry, dialects, get_dialect, plugin_manager, register_plugin
from .toolbox import Toolbox

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
    "SSEDecoder": "._sse",
    "Transcript": ".transcript",
    "TranscriptEntry": ".transcript",
    "SchemaLoss": "._schema",
    "Conversion": "._schema",
    "convert_schema": "._schema",
    "to_json_schema": "._schema",
    "normalize_schema": "._schema",
    "compile_decoder": "._schema",
    "decode_arguments": "._schema",
    "tools_from_openapi": "._schema",
    "build_http_request": "._schema",
    "RetryPolicy": "._http",
    "Secret": "._http",
    "send_with_retries": "._http",
    "asend_with_retries": "._http",
    "raise_for_backend": "._http",
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
    "PostgresStore": "._store_postgres",
    "Oversize": "._limits",
    "SizePolicy": "._limits",
}

if TYPE_CHECKING:
    from ._http import (
        RetryPolicy,
        Secret,
        asend_with_retries,
        raise_for_backend,
        send_with_retries,
    )
    from ._limits import Oversize, SizePolicy
    from ._schema import (
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
    from ._sse import SSEDecoder
    from ._store_postgres import PostgresStore
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
    from .store import (
        MemoryStore,
        ResultStore,
        SqliteStore,
        StoreClaim,
        StoredResult,
        StoreKey,
        open_store,
    )
    from .transcript import Transcript, TranscriptEntry


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolbridge' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
