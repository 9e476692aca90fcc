"""CES ``Tool`` resources back to neutral definitions (the inverse of `render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from toolbridge import SchemaConversionError, ToolDefinition, UsageError, WireFormatError
from toolbridge.plugin import ImportedTools, SkippedTool

from . import wire
from ._validate import DURATION, OUTPUT_ONLY, TOOL_TYPES
from .translate import DIALECT, definition_from_tool

__all__ = ["import_tools", "read_tools"]


def read_tools(definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
    """Neutral definitions of the client-function ``Tool`` resources in ``definitions``."""
    return import_tools(definitions).definitions


def import_tools(definitions: Sequence[Mapping[str, Any]]) -> ImportedTools:
    """Neutral definitions of the client-function ``Tool`` resources, and the others skipped.

    Schemas become JSON Schema again (`toolbridge.schema.to_json_schema`); ``timeout`` comes back as
    seconds; ``executionType``, ``toolFakeConfig`` and a resource id other than the function
    name (``toolId``) go to ``vendor_extras["google-ces"]``. Other tool kinds (OpenAPI,
    search, ...) have no neutral form and are reported as skipped.
    """
    if isinstance(definitions, (str, bytes, Mapping)) or not isinstance(definitions, Sequence):
        raise WireFormatError(DIALECT, "tools", "expected a list of Tool resources", definitions)
    found: list[ToolDefinition] = []
    skipped: list[SkippedTool] = []
    for index, item in enumerate(definitions):
        where = f"tools[{index}]"
        if not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, where, "expected a Tool object", item)
        tool = wire.normalize_tool_enums(item)
        if "clientFunction" not in tool:
            kind = next((k for k in TOOL_TYPES if k in tool or _snake(k) in tool), None)
            if kind is not None:
                skipped.append(SkippedTool(index, kind, "a tool CES runs itself; it has no "
                                           "neutral form (toolbridge answers client functions)"))
                continue
            raise WireFormatError(DIALECT, f"{where}.clientFunction", "missing: not a Tool "
                                  "resource", item)
        found.append(_read(tool, where, item))
    return ImportedTools(found, tuple(skipped))


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _read(tool: dict[str, Any], where: str, item: Mapping[str, Any]) -> ToolDefinition:
    at = f"{where}.clientFunction"
    function = tool["clientFunction"]
    if not isinstance(function, Mapping):
        raise WireFormatError(DIALECT, at, "expected an object", item)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise WireFormatError(DIALECT, f"{at}.name", "missing or not a string", item)
    if not isinstance(function.get("description", ""), str):
        raise WireFormatError(DIALECT, f"{at}.description", "not a string", item)
    for field in ("parameters", "response"):
        if function.get(field) is not None and not isinstance(function[field], Mapping):
            raise WireFormatError(DIALECT, f"{at}.{field}", "not a Schema object", item)
    try:
        definition = definition_from_tool(tool)
    except (SchemaConversionError, UsageError) as exc:
        raise WireFormatError(DIALECT, f"{at}.parameters", str(exc), item) from None
    except ValidationError as exc:  # the name or the parameters do not fit
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "name"
        field = {"returns": "response"}.get(field, field)
        raise WireFormatError(DIALECT, f"{at}.{field}", error["msg"], item) from None
    update: dict[str, Any] = {}
    timeout = tool.get("timeout")
    if timeout is not None:
        if not isinstance(timeout, str) or not DURATION.match(timeout):
            raise WireFormatError(DIALECT, f"{where}.timeout", "not a Duration such as "
                                  '"30s"', item)
        update["timeout"] = float(timeout[:-1])
    extras = {k: v for k, v in tool.items()
              if k not in ("clientFunction", "timeout", *OUTPUT_ONLY) and v is not None}
    resource = tool.get("name")
    if isinstance(resource, str) and resource.rsplit("/", 1)[-1] not in ("", name):
        extras["toolId"] = resource.rsplit("/", 1)[-1]
    if extras:
        update["vendor_extras"] = {DIALECT: extras}
    return definition.model_copy(update=update) if update else definition
