"""A Messages ``tools`` list back to neutral definitions (the inverse of `tools.render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from toolbridge import ToolDefinition, WireFormatError
from toolbridge.plugin import ImportedTools, SkippedTool

from .wire import DIALECT

__all__ = ["import_tools", "read_tool"]

_CHECKS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "description": (str, "a string"), "input_schema": (Mapping, "an object"),
    "strict": (bool, "a boolean"), "defer_loading": (bool, "a boolean")}


def read_tool(tool: Mapping[str, Any], where: str) -> ToolDefinition:
    """One custom tool ``{name, description?, input_schema, strict?}``; it keeps its original
    in ``vendor_extras["anthropic-messages"]["tool"]``, so while unchanged it renders back as
    it was. `WireFormatError` names a field of the wrong type."""
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise WireFormatError(DIALECT, f"{where}.name", "missing or not a string", tool)
    if "input_schema" not in tool:
        raise WireFormatError(DIALECT, f"{where}.input_schema", "missing", tool)
    for field, (kind, what) in _CHECKS.items():
        value = tool.get(field)
        if value is not None and not isinstance(value, kind):
            raise WireFormatError(DIALECT, f"{where}.{field}", f"not {what}", tool)
    try:
        return ToolDefinition(
            name=name, description=tool.get("description") or "",
            parameters=dict(tool["input_schema"]), strict=tool.get("strict"),
            defer_loading=bool(tool.get("defer_loading", False)),
            vendor_extras={DIALECT: {"tool": dict(tool)}})
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        raise WireFormatError(DIALECT, f"{where}.{field}".rstrip("."), error["msg"],
                              tool) from None


def import_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> ImportedTools:
    """Custom tools of a ``tools`` list (or a request body ``{"tools": [...]}``); server tools
    (``{"type": "web_search_20250305", ...}``: the API runs them) are skipped."""
    data = definitions.get("tools") if isinstance(definitions, Mapping) else definitions
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Sequence):
        raise WireFormatError(DIALECT, "tools", "missing or not a list", definitions)
    found: list[ToolDefinition] = []
    skipped: list[SkippedTool] = []
    for i, item in enumerate(data):
        where = f"tools[{i}]"
        if not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, where, "expected an object", item)
        kind = item.get("type", "custom")
        if not isinstance(kind, str):
            raise WireFormatError(DIALECT, f"{where}.type", "not a string", item)
        if kind == "custom":
            found.append(read_tool(item, where))
        else:
            skipped.append(SkippedTool(i, kind, "a server tool: Anthropic runs it, toolbridge "
                                       "has no handler to serve"))
    return ImportedTools(found, tuple(skipped))
