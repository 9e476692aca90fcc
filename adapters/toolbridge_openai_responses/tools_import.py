"""A Responses ``tools`` list back to neutral definitions (the inverse of `render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, WireFormatError
from toolbridge.tools import read_function_tool

from .wire import DIALECT

__all__ = ["read_tools"]


def read_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]
               ) -> list[ToolDefinition]:
    """Function tools of a ``tools`` list (or ``{"tools": [...]}``, e.g. a Foundry agent's
    ``definition``), namespaces flattened.

    ``tool_search``, hosted and custom tools are skipped. Each function keeps its original in
    ``vendor_extras["openai-responses"]["function"]`` (and its namespace), so while unchanged
    it renders back as it was.
    """
    data = definitions.get("tools") if isinstance(definitions, Mapping) else definitions
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Sequence):
        raise WireFormatError(DIALECT, "tools", "missing or not a list", definitions)
    found: list[ToolDefinition] = []
    for i, item in enumerate(data):
        where = f"tools[{i}]"
        kind = _kind(item, where)
        if kind == "function":
            found.append(_function(item, where, None))
        elif kind == "namespace":
            name = item.get("name")
            if not isinstance(name, str) or not name:
                raise WireFormatError(DIALECT, f"{where}.name", "missing or not a string", item)
            members = item.get("tools")
            if not isinstance(members, list):
                raise WireFormatError(DIALECT, f"{where}.tools", "missing or not a list", item)
            space = {"name": name, "description": str(item.get("description") or "")}
            for j, member in enumerate(members):
                if _kind(member, f"{where}.tools[{j}]") == "function":
                    found.append(_function(member, f"{where}.tools[{j}]", space))
    return found


def _kind(item: Any, where: str) -> str:
    if not isinstance(item, Mapping):
        raise WireFormatError(DIALECT, where, "expected an object", item)
    kind = item.get("type")
    if not isinstance(kind, str):
        raise WireFormatError(DIALECT, f"{where}.type", "missing or not a string", item)
    return kind


def _function(item: Mapping[str, Any], where: str, space: dict[str, str] | None
              ) -> ToolDefinition:
    def original(function: Mapping[str, Any]) -> dict[str, Any]:
        kept: dict[str, Any] = {"function": dict(function)}
        if space is not None:
            kept["namespace"] = space
        return kept

    return read_function_tool(item, where, DIALECT, extras=original,
                              reads=("strict", "defer_loading", "output_schema"))
