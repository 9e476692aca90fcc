"""Importing an existing assistant's function tools, and rendering them back unchanged."""

from __future__ import annotations

import pytest
from assistants_support import D, payload
from openai.types.beta.assistant import Assistant

import toolbridge
from toolbridge import WireFormatError
from toolbridge_openai_assistants import tools_from_assistant

ASSISTANT = {"id": "asst_1", "object": "assistant", "created_at": 1, "model": "gpt-4o",
             "name": None, "description": None, "instructions": None, "metadata": {},
             "tools": [*payload("tools"), {"type": "code_interpreter"}]}


@pytest.mark.parametrize("source", [ASSISTANT, Assistant.model_validate(ASSISTANT)])
def test_imports_function_tools_keeping_strict(source: object) -> None:
    tools = tools_from_assistant(source)
    assert [(t.name, t.strict) for t in tools] == [("get_weather", True), ("get_time", None)]
    assert tools[0].description == "Get the current weather for a city."


def test_imported_tools_render_back_to_the_same_definitions() -> None:
    box = toolbridge.Toolbox()
    for tool in tools_from_assistant(ASSISTANT):
        box.add(tool, lambda **kw: kw)
    assert box.definitions(D) == payload("tools")  # byte for byte, strict or not
    changed = tools_from_assistant(ASSISTANT)[1].model_copy(update={"description": "new"})
    [fresh] = toolbridge.get_dialect(D).render_tools([changed]).definitions
    assert fresh["function"]["description"] == "new" and fresh["function"]["strict"] is True
    strict_false = {**ASSISTANT, "tools": [{"type": "function", "function": {
        "name": "x", "parameters": {"type": "object", "properties": {}}, "strict": False}}]}
    [tool] = tools_from_assistant(strict_false)
    assert toolbridge.get_dialect(D).render_tools([tool]).definitions == strict_false["tools"]


def test_malformed_assistant() -> None:
    with pytest.raises(WireFormatError, match="tools"):
        tools_from_assistant({"id": "a"})
    with pytest.raises(WireFormatError, match=r"tools\[0\].function.name"):
        tools_from_assistant({"tools": [{"type": "function", "function": {}}]})
