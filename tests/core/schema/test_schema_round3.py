"""Issue 32: OpenAI's strict-mode size limits, roots the APIs reject, tool-count limits."""

from __future__ import annotations

from typing import Any

import pytest

import toolbridge
from toolbridge import SchemaConversionError, ToolDefinition, UsageError
from toolbridge.schema import normalize_root, strict_parameters

OPENAI = ("openai-assistants", "openai-responses", "openai-chat")


def _enum(count: int, width: int = 3) -> dict[str, Any]:
    return {"type": "string", "enum": [f"{i:0{width}d}" for i in range(count)]}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels - 1):
        schema = _object({"a": schema})
    return schema


OVER = {
    "enum values": _object({f"e{i}": _enum(250) for i in range(5)}),  # 1,250 values
    "characters of one string enum": _object({"e": _enum(300, 60)}),  # 18,000 characters
    "name and value characters": _object({f"e{i}": _enum(200, 150) for i in range(4)}
                                         | {"n" * 100 + str(i): {"type": "string"}
                                            for i in range(2)}),
    "nesting levels": _nested(12),
    "object properties": _object({f"p{i}": {"type": "integer"} for i in range(5_001)}),
}


@pytest.mark.parametrize("limit", list(OVER))
def test_a_strict_form_over_a_documented_limit_is_never_sent(limit: str) -> None:
    schema = OVER[limit]
    sent = strict_parameters(schema, None)
    assert sent.strict is False and sent.schema == schema
    assert any(limit in loss.reason for loss in sent.losses), sent.losses
    for policy in ("allow", "describe", "error", "lossless"):
        with pytest.raises(SchemaConversionError, match=limit):
            strict_parameters(schema, True, policy=policy)  # type: ignore[arg-type]


def test_within_the_limits_stays_strict() -> None:
    schema = _object({f"e{i}": _enum(199) for i in range(5)} | {"n": _nested(9)})
    assert strict_parameters(schema, None).strict is True


@pytest.mark.parametrize("dialect", OPENAI)
def test_every_openai_dialect_reports_the_limit_and_names_the_tool(dialect: str) -> None:
    tool = ToolDefinition(name="pick", parameters=OVER["enum values"])
    rendered = toolbridge.get_dialect(dialect).render_tools([tool])
    assert any("enum values" in loss.reason for loss in rendered.losses["pick"])
    assert "True" not in str(rendered.definitions)  # sent non-strict
    strict = tool.model_copy(update={"strict": True})
    with pytest.raises(SchemaConversionError, match=r"tool 'pick'.*1,250 enum values"):
        toolbridge.get_dialect(dialect).render_tools([strict])


@pytest.mark.parametrize(("declared", "sent"), [
    ({}, {"type": "object", "properties": {}}),
    ({"type": "object"}, {"type": "object", "properties": {}}),
    ({"description": "no arguments"},
     {"description": "no arguments", "type": "object", "properties": {}}),
    ({"properties": {"a": {"type": "string"}}},
     {"properties": {"a": {"type": "string"}}, "type": "object"}),
    ({"$ref": "#/$defs/Args", "description": "d",
      "$defs": {"Args": {"properties": {"b": {"$ref": "#/$defs/B"}}}, "B": {"type": "string"}}},
     {"properties": {"b": {"$ref": "#/$defs/B"}}, "description": "d", "type": "object",
      "$defs": {"Args": {"properties": {"b": {"$ref": "#/$defs/B"}}}, "B": {"type": "string"}}}),
])
def test_normalize_root_spells_the_object_out(declared: dict[str, Any],
                                              sent: dict[str, Any]) -> None:
    before = repr(declared)
    assert normalize_root(declared) == sent
    assert repr(declared) == before  # the input is left alone
    again = normalize_root(sent)
    assert again == sent  # idempotent


def test_roots_that_need_nothing_are_unchanged() -> None:
    for schema in ({"type": "object", "properties": {}}, {"type": "array", "items": {}},
                   {"$ref": "https://example.com/s"}, {"$ref": "#/$defs/missing"}):
        assert normalize_root(schema) == schema


@pytest.mark.parametrize("dialect", [*OPENAI, "openai-agents"])
def test_non_strict_tools_go_out_with_an_object_root(dialect: str) -> None:
    tools = [ToolDefinition(name="ping", parameters={"type": "object"}, strict=False),
             ToolDefinition(name="find", parameters={
                 "$ref": "#/$defs/Q", "$defs": {"Q": {"properties": {"q": {"type": "string"}}}}},
                 strict=False)]
    definitions = toolbridge.get_dialect(dialect).render_tools(tools).definitions
    roots = [d.get("function", d)["parameters"] for d in definitions]
    assert [r["type"] for r in roots] == ["object", "object"]
    assert roots[0]["properties"] == {} and "q" in roots[1]["properties"]
    assert "$ref" not in roots[1]


@pytest.mark.parametrize("dialect", OPENAI)
def test_the_dialects_tool_count_limit_is_enforced_where_tools_render(dialect: str) -> None:
    plugin = toolbridge.get_dialect(dialect)
    limit = plugin.limits.max_tools
    assert limit == 128
    tools = [ToolDefinition(name=f"t{i}") for i in range(limit + 1)]
    assert len(plugin.render_tools(tools[:limit]).definitions) == limit
    with pytest.raises(UsageError, match=r"129 tools, over the 128.*DialectLimits.max_tools"):
        plugin.render_tools(tools)
    box = toolbridge.Toolbox(store=None)
    for tool in tools:
        box.add(tool, lambda: "ok")
    with pytest.raises(UsageError, match="max_tools"):
        box.render(dialect)
