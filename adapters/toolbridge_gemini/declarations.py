"""Function declarations: neutral tools → ``{"functionDeclarations": [...]}`` (pure).

Each tool's parameters go as ``parameters`` (the OpenAPI-style ``Schema``, the schema
engine's ``gemini`` target) or as ``parametersJsonSchema`` (the JSON Schema as written),
whichever loses less: JSON Schema keeps ``additionalProperties: false``, ``$ref`` recursion
and tuples that a ``Schema`` cannot say; ties go to ``parameters``. The Gemini Interactions
dialect renders its function tools with the same functions.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from toolbridge import SchemaConversionError, ToolDefinition
from toolbridge.plugin import RenderedTools

from .wire import DIALECT, JSON_SCHEMA_KEYWORDS

__all__ = ["json_schema_losses", "render_declaration", "render_parameters", "render_tools",
           "tools_field"]

_CHILD = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
          "propertyNames", "unevaluatedItems", "unevaluatedProperties")
_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def _nodes(schema: Any, pointer: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    stack: list[tuple[str, Any]] = [(pointer, schema)]
    while stack:
        at, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield at, node
        stack.extend((f"{at}/{k}", node[k]) for k in _CHILD if k in node)
        for key in _LIST:
            value = node.get(key)
            if isinstance(value, list):
                stack.extend((f"{at}/{key}/{i}", v) for i, v in enumerate(value))
        for key in _MAP:
            value = node.get(key)
            if isinstance(value, dict):
                stack.extend((f"{at}/{key}/{name.replace('~', '~0').replace('/', '~1')}", v)
                             for name, v in value.items())


_ANNOTATIONS = frozenset({"default", "examples", "deprecated", "readOnly", "writeOnly",
                          "contentEncoding", "contentMediaType", "contentSchema", "$vocabulary",
                          "$dynamicAnchor"})
"""Keywords that constrain nothing (JSON Schema's annotations): ignoring them lets no invalid
call through (an ignored ``default`` is still the handler's when the model leaves it out)."""


def json_schema_losses(schema: Mapping[str, Any]) -> tuple[Any, ...]:
    """What ``parametersJsonSchema`` would lose of ``schema``: each keyword Gemini ignores
    (sent, not honoured: a `Toolbox` still checks the validation keywords on arrival), and
    ``oneOf`` read as ``anyOf``; sorted by pointer."""
    from jsonschema import Draft202012Validator

    from toolbridge.schema import SchemaLoss

    checked = set(Draft202012Validator.VALIDATORS) - {"format"}  # format: an annotation
    losses = []
    for pointer, node in _nodes(dict(schema)):
        for key in node:
            if key == "oneOf":
                losses.append(SchemaLoss(pointer, key, "approximated", "gemini reads oneOf "
                                         "as anyOf", enforced=True))
            elif key not in JSON_SCHEMA_KEYWORDS and not key.startswith("x-"):
                losses.append(SchemaLoss(
                    pointer, key, "dropped", f"gemini ignores {key!r} in parametersJsonSchema",
                    enforced=key in checked or key in _ANNOTATIONS))
    return tuple(sorted(losses, key=lambda loss: (loss.pointer, loss.keyword)))


_NO_ARGUMENTS = frozenset({"type", "properties", "additionalProperties", "title", "description",
                           "$schema", "required"})
"""Keys of an arguments object that takes no arguments (``{"type": "object", "properties":
{}}``, as a Python function without parameters gives)."""


def _breaks(losses: Sequence[Any], policy: Any) -> bool:
    if policy == "lossless":
        return bool(losses)
    return policy == "error" and any(not loss.enforced for loss in losses)


def render_parameters(parameters: Mapping[str, Any], *, policy: Any = "describe"
                      ) -> tuple[str, dict[str, Any] | None, tuple[Any, ...]]:
    """``("parameters" | "parametersJsonSchema", schema, losses)`` for one tool's schema;
    the schema is None for a tool without parameters (Gemini refuses an ``OBJECT`` with no
    ``properties``). Raises `SchemaConversionError` when both forms break ``policy``."""
    from toolbridge.schema import convert_schema

    if not parameters.get("properties") and not parameters.get("required") and (
            parameters.get("additionalProperties", False) is False) and not (
                set(parameters) - _NO_ARGUMENTS):
        return "parameters", None, ()  # takes no arguments: nothing to declare
    json_losses = json_schema_losses(parameters)
    try:
        sent = convert_schema(parameters, "gemini", policy=policy)
    except SchemaConversionError:
        if _breaks(json_losses, policy):
            raise
        return "parametersJsonSchema", copy.deepcopy(dict(parameters)), json_losses
    if len(sent.losses) <= len(json_losses):
        return "parameters", sent.schema, sent.losses
    if _breaks(json_losses, policy):
        raise SchemaConversionError(f"{DIALECT}: parametersJsonSchema would lose: "
                                    + "; ".join(map(str, json_losses)), list(json_losses))
    return "parametersJsonSchema", copy.deepcopy(dict(parameters)), json_losses


def render_declaration(tool: ToolDefinition, *, policy: Any = "describe"
                       ) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """One ``FunctionDeclaration`` (REST field names) and its schema losses; an imported
    declaration still unchanged goes back as it came."""
    imported = tool.vendor_extras.get(DIALECT, {}).get("declaration")
    if isinstance(imported, Mapping) and imported.get("name") == tool.name and (
            imported.get("description") or "") == tool.description and tool.vendor_extras[
                DIALECT].get("parameters") == tool.parameters:
        return copy.deepcopy(dict(imported)), ()
    declaration: dict[str, Any] = {"name": tool.name}
    if tool.description:
        declaration["description"] = tool.description
    field, schema, losses = render_parameters(tool.parameters, policy=policy)
    if schema is not None:
        declaration[field] = schema
    return declaration, losses


def render_tools(tools: Sequence[ToolDefinition], *, policy: Any = "describe") -> RenderedTools:
    """``[{"functionDeclarations": [...]}]`` as one definition per tool: the dialect's
    ``render_tools`` lists declarations; `tools_field` wraps them for a request."""
    return RenderedTools.each(tools, lambda tool: render_declaration(tool, policy=policy))


def tools_field(declarations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A request's ``tools``: one ``Tool`` holding every declaration (none: empty list)."""
    return [{"functionDeclarations": [dict(d) for d in declarations]}] if declarations else []
