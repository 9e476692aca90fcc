"""A Chat Completions ``tools`` list back to neutral definitions (the inverse of `render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from toolbridge import ToolDefinition, WireFormatError

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
            found.append(_function(item.get("function"), f"{where}.function", item))
    return found


def _function(function: Any, where: str, item: Mapping[str, Any]) -> ToolDefinition:
    if not isinstance(function, Mapping):
        raise WireFormatError(DIALECT, where, "missing or not an object", item)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise WireFormatError(DIALECT, f"{where}.name", "missing or not a string", item)
    checks = (("description", str, "a string"), ("parameters", Mapping, "a JSON Schema object"),
              ("strict", bool, "a boolean"))
    for field, kind_of, what in checks:
        value = function.get(field)
        if value is not None and not isinstance(value, kind_of):
            raise WireFormatError(DIALECT, f"{where}.{field}", f"not {what}", item)
    fields: dict[str, Any] = {
        "name": name, "description": function.get("description") or "",
        "strict": function.get("strict"),
        "vendor_extras": {DIALECT: {"function": dict(function)}}}
    if function.get("parameters") is not None:
        fields["parameters"] = dict(function["parameters"])
    try:
        return ToolDefinition(**fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        raise WireFormatError(DIALECT, f"{where}.{field}".rstrip("."), error["msg"],
                              item) from None
