"""Tool definitions from Python functions and JSON Schemas, and how a handler is called.

Applications define tools with `toolbridge.Toolbox`; this module is what the toolbox and the
runtime build on: a function's signature read into a definition, the compiled argument check,
an OpenAI-style function tool read back (`read_function_tool`, for dialects' tool imports),
and the `ToolContext` a handler may ask for (`heartbeats` routes its `ToolContext.heartbeat`).
"""

from ..model import ToolRetry
from ._context import HeartbeatHook, ToolContext, heartbeats
from ._openai import read_function_tool
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
    "read_function_tool",
    "schema_validator",
]
