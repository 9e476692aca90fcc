"""An agent's ``tools`` back to neutral definitions (the inverse of `render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, WireFormatError
from toolbridge.plugin import ImportedTools, SkippedTool

from .wire import DIALECT

__all__ = ["import_tools"]

_FIELDS = ("type", "name", "description", "input_schema")


def import_tools(definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
    """Neutral definitions of the ``custom`` entries of an agent's ``tools``; toolsets and
    MCP toolsets (run by the service) are reported skipped. Other keys of a custom tool go to
    ``vendor_extras["anthropic-sessions"]``."""
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
        if kind != "custom":
            skipped.append(SkippedTool(index, kind, "a toolset the service runs itself; it "
                                       "has no neutral form (toolbridge answers custom tools)"))
            continue
        found.append(_custom(item, where))
    return ImportedTools(found, tuple(skipped))


def _custom(item: Mapping[str, Any], where: str) -> ToolDefinition:
    name, description, schema = item.get("name"), item.get("description"), item.get(
        "input_schema")
    if not isinstance(name, str) or not name:
        raise WireFormatError(DIALECT, f"{where}.name", "missing or not a string", item)
    if description is not None and not isinstance(description, str):
        raise WireFormatError(DIALECT, f"{where}.description", "not a string", item)
    if not isinstance(schema, Mapping):
        raise WireFormatError(DIALECT, f"{where}.input_schema", "missing or not an object",
                              item)
    extras = {k: v for k, v in item.items() if k not in _FIELDS}
    try:
        return ToolDefinition(name=name, description=description or "",
                              parameters=dict(schema),
                              vendor_extras={DIALECT: extras} if extras else {})
    except ValueError as exc:
        raise WireFormatError(DIALECT, where, str(exc).splitlines()[0], item) from None
