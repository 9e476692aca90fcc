"""An assistant's ``tools`` list back to neutral definitions (the inverse of `render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, WireFormatError
from toolbridge.plugin import ImportedTools, SkippedTool
from toolbridge.tools import read_function_tool

from .wire import DIALECT

__all__ = ["import_tools", "read_tools"]

_HOSTED = "a tool the Assistants API runs itself; it has no neutral form (toolbridge answers " \
          "function calls)"


def read_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]
               ) -> list[ToolDefinition]:
    """Function tools of a ``tools`` list (or ``{"tools": [...]}``, e.g. an assistant)."""
    return import_tools(definitions).definitions


def import_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]
                 ) -> ImportedTools:
    """Function tools of a ``tools`` list (or ``{"tools": [...]}``), and the others skipped.

    Other tool types (``code_interpreter``, ``file_search``) are reported as skipped; each
    definition keeps its original so that it renders back unchanged (as `tools_from_assistant`
    reads it).
    """
    data: Mapping[str, Any] = (definitions if isinstance(definitions, Mapping)
                               else {"tools": definitions})
    tools = data.get("tools")
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise WireFormatError(DIALECT, "tools", "missing or not a list", data)
    found: list[ToolDefinition] = []
    skipped: list[SkippedTool] = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, Mapping):
            raise WireFormatError(DIALECT, where, "expected an object", tool)
        kind = tool.get("type")
        if not isinstance(kind, str):
            raise WireFormatError(DIALECT, f"{where}.type", "missing or not a string", tool)
        if kind == "function":
            found.append(read_function_tool(tool, where, DIALECT, nested=True,
                                            extras=_original))
        else:
            skipped.append(SkippedTool(i, kind, _HOSTED))
    return ImportedTools(found, tuple(skipped))


def _original(function: Mapping[str, Any]) -> dict[str, Any]:
    return {"function": dict(function)}
