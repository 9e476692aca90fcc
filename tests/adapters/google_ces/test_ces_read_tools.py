"""``read_tools`` of google-ces: client-function ``Tool`` resources back to neutral form."""

from __future__ import annotations

from typing import Any

import pytest

import toolbridge
import toolbridge.schema
from toolbridge import ToolDefinition, WireFormatError

CES = toolbridge.get_dialect("google-ces")

LOSSLESS = ToolDefinition(
    name="get_weather", description="Weather for a city.",
    parameters={"type": "object", "properties": {
        "city": {"type": "string", "description": "City name."},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "units": {"type": "string", "enum": ["c", "f"]},
        "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["city"]},
    returns={"type": "object", "properties": {"temp": {"type": "number"}}},
    timeout=12.5,
    vendor_extras={"google-ces": {"executionType": "ASYNCHRONOUS", "toolId": "weather-v2"}},
)
LOSSY = ToolDefinition(
    name="ticket", parameters={"type": "object", "additionalProperties": False,
                               "properties": {"id": {"type": "string", "format": "uuid"}}})


def test_lossless_round_trip_gives_the_normalized_definition_back() -> None:
    rendered = CES.render_tools([LOSSLESS])
    assert not rendered.losses
    (back,) = CES.read_tools(rendered.definitions)
    assert back.name == LOSSLESS.name and back.description == LOSSLESS.description
    assert back.parameters == toolbridge.schema.normalize_schema(LOSSLESS.parameters)
    assert back.returns == toolbridge.schema.normalize_schema(LOSSLESS.returns or {})
    assert back.timeout == 12.5
    assert back.vendor_extras == {"google-ces": {"executionType": "ASYNCHRONOUS"}}


def test_lossy_round_trip_is_a_fixed_point() -> None:
    rendered = CES.render_tools([LOSSY, LOSSLESS])
    assert "ticket" in rendered.losses
    back = CES.read_tools(rendered.definitions)
    assert [t.name for t in back] == ["ticket", "get_weather"]
    assert CES.render_tools(back).definitions == rendered.definitions


def test_created_resources_keep_their_tool_id_and_enum_numbers_are_read() -> None:
    resource = {"name": "projects/p/locations/us/apps/a/tools/weather-v2",
                "displayName": "get_weather", "etag": "x", "executionType": 1,
                "clientFunction": {"name": "get_weather",
                                   "parameters": {"type": 5, "properties": {
                                       "n": {"type": "INTEGER", "enum": ["1", "2"]}}}}}
    (tool,) = CES.read_tools([resource])
    assert tool.parameters == {"type": "object",
                               "properties": {"n": {"type": "integer", "enum": [1, 2]}}}
    assert tool.vendor_extras == {"google-ces": {"executionType": "SYNCHRONOUS",
                                                 "toolId": "weather-v2"}}
    assert CES.render_tools([tool]).definitions[0]["executionType"] == "SYNCHRONOUS"


def test_other_tool_kinds_are_skipped() -> None:
    tools = [{"googleSearchTool": {}}, {"open_api_tool": {"openApiSchema": "..."}},
             {"clientFunction": {"name": "f"}}]
    assert [t.name for t in CES.read_tools(tools)] == ["f"]


@pytest.mark.parametrize(("tools", "field"), [
    ({"clientFunction": {"name": "f"}}, "tools"),
    ([None], "tools[0]"),
    ([{"displayName": "f"}], "tools[0].clientFunction"),
    ([{"clientFunction": "f"}], "tools[0].clientFunction"),
    ([{"clientFunction": {"name": "ok"}}, {"clientFunction": {}}],
     "tools[1].clientFunction.name"),
    ([{"clientFunction": {"name": "a.b"}}], "tools[0].clientFunction.name"),
    ([{"clientFunction": {"name": "f", "description": 1}}],
     "tools[0].clientFunction.description"),
    ([{"clientFunction": {"name": "f", "parameters": ["x"]}}],
     "tools[0].clientFunction.parameters"),
    ([{"clientFunction": {"name": "f", "parameters": {"type": "STRING"}}}],
     "tools[0].clientFunction.parameters"),
    ([{"clientFunction": {"name": "f", "response": 2}}], "tools[0].clientFunction.response"),
    ([{"clientFunction": {"name": "f"}, "timeout": 30}], "tools[0].timeout"),
])
def test_malformed_resources_name_the_field(tools: Any, field: str) -> None:
    with pytest.raises(WireFormatError) as info:
        CES.read_tools(tools)
    assert info.value.field == field
    assert info.value.dialect == "google-ces"
