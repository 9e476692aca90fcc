"""``read_tools`` of openai-assistants, and the core driver under the demo's contract."""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolbridge
import toolbridge.schema
from toolbridge import ToolDefinition, UsageError, WireFormatError
from toolbridge.cli._demo import DEMO_MESSAGES, DEMO_SCRIPT
from toolbridge.serve import aconverse
from toolbridge.testing import emulator

ASSISTANTS = toolbridge.get_dialect("openai-assistants")

LOOSE = ToolDefinition(name="search", description="Search tickets.", strict=False,
                       parameters={"type": "object", "properties": {"q": {"type": "string"},
                                                                    "limit": {"type": "integer"}},
                                   "required": ["q"]})
STRICT = ToolDefinition(name="get_weather", description="Weather for a city.",
                        parameters={"type": "object",
                                    "properties": {"city": {"type": "string"}},
                                    "required": ["city"], "additionalProperties": False})


def test_round_trip_of_a_non_strict_tool_is_exact() -> None:
    (back,) = ASSISTANTS.read_tools(ASSISTANTS.render_tools([LOOSE]).definitions)
    assert (back.name, back.description, back.parameters, back.strict) == (
        LOOSE.name, LOOSE.description, LOOSE.parameters, False)


def test_round_trip_of_a_strict_tool_gives_its_strict_schema_and_renders_back_the_same() -> None:
    wire = ASSISTANTS.render_tools([STRICT, LOOSE]).definitions
    back = ASSISTANTS.read_tools(wire)
    assert [t.name for t in back] == ["get_weather", "search"]
    strict = toolbridge.schema.convert_schema(STRICT.parameters, "openai-strict").schema
    assert back[0].parameters == strict and back[0].strict is True
    assert ASSISTANTS.render_tools(back).definitions == wire


def test_an_assistant_object_and_other_tool_types() -> None:
    assistant = {"id": "asst_1", "tools": [
        {"type": "code_interpreter"}, {"type": "file_search"},
        {"type": "function", "function": {"name": "ping"}}]}
    (tool,) = ASSISTANTS.read_tools(assistant)  # type: ignore[arg-type]
    assert tool.name == "ping" and tool.parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(("tools", "field"), [
    ("not a list", "tools"),
    ([3], "tools[0]"),
    ([{"function": {"name": "f"}}], "tools[0].type"),
    ([{"type": "function"}], "tools[0].function"),
    ([{"type": "code_interpreter"}, {"type": "function", "function": {}}],
     "tools[1].function.name"),
    ([{"type": "function", "function": {"name": "f", "description": ["x"]}}],
     "tools[0].function.description"),
    ([{"type": "function", "function": {"name": "f", "parameters": "{}"}}],
     "tools[0].function.parameters"),
    ([{"type": "function", "function": {"name": "f", "strict": "yes"}}],
     "tools[0].function.strict"),
    ([{"type": "function", "function": {"name": "a b"}}], "tools[0].function"),
])
def test_malformed_entries_name_the_field(tools: Any, field: str) -> None:
    with pytest.raises(WireFormatError) as info:
        ASSISTANTS.read_tools(tools)
    assert info.value.field == field


async def test_converse_against_the_emulator_with_the_demo_script() -> None:
    from toolbridge.examples import toolbox

    with emulator("openai-assistants", script=DEMO_SCRIPT) as emu:
        transcript = await aconverse(toolbox, ASSISTANTS, DEMO_MESSAGES,
                                     {"base_url": emu.base_url, "api_key": "demo-key"})
    kinds = [e.kind for e in transcript.entries]
    assert kinds[:2] == ["tools", "user"] and kinds[-1] == "reply"
    assert transcript.status == "completed" and transcript.conversation.startswith("thread_")
    assert transcript.entries[0].text == "get_customer, get_weather, create_ticket"
    calls = transcript.of_kind("call")
    assert [c.data["name"] for c in calls] == ["get_customer", "create_ticket", "get_weather"]
    assert calls[0].text == 'get_customer({"customer_id": "42"})'
    results = transcript.of_kind("result")
    outputs = [r.text for r in results]
    assert [r.data["id"] for r in results] == [c.data["id"] for c in calls]
    assert json.loads(transcript.reply.split("Tool outputs: ", 1)[1]) == outputs
    assert json.loads(outputs[0])["name"] == "Ada Lovelace"


async def test_base_url_gets_v1_once() -> None:
    from toolbridge.examples import toolbox

    with emulator("openai-assistants", script=DEMO_SCRIPT) as emu:
        transcript = await aconverse(toolbox, ASSISTANTS, DEMO_MESSAGES, {
            "base_url": emu.base_url + "/v1/", "api_key": "demo-key", "stream": False})
    assert "Lima" in transcript.reply


async def test_the_real_service_names_missing_variables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbridge.examples import toolbox

    for name in ("OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY",
                 "OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError, match=r"OPENAI_API_KEY.*AZURE_OPENAI_ENDPOINT"):
        await aconverse(toolbox, ASSISTANTS, ["hi"], {"base_url": None})
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
    with pytest.raises(UsageError, match="AZURE_OPENAI_API_KEY, OPENAI_API_VERSION") as info:
        await aconverse(toolbox, ASSISTANTS, ["hi"])
    assert "AZURE_OPENAI_ENDPOINT" not in str(info.value)
