"""Tool definitions for Anthropic: ``{name, description, input_schema, strict?}``, with
strictness decided by Anthropic's own policy.

``strict=True`` converts the parameters to the strict subset (schema target
``anthropic-strict``) under the caller's loss policy; ``strict=None`` ("strict when nothing is
lost") is strict only when that conversion is lossless; ``strict=False`` sends the schema as
declared (its root spelt out: `toolbridge.schema.normalize_root`). The API compiles every strict
schema of a request into one grammar and refuses a large one ("compiled grammar is too large"),
with documented ceilings (`wire.STRICT_TOOLS`, `wire.STRICT_OPTIONAL_PARAMETERS`,
`wire.STRICT_UNION_PARAMETERS`): `render_tools` keeps a toolset under them by sending the last
``strict=None`` tools non-strict (reported as a loss), and refuses a set of ``strict=True``
tools that is over them. Reused by ``anthropic-sessions`` (custom tools have the same fields).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from toolbridge import SchemaConversionError, ToolDefinition
from toolbridge.plugin import RenderedTools
from toolbridge.schema import SchemaLoss, convert_schema, normalize_root

from .wire import DIALECT, STRICT_OPTIONAL_PARAMETERS, STRICT_TOOLS, STRICT_UNION_PARAMETERS

__all__ = ["InputSchema", "input_schema", "render_tool", "render_tools", "strict_load"]


class InputSchema(NamedTuple):
    """The ``input_schema`` to send, whether the tool is sent ``strict``, and what was lost."""

    schema: dict[str, Any]
    strict: bool
    losses: tuple[SchemaLoss, ...]


def input_schema(parameters: Mapping[str, Any], strict: bool | None, *,
                 policy: Any = "describe") -> InputSchema:
    """A tool's ``input_schema`` for Anthropic: the strict subset, or the schema as declared.

    ``strict=True``: converted under ``policy`` (``error`` / ``lossless`` raise
    `SchemaConversionError`, as does a root that is not an object); ``None``: strict only when
    the conversion loses nothing; ``False``: as declared.
    """
    if strict is True:
        conversion = convert_schema(parameters, "anthropic-strict", policy=policy)
        return InputSchema(conversion.schema, True, conversion.losses)
    if strict is None:
        try:
            conversion = convert_schema(parameters, "anthropic-strict", policy="lossless")
        except SchemaConversionError:
            return InputSchema(normalize_root(parameters), False, ())
        return InputSchema(conversion.schema, True, ())
    return InputSchema(normalize_root(parameters), False, ())


def render_tool(tool: ToolDefinition, *, policy: Any = "describe", strict: bool | None = None
                ) -> tuple[dict[str, Any], tuple[SchemaLoss, ...]]:
    """``{"name", "description", "input_schema", "strict"?}`` and its losses; ``strict``
    overrides ``tool.strict`` (how `render_tools` sends a tool non-strict)."""
    wanted = tool.strict if strict is None else strict
    imported = tool.vendor_extras.get(DIALECT, {}).get("tool")
    if isinstance(imported, Mapping) and wanted == tool.strict and (
            imported.get("name") == tool.name
            and (imported.get("description") or "") == tool.description
            and imported.get("strict") == tool.strict
            and (imported.get("input_schema") or tool.parameters) == tool.parameters):
        return dict(imported), ()
    sent = input_schema(tool.parameters, wanted, policy=policy)
    definition: dict[str, Any] = {"name": tool.name}
    if tool.description:
        definition["description"] = tool.description
    definition["input_schema"] = sent.schema
    if sent.strict or wanted is False:
        definition["strict"] = sent.strict
    return definition, sent.losses


def strict_load(schema: Mapping[str, Any]) -> tuple[int, int]:
    """(optional properties, properties with a union type) of one strict ``input_schema``:
    what counts against the request's grammar limits."""
    optional = unions = 0
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            required = set(node.get("required") or ())
            optional += sum(1 for name in properties if name not in required)
            unions += sum(1 for sub in properties.values()
                          if isinstance(sub, Mapping) and "anyOf" in sub)
            stack.extend(properties.values())
        stack.append(node.get("items"))
        for union in ("anyOf", "allOf"):
            branches = node.get(union)
            stack.extend(branches if isinstance(branches, list) else ())
    return optional, unions


def _over(definitions: Sequence[Mapping[str, Any]]) -> list[str]:
    strict = [d for d in definitions if d.get("strict") is True]
    loads = [strict_load(d["input_schema"]) for d in strict]
    sizes = ((len(strict), STRICT_TOOLS, "strict tools"),
             (sum(o for o, _ in loads), STRICT_OPTIONAL_PARAMETERS,
              "optional parameters across the strict schemas"),
             (sum(u for _, u in loads), STRICT_UNION_PARAMETERS,
              "parameters with union types across the strict schemas"))
    return [f"{size} {what}, over Anthropic's limit of {limit} per request"
            for size, limit, what in sizes if size > limit]


def render_tools(tools: Sequence[ToolDefinition], *, policy: Any = "describe") -> RenderedTools:
    """Every tool rendered, the toolset kept within the strict-grammar limits (see above)."""
    rendered = RenderedTools.each(tools, lambda tool: render_tool(tool, policy=policy))
    definitions = list(rendered.definitions)
    losses = dict(rendered.losses)
    by_name = {tool.name: tool for tool in tools}
    for i in reversed(range(len(definitions))):
        over = _over(definitions)
        if not over:
            break
        tool = by_name.get(definitions[i]["name"])
        if tool is None or tool.strict is not None or definitions[i].get("strict") is not True:
            continue
        definitions[i], _ = render_tool(tool, policy=policy, strict=False)
        definitions[i].pop("strict", None)  # "strict when it fits": left out, as for losses
        losses[tool.name] = (*losses.get(tool.name, ()), *(
            SchemaLoss("", "strict", "dropped", f"sent non-strict: {line}", enforced=True)
            for line in over))
    over = _over(definitions)
    if over:
        raise SchemaConversionError(
            "cannot send these tools strict: " + "; ".join(over) + " (Anthropic refuses the "
            "request: compiled grammar is too large); mark some strict=None or strict=False")
    return RenderedTools(definitions, losses)
