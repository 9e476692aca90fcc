"""``agent.tools`` back to neutral definitions (the inverse of `tools_to_wire`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, WireFormatError
from toolbridge.plugin import ImportedTools, SkippedTool
from toolbridge.tools import read_function_tool

from .translate import DIALECT

__all__ = ["import_tools", "read_tools"]

_FIELDS = ("type", "name", "description", "parameters", "defer_loading", "strict")


def read_tools(definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
    """Neutral definitions of the function entries of an ``agent.tools`` list."""
    return import_tools(definitions).definitions


def import_tools(definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
    """Neutral definitions of the function entries of an ``agent.tools`` list, and the others.

    ``tool_search`` and other non-function entries are reported as skipped; ``defer_loading``
    is kept, and any other key of a function (``async``, ...) goes to
    ``vendor_extras["openai-agents"]``, so the tool renders back the same.
    """
    if isinstance(definitions, (str, bytes, Mapping)) or not isinstance(definitions, Sequence):
        raise WireFormatError(DIALECT, "tools", "expected a list of tools", definitions)
    found: list[ToolDefinition] = []
    skipped: list[SkippedTool] = []
    for index, item in enumerate(definitions):
        where = f"tools[{index}]"
        if not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, where, "expected an object", item)
        kind = item.get("type")
        if not isinstance(kind, str):
            raise WireFormatError(DIALECT, f"{where}.type", "missing or not a string", item)
        if kind == "function":
            found.append(_function(item, where))
        elif kind == "tool_search":
            skipped.append(SkippedTool(index, kind, "not a function; toolbridge adds it again "
                                       "when a tool has defer_loading"))
        else:
            skipped.append(SkippedTool(index, kind, "a tool the service runs itself; it has no "
                                       "neutral form (toolbridge answers function calls)"))
    return ImportedTools(found, tuple(skipped))


def _function(item: Mapping[str, Any], where: str) -> ToolDefinition:
    return read_function_tool(item, where, DIALECT, reads=("defer_loading",), extras=_extras)


def _extras(function: Mapping[str, Any]) -> dict[str, Any]:
    """Keys the neutral form has no field for (``async``, ...); ``strict`` is never sent."""
    return {k: v for k, v in function.items() if k not in _FIELDS}
