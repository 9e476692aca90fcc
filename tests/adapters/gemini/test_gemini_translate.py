"""The gemini translations on recorded payloads, with google-genai's types as the oracle."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gemini_support import D, payload
from google.genai import types

import toolbridge
from toolbridge import (
    DocumentPart,
    ImagePart,
    TextPart,
    ToolChoice,
    ToolDefinition,
    WireFormatError,
)
from toolbridge.testing import check_dialect
from toolbridge_gemini import GeminiCorrelation, GeminiDialect, render_declaration, tools_field

DIALECT = toolbridge.get_dialect(D)


def content(body: Any) -> types.Content:
    return types.Content.model_validate_json(json.dumps(body))


def test_registered_by_entry_point() -> None:
    assert isinstance(DIALECT, GeminiDialect)
    assert toolbridge.dialects().provider(D) == "gemini"


def test_the_kit_passes_on_a_recorded_payload(toolbox: toolbridge.Toolbox) -> None:
    # (Not on calls without ids: their responses name the function, not the neutral id.)
    check_dialect(D, list(toolbox), payload("generate-content.response.function-calls"))


def test_parallel_calls_keep_their_order_ids_and_signature() -> None:
    pending = DIALECT.read_calls(payload("generate-content.response.function-calls"))
    assert [(c.id, c.name, c.arguments["location"]) for c in pending.calls] == [
        ("k3x9q2ab", "get_weather", "Paris"), ("m7c1w5zd", "get_weather", "Lima")]
    first, second = (c.correlation for c in pending.calls)
    assert isinstance(first, GeminiCorrelation) and isinstance(second, GeminiCorrelation)
    assert (first.part, second.part) == (1, 2)  # the thought part comes first
    assert first.thought_signature == payload("generate-content.response.function-calls")[
        "candidates"][0]["content"]["parts"][1]["thoughtSignature"]
    assert second.thought_signature is None  # only a round's first call part carries one


def test_results_are_one_user_turn_with_a_part_per_call(toolbox: toolbridge.Toolbox) -> None:
    body = toolbox.handle(D, payload("generate-content.response.function-calls"))
    [turn] = body["contents"]
    parsed = content(turn)
    assert parsed.role == "user"
    responses = [p.function_response for p in parsed.parts or ()]
    assert [(r.id, r.name) for r in responses if r] == [("k3x9q2ab", "get_weather"),
                                                        ("m7c1w5zd", "get_weather")]
    assert responses[0] is not None and responses[0].response == {
        "output": {"location": "Paris", "days": 2, "unit": "c"}}


def test_a_handler_returning_documents_answers_with_a_multimodal_response() -> None:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(location: str, days: int = 1, unit: str = "c") -> list[Any]:
        """The forecast as files."""
        return [TextPart(text=location), DocumentPart(data="JVBERi0xLjQ=", title="q3.pdf"),
                DocumentPart(media_type="text/plain", data="bm90ZXM="),
                DocumentPart(url="https://example.com/q3.pdf")]

    body = box.handle(D, payload("generate-content.response.function-calls"))
    entry = body["contents"][0]["parts"][0]["functionResponse"]
    assert entry["response"] == {"output": "Paris\n[document: q3.pdf (application/pdf)]\n"
                                           "[document: (text/plain)]\n[document: "
                                           "(application/pdf) https://example.com/q3.pdf]"}
    assert entry["parts"] == [
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0xLjQ=",
                        "displayName": "q3.pdf"}},
        {"inlineData": {"mimeType": "text/plain", "data": "bm90ZXM="}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/q3.pdf"}}]
    parsed = content(body["contents"][0]).parts[0].function_response  # type: ignore[index]
    assert parsed is not None and parsed.parts is not None
    pdf, notes, linked = parsed.parts
    assert pdf.inline_data is not None and pdf.inline_data.data == b"%PDF-1.4"
    assert pdf.inline_data.display_name == "q3.pdf"
    assert notes.inline_data is not None and notes.inline_data.data == b"notes"
    assert linked.file_data is not None and linked.file_data.file_uri.endswith("q3.pdf")


def test_a_handler_returning_images_sends_them_as_response_parts() -> None:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(location: str, days: int = 1, unit: str = "c") -> list[Any]:
        """The forecast as a chart."""
        return [TextPart(text=location), ImagePart(url="data:image/png;base64,iVBORw0KGgo="),
                ImagePart(url="https://example.com/radar.webp?at=noon"),
                ImagePart(url="https://example.com/chart")]

    body = box.handle(D, payload("generate-content.response.function-calls"))
    entry = body["contents"][0]["parts"][0]["functionResponse"]
    assert entry["response"]["output"].startswith("Paris\n[image: data:image/png;base64,")
    assert entry["parts"] == [  # the address without a media type stays in the text only
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"fileData": {"mimeType": "image/webp",
                      "fileUri": "https://example.com/radar.webp?at=noon"}}]
    parsed = content(body["contents"][0]).parts[0].function_response  # type: ignore[index]
    assert parsed is not None and parsed.parts is not None
    png, radar = parsed.parts
    assert png.inline_data is not None and png.inline_data.data == b"\x89PNG\r\n\x1a\n"
    assert radar.file_data is not None and radar.file_data.mime_type == "image/webp"


def test_calls_without_ids_are_answered_by_name_without_an_id(
        toolbox: toolbridge.Toolbox) -> None:
    response = payload("generate-content.response.no-ids")
    pending = DIALECT.read_calls(response)
    assert [c.id for c in pending.calls] == ["call_0", "call_1"]
    body = toolbox.handle(D, response)
    parts = body["contents"][0]["parts"]
    assert [set(p["functionResponse"]) for p in parts] == [{"name", "response"}] * 2
    assert parts[1]["functionResponse"]["response"] == {"output": "ticket: umbrellas"}


def test_struct_doubles_become_the_schema_types(toolbox: toolbridge.Toolbox) -> None:
    body = toolbox.handle(D, payload("generate-content.response.no-ids"))
    output = body["contents"][0]["parts"][0]["functionResponse"]["response"]["output"]
    assert output["days"] == 3 and isinstance(output["days"], int)  # sent as 3.0


def test_failed_calls_answer_with_an_error_key(toolbox: toolbridge.Toolbox) -> None:
    response = payload("generate-content.response.function-calls")
    response["candidates"][0]["content"]["parts"][1]["functionCall"]["args"] = {"days": 2}
    parts = toolbox.handle(D, response)["contents"][0]["parts"]
    assert set(parts[0]["functionResponse"]["response"]) == {"error"}
    assert "location" in parts[0]["functionResponse"]["response"]["error"]
    assert "output" in parts[1]["functionResponse"]["response"]


def test_sdk_objects_and_json_text_are_read(toolbox: toolbridge.Toolbox) -> None:
    text = json.dumps(payload("generate-content.response.function-calls"))
    from_sdk = toolbox.handle(D, types.GenerateContentResponse.model_validate_json(text))
    assert from_sdk == toolbox.handle(D, text)
    pending = DIALECT.read_calls(json.loads(text))
    sdk = types.GenerateContentResponse.model_validate_json(text)
    signature = sdk.candidates[0].content.parts[1].thought_signature  # type: ignore[index, union-attr]
    assert first_signature(pending) is not None and signature is not None
    import base64

    assert base64.b64decode(first_signature(pending) or "") == signature


def first_signature(pending: Any) -> str | None:
    corr = pending.calls[0].correlation
    return corr.thought_signature if isinstance(corr, GeminiCorrelation) else None


def test_a_conversation_keys_calls_by_position(toolbox: toolbridge.Toolbox) -> None:
    conversation = payload("conversation.pending")
    [call] = DIALECT.read_calls_in(conversation, "c-1").calls
    assert (call.conversation, call.turn, call.id) == ("c-1", "1", "t1b8n4qe")
    with pytest.raises(toolbridge.UsageError, match="which turn"):
        DIALECT.read_calls_in(conversation["contents"][1], "c-1")


@pytest.mark.parametrize(("body", "field"), [
    ({"candidates": []}, "candidates"),
    ({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"args": {}}}]}}]},
     "candidates[0].content.parts[0].functionCall.name"),
    ({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "id": 7}}]}}]},
     "candidates[0].content.parts[0].functionCall.id"),
    ({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, "contents[0].role"),
    ({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f"},
                                             "thoughtSignature": 5}]}}]},
     "candidates[0].content.parts[0].thoughtSignature"),
])
def test_malformed_payloads_name_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(WireFormatError) as caught:
        DIALECT.read_calls(body)
    assert caught.value.field == field


def test_args_that_are_not_an_object_fail_that_call_only(toolbox: toolbridge.Toolbox) -> None:
    response = payload("generate-content.response.function-calls")
    response["candidates"][0]["content"]["parts"][1]["functionCall"]["args"] = ["Paris"]
    parts = toolbox.handle(D, response)["contents"][0]["parts"]
    assert "not a JSON object" in parts[0]["functionResponse"]["response"]["error"]
    assert "output" in parts[1]["functionResponse"]["response"]


def test_an_oversized_result_is_an_error_result() -> None:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(location: str, days: int = 1) -> str:
        """Huge."""
        return "x" * ((DIALECT.limits.max_result_bytes or 0) + 1)

    parts = box.handle(D, payload("generate-content.response.function-calls"))[
        "contents"][0]["parts"]
    assert all("error" in p["functionResponse"]["response"] for p in parts)


def test_tool_choice() -> None:
    assert DIALECT.render_tool_choice(ToolChoice(mode="required")) == {
        "functionCallingConfig": {"mode": "ANY"}}
    assert DIALECT.render_tool_choice(ToolChoice.named("get_weather")) == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}
    assert DIALECT.render_tool_choice(ToolChoice(mode="none")) == {
        "functionCallingConfig": {"mode": "NONE"}}
    types.ToolConfig.model_validate(DIALECT.render_tool_choice(ToolChoice()))


# ---------------------------------------------------------------------- declarations
def test_declarations_parse_as_sdk_tools(toolbox: toolbridge.Toolbox) -> None:
    rendered = toolbox.render(D)
    types.Tool.model_validate_json(json.dumps(tools_field(rendered.definitions)[0]))
    weather, ticket = rendered.definitions
    # get_weather: the Schema form loses additionalProperties: false, the JSON form the
    # defaults: a tie goes to parameters.
    assert weather == {"name": "get_weather", "description": "Forecast for a location.",
                       "parameters": {"type": "OBJECT", "properties": {
                           "location": {"type": "STRING"},
                           "days": {"type": "INTEGER", "default": 1},
                           "unit": {"type": "STRING", "enum": ["c", "f"], "default": "c"}},
                           "required": ["location"]}}
    # create_ticket: only JSON Schema says "no other properties": parametersJsonSchema.
    assert ticket == {"name": "create_ticket", "description": "Open a support ticket.",
                      "parametersJsonSchema": {"type": "object", "properties": {
                          "subject": {"type": "string"}}, "required": ["subject"],
                          "additionalProperties": False}}
    assert [str(loss) for loss in rendered.losses["get_weather"]] == [
        "/ additionalProperties: dropped (Gemini cannot forbid extra properties; checked on "
        "arrival)"]
    assert "create_ticket" not in rendered.losses


def test_recursion_goes_as_json_schema_and_string_bounds_as_schema() -> None:
    tree = ToolDefinition(name="walk", parameters={
        "type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {
            "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}})
    declaration, losses = render_declaration(tree)
    assert declaration["parametersJsonSchema"] == tree.parameters and losses == ()
    code = ToolDefinition(name="zip", parameters={"type": "object", "properties": {
        "code": {"type": "string", "pattern": "^[0-9]{5}$", "maxLength": 5},
        "when": {"type": "string", "format": "date-time"}}})
    declaration, losses = render_declaration(code)
    assert declaration["parameters"] == {"type": "OBJECT", "properties": {
        "code": {"type": "STRING", "pattern": "^[0-9]{5}$", "maxLength": 5},
        "when": {"type": "STRING", "format": "date-time"}}}
    assert losses == ()


def test_a_tool_without_parameters_declares_none() -> None:
    declaration, losses = render_declaration(ToolDefinition(name="ping", parameters={
        "type": "object", "properties": {}}))
    assert declaration == {"name": "ping"} and losses == ()


def test_imported_tools_render_back_as_they_came() -> None:
    tools = payload("tools")
    imported = DIALECT.import_tools(tools)
    assert [t.name for t in imported.definitions] == ["get_weather", "create_ticket", "ping"]
    assert [s.kind for s in imported.skipped] == ["googleSearch", "codeExecution"]
    weather = imported.definitions[0]
    assert weather.parameters["properties"]["unit"] == {"enum": ["c", "f", None],
                                                        "type": ["string", "null"]}
    assert DIALECT.render_tools(imported.definitions).definitions == tools[0][
        "functionDeclarations"]
    changed = weather.model_copy(update={"description": "Changed."})
    again = DIALECT.render_tools([changed]).definitions[0]
    assert again["description"] == "Changed." and again["parameters"]["properties"][
        "location"]["type"] == "STRING"
