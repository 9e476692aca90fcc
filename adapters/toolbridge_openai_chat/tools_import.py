"""A Chat Completions ``tools`` list back to neutral definitions (the inverse of `render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, WireFormatError
from toolbridge.tools import read_function_tool

from .wire import DIALECT

__all__ = ["read_tools"]


def read_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]
               ) -> list[ToolDefinition]:
    """Function tools of a ``tools`` list (or a request body ``{"tools": [...]}``).

    ``custom`` tools are skipped; each function keeps its original in
    ``vendor_extras["openai-chat"]["function"]``, so while unchanged it renders back as it was.
    """
    data = definitions.get("tools") if isinstance(definitions, Mapping) else definitions
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Sequence):
        raise WireFormatError(DIALECT, "tools", "missing or not a list", definitions)
    found: list[ToolDefinition] = []
    for i, item in enumerate(data):
        where = f"tools[{i}]"
        if not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, where, "expected an object", item)
        kind = item.get("type")
        if not isinstance(kind, str):
            raise WireFormatError(DIALECT, f"{where}.type", "missing or not a string", item)
        if kind == "function":
            found.append(read_function_tool(item, where, DIALECT, nested=True,
                                            extras=_original))
    return found


def _original(function: Mapping[str, Any]) -> dict[str, Any]:
    return {"function": dict(function)}
