"""``read_tools`` of openai-agents: the inverse of ``render_tools`` on ``agent.tools``."""

from __future__ import annotations

from typing import Any

import pytest

import toolbridge
from toolbridge import ToolDefinition, WireFormatError

AGENTS = toolbridge.get_dialect("openai-agents")

TOOLS = [
    ToolDefinition(name="get_weather", description="Weather for a city.",
                   parameters={"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"]}),
    ToolDefinition(name="archive", description="Archive a ticket.", defer_loading=True,
                   parameters={"type": "object", "properties": {"id": {"type": "integer"}},
                               "additionalProperties": False},
                   vendor_extras={"openai-agents": {"async": True}}),
    ToolDefinition(name="ping", description="Ping."),
]


def test_round_trip_keeps_every_field_and_skips_tool_search() -> None:
    wire = AGENTS.render_tools(TOOLS).definitions
    assert {"type": "tool_search"} in wire
    back = AGENTS.read_tools(wire)
    assert back == TOOLS
    assert back[1].defer_loading and back[1].vendor_extras == {"openai-agents": {"async": True}}
    assert AGENTS.render_tools(back).definitions == wire


def test_generated_description_is_read_as_written() -> None:
    wire = AGENTS.render_tools([ToolDefinition(name="bare")]).definitions
    (back,) = AGENTS.read_tools(wire)
    assert back.description == wire[0]["description"] == "Calls the bare function."


def test_other_entries_are_skipped_and_unknown_keys_kept() -> None:
    wire = [{"type": "web_search"}, {"type": "function", "name": "f", "async": False,
                                     "cache_ttl": 5, "strict": True}]
    (tool,) = AGENTS.read_tools(wire)
    assert tool.vendor_extras == {"openai-agents": {"async": False, "cache_ttl": 5}}
    assert tool.parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(("tools", "field"), [
    ({"type": "function"}, "tools"),
    (["oops"], "tools[0]"),
    ([{"name": "f"}], "tools[0].type"),
    ([{"type": "function", "name": "ok"}, {"type": "function"}], "tools[1].name"),
    ([{"type": "function", "name": "has space"}], "tools[0].name"),
    ([{"type": "function", "name": "f", "description": 3}], "tools[0].description"),
    ([{"type": "function", "name": "f", "parameters": []}], "tools[0].parameters"),
    ([{"type": "function", "name": "f", "parameters": {"type": "string"}}],
     "tools[0].parameters"),
    ([{"type": "function", "name": "f", "defer_loading": "yes"}], "tools[0].defer_loading"),
])
def test_malformed_entries_name_the_field(tools: Any, field: str) -> None:
    with pytest.raises(WireFormatError) as info:
        AGENTS.read_tools(tools)
    assert info.value.field == field
    assert info.value.dialect == "openai-agents"
