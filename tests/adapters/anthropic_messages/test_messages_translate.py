"""Messages translations on recorded payloads; the anthropic SDK's types are the oracle."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import DocumentBlockParam, Message, MessageParam, ToolChoiceParam, ToolParam
from messages_support import D, payload
from pydantic import TypeAdapter

import toolbridge
from toolbridge import (
    Content,
    DocumentPart,
    ImagePart,
    SchemaConversionError,
    TextPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UsageError,
    WireFormatError,
)
from toolbridge_anthropic_messages import render_tools

RESPONSE = "anthropic-messages.tool-use.response.json"


def dialect() -> Any:
    return toolbridge.get_dialect(D)


def test_tools_parse_as_the_sdks_tool_params(toolbox: toolbridge.Toolbox) -> None:
    [tool] = toolbox.definitions(D)
    TypeAdapter(ToolParam).validate_python(tool)
    assert tool["name"] == "get_weather" and tool["strict"] is True  # lossless: strict
    assert tool["input_schema"]["required"] == ["city"]  # optional stays optional
    assert tool["input_schema"]["properties"]["unit"] == {
        "enum": ["c", "f"], "description": '(default: "c")'}


def test_parallel_tool_use_from_dict_json_and_sdk_objects(toolbox: toolbridge.Toolbox) -> None:
    data = payload(RESPONSE)
    calls = dialect().read_calls(data).calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("toolu_01A09q90qw90lq917835lq9", "get_weather", {"city": "Paris"}),
        ("toolu_01B19r91rx91mr928946mr0", "get_weather", {"city": "Lima", "unit": "f"})]
    from_sdk = toolbox.handle(D, Message.model_validate(data))
    from_json = toolbox.handle(D, json.dumps(data))
    assert from_sdk == from_json == toolbox.handle(D, data)
    [message] = from_sdk["messages"]
    TypeAdapter(MessageParam).validate_python(message)
    assert message["role"] == "user"
    assert [b["tool_use_id"] for b in message["content"]] == [c.id for c in calls]
    assert json.loads(message["content"][1]["content"]) == {"city": "Lima", "unit": "f",
                                                            "temp": 70}


def test_a_conversation_keys_calls_by_position(toolbox: toolbridge.Toolbox) -> None:
    data = payload(RESPONSE)
    conversation = {"messages": [{"role": "user", "content": "Weather?"},
                                 {"role": "assistant", "content": data["content"]}]}
    calls = dialect().read_calls_in(conversation, "c1").calls
    assert {(c.conversation, c.turn) for c in calls} == {("c1", "1")}
    assert dialect().read_calls_in(data, "c1").calls[0].turn == data["id"]
    with pytest.raises(UsageError, match="which turn"):
        dialect().read_calls_in({"role": "assistant", "content": data["content"]}, "c1")


def test_failures_carry_is_error_and_images_are_blocks() -> None:
    call = ToolCall(id="toolu_1", name="snap", dialect=D)
    failed = ToolResult.failed(call, "camera offline")
    picture = ToolResult.ok(call, Content(parts=(
        TextPart(text="here"), ImagePart(url="data:image/png;base64,iVBORw0KGgo="),
        ImagePart(url="https://example.com/a.png"))))
    body = dialect().write_results([failed])
    assert body["messages"][0]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "camera offline",
         "is_error": True}]
    [block] = dialect().write_results([picture])["messages"][0]["content"]
    assert block["content"] == [
        {"type": "text", "text": "here"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]
    for body in (dialect().write_results([failed]), dialect().write_results([picture])):
        TypeAdapter(MessageParam).validate_python(body["messages"][0])


@pytest.mark.parametrize(("choice", "wire"), [
    (ToolChoice(), {"type": "auto"}), (ToolChoice(mode="none"), {"type": "none"}),
    (ToolChoice(mode="required"), {"type": "any"}),
    (ToolChoice(mode="tool", tool="get_weather"), {"type": "tool", "name": "get_weather"})])
def test_tool_choice(choice: ToolChoice, wire: dict[str, Any]) -> None:
    assert dialect().render_tool_choice(choice) == wire
    TypeAdapter(ToolChoiceParam).validate_python(wire)


@pytest.mark.parametrize(("bad", "field"), [
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "user", "content": "hi"}]}, "messages[0].role"),
    ({"role": "user", "content": []}, "role"),
    ({"role": "assistant", "content": 5}, "content"),
    ({"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]},
     "content[0].id"),
    ({"type": "content_block_delta", "index": 0}, "type"),
    ({"model": "m"}, "content")])
def test_malformed_payloads_name_the_field(bad: dict[str, Any], field: str) -> None:
    with pytest.raises(WireFormatError) as caught:
        dialect().read_calls(bad)
    assert caught.value.field == field


def test_input_that_is_not_an_object_is_the_calls_own_error(toolbox: toolbridge.Toolbox) -> None:
    message = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": '{"city": '},
        {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}}]}
    [bad, good] = toolbox.handle(D, message)["messages"][0]["content"]
    assert bad["is_error"] is True and "not valid JSON" in bad["content"]
    assert "Rome" in good["content"] and "is_error" not in good


def test_imported_tools_render_back_unchanged_and_server_tools_are_skipped() -> None:
    wire = [{"name": "lookup", "description": "Look up.", "input_schema": {
        "type": "object", "properties": {"q": {"type": "string", "minLength": 2}}}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]
    imported = dialect().import_tools(wire)
    assert [t.name for t in imported.definitions] == ["lookup"]
    assert [(s.index, s.kind) for s in imported.skipped] == [(1, "web_search_20250305")]
    assert dialect().render_tools(imported.definitions).definitions == [wire[0]]
    with pytest.raises(WireFormatError, match=r"tools\[0\].input_schema"):
        dialect().import_tools([{"name": "x", "input_schema": "no"}])


def _tool(i: int, strict: bool | None) -> ToolDefinition:
    return ToolDefinition(name=f"t{i}", strict=strict, parameters={
        "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a"]})


def test_the_strict_toolset_stays_under_the_grammar_limits() -> None:
    rendered = render_tools([_tool(i, None) for i in range(30)])
    strict = [d["name"] for d in rendered.definitions if d.get("strict")]
    assert strict == [f"t{i}" for i in range(20)]  # 20 strict tools, 20 optional parameters
    assert [loss.reason for loss in rendered.losses["t20"]] == [
        "sent non-strict: 21 strict tools, over Anthropic's limit of 20 per request"]
    assert "strict" not in rendered.definitions[29]
    with pytest.raises(SchemaConversionError, match="compiled grammar is too large"):
        render_tools([_tool(i, True) for i in range(21)])


def document_toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def report() -> list[Any]:
        """The quarterly report."""
        return [TextPart(text="attached"),
                DocumentPart(data="JVBERi0xLjQ=", title="q3.pdf"),
                DocumentPart(media_type="text/plain", data="bm90ZXM=", title="notes.txt"),
                DocumentPart(url="https://example.com/q3.pdf"),
                DocumentPart(media_type="text/plain", url="https://example.com/n.txt")]

    return box


def test_a_handler_returning_documents_writes_document_blocks() -> None:
    [result] = document_toolbox().execute([ToolCall(id="toolu_1", name="report", dialect=D)])
    [block] = dialect().write_results([result])["messages"][0]["content"]
    assert block["content"] == [
        {"type": "text", "text": "attached"},
        {"type": "document", "title": "q3.pdf", "source": {
            "type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="}},
        {"type": "document", "title": "notes.txt", "source": {
            "type": "text", "media_type": "text/plain", "data": "notes"}},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/q3.pdf"}},
        {"type": "text", "text": "[document: (text/plain) https://example.com/n.txt]"}]
    message = dialect().write_results([result])["messages"][0]
    TypeAdapter(MessageParam).validate_python(message, strict=True)
    for wire in block["content"][1:4]:
        TypeAdapter(DocumentBlockParam).validate_python(wire, strict=True)
