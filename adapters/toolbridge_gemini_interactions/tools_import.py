"""An Interactions ``tools`` list back to neutral definitions (the inverse of `render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, WireFormatError
from toolbridge.plugin import ImportedTools, SkippedTool
from toolbridge.tools import read_function_tool

from .wire import DIALECT

__all__ = ["import_tools", "read_tools"]

_FIELDS = ("type", "name", "description", "parameters", "defer_loading")


def read_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]
               ) -> list[ToolDefinition]:
    """Neutral definitions of the function entries of a ``tools`` list."""
    return import_tools(definitions).definitions


def import_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]
                 ) -> ImportedTools:
    """The function entries of a ``tools`` list (or a create body ``{"tools": [...]}``), and
    the service's own tools (``google_search``, ``code_execution``, ...) reported as skipped.
    ``short_description`` goes to ``vendor_extras["gemini-interactions"]``."""
    data = definitions.get("tools") if isinstance(definitions, Mapping) else definitions
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Sequence):
        raise WireFormatError(DIALECT, "tools", "missing or not a list", definitions)
    found: list[ToolDefinition] = []
    skipped: list[SkippedTool] = []
    for index, item in enumerate(data):
        where = f"tools[{index}]"
        if not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, where, "expected an object", item)
        kind = item.get("type")
        if not isinstance(kind, str):
            raise WireFormatError(DIALECT, f"{where}.type", "missing or not a string", item)
        if kind == "function":
            found.append(read_function_tool(item, where, DIALECT, reads=("defer_loading",),
                                            extras=_extras))
        else:
            skipped.append(SkippedTool(index, kind, "a tool the service runs itself; it has "
                                       "no neutral form (toolbridge answers function calls)"))
    return ImportedTools(found, tuple(skipped))


def _extras(function: Mapping[str, Any]) -> dict[str, Any]:
    """Keys the neutral form has no field for (``short_description``)."""
    return {k: v for k, v in function.items() if k not in _FIELDS}
