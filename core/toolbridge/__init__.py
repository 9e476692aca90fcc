"""toolbridge: write a tool handler once, serve it on every function-calling backend.

The top level is what an application needs: `Toolbox`, the neutral model, the errors, the
installed dialects and the result store. The rest lives in public submodules:
`toolbridge.plugin` (writing a dialect), `toolbridge.schema`, `toolbridge.tools`,
`toolbridge.runtime`, `toolbridge.store`, `toolbridge.http`, `toolbridge.serve`,
`toolbridge.migration`, `toolbridge.telemetry` and `toolbridge.testing` (with
`toolbridge.testing.emulators`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ._lazy import lazy_attributes as _lazy_attributes
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
    DocumentPart,
    ImagePart,
    TextPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
)
from .plugin import dialects, get_dialect

__all__ = [
    "ArgumentError",
    "BackendError",
    "Content",
    "Correlation",
    "DocumentPart",
    "ImagePart",
    "PluginError",
    "ResultStore",
    "SchemaConversionError",
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
    "UnknownDialectError",
    "UsageError",
    "WireFormatError",
    "__version__",
    "dialects",
    "get_dialect",
    "open_store",
]

__version__ = "0.1.0"

# A library logs, the application decides where it goes: without logging configured, nothing
# reaches stderr (Python's last-resort handler would print every failing handler's traceback).
logging.getLogger("toolbridge").addHandler(logging.NullHandler())

# Names whose modules `import toolbridge` does not otherwise load come on first access: the
# runtime (with asyncio and the worker threads), the store, tool inspection, the serve driver.
# Plugin discovery imports every adapter, which imports only `toolbridge.plugin` and the model.
_LAZY: dict[str, str] = {
    "ResultStore": ".store",
    "ToolContext": ".tools",
    "Toolbox": ".toolbox",
    "Transcript": ".serve",
    "open_store": ".store",
}

if TYPE_CHECKING:
    from .serve import Transcript
    from .store import ResultStore, open_store
    from .toolbox import Toolbox
    from .tools import ToolContext


__getattr__ = _lazy_attributes(__name__, _LAZY)
