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
    ToolDefinition,
    ToolResult,
)
from .registry import DialectRegistry, dialects, get_dialect, plugin_manager, register_plugin
from .toolbox import Toolbox

__all__ = [
    "ArgumentError",
    "BackendError",
    "Content",
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
    "Script",
    "ScriptCall",
    "ScriptError",
    "ScriptedModel",
    "Secret",
    "StreamDropped",
    "TextPart",
    "ToolCall",
    "ToolContext",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "ToolResult",
    "Toolbox",
    "ToolbridgeError",
    "UnknownDialectError",
    "UsageError",
    "WireFormatError",
    "__version__",
    "asend_with_retries",
    "dialects",
    "get_dialect",
    "hookimpl",
    "output_text",
    "plugin_manager",
    "raise_for_backend",
    "register_plugin",
    "send_with_retries",
    "sse_frames",
]

__version__ = "0.1.0"

# Names whose modules pull in heavier libraries load on first access.
_LAZY: dict[str, str] = {
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
}

if TYPE_CHECKING:
    from ._http import (
        RetryPolicy,
        Secret,
        asend_with_retries,
        raise_for_backend,
        send_with_retries,
    )
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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolbridge' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
