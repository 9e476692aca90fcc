"""A ``tools`` list (or function declarations) back to neutral definitions (the inverse of
`render_tools`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import SchemaConversionError, ToolDefinition, WireFormatError
from toolbridge.plugin import ImportedTools, SkippedTool

from .wire import DIALECT

__all__ = ["import_tools", "read_tools"]


def read_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]
               ) -> list[ToolDefinition]:
    """Neutral definitions of the function declarations in ``definitions``."""
    return import_tools(definitions).definitions


def _schema_form(node: Any) -> Any:
    """A Gemini ``Schema`` as the CES reader takes it: types upper case (Gemini's are case
    insensitive), the ``enum`` format and ``propertyOrdering`` (hints) left out, ``example``
    as ``examples``."""
    if isinstance(node, list):
        return [_schema_form(v) for v in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "propertyOrdering" or (key == "format" and value == "enum"):
            continue
        if key == "type" and isinstance(value, str):
            out[key] = value.upper()
        elif key in ("properties", "defs"):
            out[key] = {k: _schema_form(v) for k, v in value.items()} if isinstance(
                value, Mapping) else value
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = _schema_form(value)
        elif key == "example":
            out["examples"] = [value]
        else:
            out[key] = value
    return out


def _parameters(declaration: Mapping[str, Any], at: str, item: Any) -> dict[str, Any]:
    from toolbridge.schema import normalize_schema, to_json_schema

    if declaration.get("parametersJsonSchema") is not None:
        schema = declaration["parametersJsonSchema"]
        if not isinstance(schema, Mapping):
            raise WireFormatError(DIALECT, f"{at}.parametersJsonSchema", "not an object", item)
        try:
            return normalize_schema(copy.deepcopy(dict(schema)))
        except SchemaConversionError as exc:
            raise WireFormatError(DIALECT, f"{at}.parametersJsonSchema", str(exc),
                                  item) from None
    schema = declaration.get("parameters")
    if schema is None:
        return {"type": "object", "properties": {}}
    if not isinstance(schema, Mapping):
        raise WireFormatError(DIALECT, f"{at}.parameters", "not a Schema object", item)
    try:
        return dict(to_json_schema(_schema_form(schema), "ces").schema)
    except SchemaConversionError as exc:
        raise WireFormatError(DIALECT, f"{at}.parameters", str(exc), item) from None


def _declarations(definitions: Any) -> ImportedTools:
    data = definitions.get("tools") if isinstance(definitions, Mapping) else definitions
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Sequence):
        raise WireFormatError(DIALECT, "tools", "missing or not a list", definitions)
    found: list[tuple[str, Any]] = []
    skipped: list[SkippedTool] = []
    for i, item in enumerate(data):
        where = f"tools[{i}]"
        if not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, where, "expected an object", item)
        if "name" in item:  # a bare FunctionDeclaration (what render_tools lists)
            found.append((where, item))
            continue
        declarations = item.get("functionDeclarations", item.get("function_declarations"))
        if declarations is None:
            kind = next(iter(item), "empty")
            skipped.append(SkippedTool(i, kind, "a tool Gemini runs itself; it has no neutral "
                                       "form (toolbridge answers function calls)"))
            continue
        if not isinstance(declarations, list):
            raise WireFormatError(DIALECT, f"{where}.functionDeclarations", "not a list", item)
        found.extend((f"{where}.functionDeclarations[{j}]", d)
                     for j, d in enumerate(declarations))
    return ImportedTools([_read(at, d) for at, d in found], tuple(skipped))


def _read(at: str, declaration: Any) -> ToolDefinition:
    if not isinstance(declaration, Mapping):
        raise WireFormatError(DIALECT, at, "expected a FunctionDeclaration object", declaration)
    name = declaration.get("name")
    if not isinstance(name, str) or not name:
        raise WireFormatError(DIALECT, f"{at}.name", "missing or not a string", declaration)
    description = declaration.get("description", "")
    if not isinstance(description, str):
        raise WireFormatError(DIALECT, f"{at}.description", "not a string", declaration)
    parameters = _parameters(declaration, at, declaration)
    try:
        return ToolDefinition(name=name, description=description, parameters=parameters,
                              vendor_extras={DIALECT: {"declaration": dict(declaration),
                                                       "parameters": parameters}})
    except ValueError as exc:
        raise WireFormatError(DIALECT, f"{at}.name", str(exc).splitlines()[0],
                              declaration) from None


def import_tools(definitions: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> ImportedTools:
    """Function declarations of a ``tools`` list (``Tool`` objects, a request body
    ``{"tools": [...]}``, or bare declarations), and the other tool kinds skipped
    (``googleSearch``, ``codeExecution``, ...). ``parameters`` become JSON Schema again;
    ``parametersJsonSchema`` is taken as it is. Each keeps its original in
    ``vendor_extras["gemini"]``, so while unchanged it renders back as it was."""
    return _declarations(definitions)
