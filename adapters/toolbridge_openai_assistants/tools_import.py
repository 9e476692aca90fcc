"""An assistant's ``tools`` list back to neutral definitions (the inverse of `render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, WireFormatError
from toolbridge.plugin import ImportedTools, SkippedTool

from .migrate import tools_from_assistant
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

    Entries are checked field by field, then read by `tools_from_assistant`: other tool
    types (``code_interpreter``, ``file_search``) are reported as skipped, and each definition
    keeps its original so that it renders back unchanged.
    """
    data: Mapping[str, Any] = (definitions if isinstance(definitions, Mapping)
                               else {"tools": definitions})
    tools = data.get("tools")
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise WireFormatError(DIALECT, "tools", "missing or not a list", data)
    for i, tool in enumerate(tools):
        _check(tool, f"tools[{i}]")
    skipped = tuple(SkippedTool(i, str(tool["type"]), _HOSTED) for i, tool in enumerate(tools)
                    if tool["type"] != "function")
    return ImportedTools(tools_from_assistant({"tools": list(tools)}), skipped)


def _check(tool: Any, where: str) -> None:
    if not isinstance(tool, Mapping):
        raise WireFormatError(DIALECT, where, "expected an object", tool)
    kind = tool.get("type")
    if not isinstance(kind, str):
        raise WireFormatError(DIALECT, f"{where}.type", "missing or not a string", tool)
    if kind != "function":
        return
    function = tool.get("function")
    if not isinstance(function, Mapping):
        raise WireFormatError(DIALECT, f"{where}.function", "missing or not an object", tool)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise WireFormatError(DIALECT, f"{where}.function.name", "missing or not a string", tool)
    checks = (("description", str, "a string"), ("parameters", Mapping, "a JSON Schema object"),
              ("strict", bool, "a boolean"))
    for field, kind_of, what in checks:
        value = function.get(field)
        if value is not None and not isinstance(value, kind_of):
            raise WireFormatError(DIALECT, f"{where}.function.{field}", f"not {what}", tool)
