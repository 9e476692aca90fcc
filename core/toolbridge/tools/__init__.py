"""Tool definitions from Python functions and JSON Schemas, and how a handler is called.

Applications define tools with `toolbridge.Toolbox`; this module is what the toolbox and the
runtime build on: a function's signature read into a definition, the compiled argument check,
and the `ToolContext` a handler may ask for (`heartbeats` routes its `ToolContext.heartbeat`).
"""

from ..model import ToolRetry
from ._context import HeartbeatHook, ToolContext, heartbeats
from ._registered import NeedsApproval, RegisteredTool, schema_validator
from ._signature import FunctionSignature, inspect_function

__all__ = [
    "FunctionSignature",
    "HeartbeatHook",
    "NeedsApproval",
    "RegisteredTool",
    "ToolContext",
    "ToolRetry",
    "heartbeats",
    "inspect_function",
    "schema_validator",
]
