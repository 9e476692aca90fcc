"""The Interactions translations on recorded payloads, with google-genai's types as the
oracle: what we read parses with them, what we write parses back into them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import interactions as sdk
from interactions_support import PAYLOADS, D, payload, unknown_keys

import toolbridge
from toolbridge import Content, DocumentPart, ImagePart, TextPart, ToolResult, WireFormatError
from toolbridge.testing import check_dialect
from toolbridge_gemini_interactions import InteractionCorrelation
from toolbridge_gemini_interactions.wire import MAX_RESULT_CHARS


@pytest.mark.parametrize("path", sorted(PAYLOADS.glob("*.json")), ids=lambda p: p.stem)
def test_every_recording_parses_with_the_sdk_types(path: Any) -> None:
    data = json.loads(path.read_text())
    if "event_type" in data:
        model: Any = sdk.InteractionCompletedEvent.model_validate(data)
    elif "status" in data:
        model = sdk.Interaction.model_validate(data)
    else:
        model = sdk.CreateModelInteraction.model_validate(data)
    assert unknown_keys(model) == []


def test_parallel_calls_are_read_with_their_interaction() -> None:
    pending = toolbridge.get_dialect(D).read_calls(
        payload("gemini-interactions.interaction.requires-action.parallel"))
    assert [(c.id, c.name, c.arguments) for c in pending.calls] == [
        ("4f1c2a7e", "get_weather", {"location": "Paris", "unit": "celsius"}),
        ("9b03d6e1", "get_weather", {"location": "Lima"})]
    interaction = "v1_ChdDYWxsMTIzNDU2Nzg5MGFiY2RlZmdoaWo"
    assert {(c.conversation, c.turn) for c in pending.calls} == {(interaction, interaction)}
    correlation = pending.calls[0].correlation
    assert isinstance(correlation, InteractionCorrelation)
    assert correlation.interaction_id == interaction


def test_the_kit_on_a_recording(toolbox: toolbridge.Toolbox) -> None:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(location: str, unit: str = "celsius") -> str:
        """Weather."""
        return f"{location}: 18 {unit}"

    check_dialect(D, list(box), payload(
        "gemini-interactions.interaction.requires-action.parallel"))


def _handled(source: Any) -> dict[str, Any]:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(location: str, unit: str = "celsius") -> str:
        """Weather."""
        if location == "Lima":
            raise RuntimeError("no station in Lima")
        return f"{location}: 18 {unit}"

    return box.handle(D, source)


@pytest.mark.parametrize("form", ["dict", "json", "sdk"])
def test_results_from_dict_json_and_sdk_objects_parse_as_a_create(form: str) -> None:
    data = payload("gemini-interactions.interaction.requires-action.parallel")
    source: Any = {"dict": data, "json": json.dumps(data),
                   "sdk": sdk.Interaction.model_validate(data)}[form]
    body = _handled(source)
    create = sdk.CreateModelInteraction.model_validate({"model": "m", **body})
    assert unknown_keys(create) == []
    assert body["previous_interaction_id"] == data["id"]
    ok, failed = body["input"]
    assert ok == {"type": "function_result", "call_id": "4f1c2a7e", "name": "get_weather",
                  "result": "Paris: 18 celsius"}
    assert failed["is_error"] is True and "no station in Lima" in failed["result"]
    assert isinstance(sdk.FunctionResultStep.model_validate(failed), sdk.FunctionResultStep)


def test_the_completed_event_of_a_stream_is_a_payload() -> None:
    pending = toolbridge.get_dialect(D).read_calls(
        payload("gemini-interactions.stream.interaction-completed.event"))
    assert [c.name for c in pending.calls] == ["get_customer"]


def test_a_finished_interaction_has_nothing_pending() -> None:
    pending = toolbridge.get_dialect(D).read_calls(
        payload("gemini-interactions.interaction.completed"))
    assert pending.calls == () and "completed" in pending.reason


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d.pop("id"), "id"),
    (lambda d: d.update(status=3), "status"),
    (lambda d: d.update(steps={}), "steps"),
    (lambda d: d["steps"][1].pop("name"), "steps[1].name"),
    (lambda d: d["steps"][2].pop("arguments"), "steps[2].arguments"),
    (lambda d: d["steps"].__setitem__(0, "thought"), "steps[0]"),
    (lambda d: d.update(event_type="step.start"), "event_type"),
])
def test_malformed_interactions_name_the_field(change: Any, field: str) -> None:
    data = payload("gemini-interactions.interaction.requires-action.parallel")
    change(data)
    with pytest.raises(WireFormatError) as caught:
        toolbridge.get_dialect(D).read_calls(data)
    assert caught.value.dialect == D and caught.value.field == field


def test_arguments_that_are_not_an_object_are_the_calls_own_error() -> None:
    data = payload("gemini-interactions.interaction.requires-action.parallel")
    data["steps"][1]["arguments"] = "Paris"
    body = _handled(data)
    first = body["input"][0]
    assert first["is_error"] is True and "arguments" in first["result"]


def _result(output: Any) -> ToolResult:
    call = toolbridge.get_dialect(D).read_calls(
        payload("gemini-interactions.interaction.requires-action.parallel")).calls[0]
    return ToolResult.ok(call, output)


def test_content_parts_and_the_size_limit() -> None:
    dialect = toolbridge.get_dialect(D)
    parts = Content(parts=(TextPart(text="a chart"), ImagePart(url="https://x.test/c.png"),
                           ImagePart(url="data:image/png;base64,iVBORw0K")))
    step = dialect.write_results([_result(parts)])["input"][0]
    assert step["result"] == [{"type": "text", "text": "a chart"},
                              {"type": "image", "uri": "https://x.test/c.png"},
                              {"type": "image", "data": "iVBORw0K", "mime_type": "image/png"}]
    assert unknown_keys(sdk.FunctionResultStep.model_validate(step)) == []
    big = dialect.write_results([_result("x" * (MAX_RESULT_CHARS + 1))])["input"][0]
    assert big["is_error"] is True and "at most" in big["result"]


def test_a_handler_returning_documents_writes_document_parts() -> None:
    box = toolbridge.Toolbox()
    box.tool(lambda: [DocumentPart(data="JVBERi0=", title="q3.pdf"),
                      DocumentPart(url="https://x.test/q3.pdf"),
                      DocumentPart(media_type="text/plain", data="bm90ZXM=", title="n.txt")],
             name="report")
    call = _result("").call.model_copy(update={"name": "report", "arguments": {}})
    step = toolbridge.get_dialect(D).write_results(box.execute([call]))["input"][0]
    assert step["result"] == [
        {"type": "document", "mime_type": "application/pdf", "data": "JVBERi0="},
        {"type": "document", "mime_type": "application/pdf", "uri": "https://x.test/q3.pdf"},
        {"type": "text", "text": "[document: n.txt (text/plain)]"}]
    parsed = sdk.FunctionResultStep.model_validate(step)
    assert unknown_keys(parsed) == [] and type(parsed.result[0]).__name__ == "DocumentContent"


def test_tools_render_as_sdk_functions_and_read_back(toolbox: toolbridge.Toolbox) -> None:
    rendered = toolbox.definitions(D)
    for entry in rendered:
        assert unknown_keys(sdk.Function.model_validate(entry)) == []
    imported = toolbridge.get_dialect(D).import_tools(
        payload("gemini-interactions.create.tools.request")["tools"])
    assert [t.name for t in imported.definitions] == ["get_weather", "get_customer"]
    assert imported.definitions[1].defer_loading
    assert imported.definitions[1].vendor_extras[D] == {"short_description": "A customer by id."}
    assert [(s.index, s.kind) for s in imported.skipped] == [(2, "google_search")]


def test_tool_choice() -> None:
    dialect = toolbridge.get_dialect(D)
    assert dialect.render_tool_choice(toolbridge.ToolChoice(mode="required")) == "any"
    assert dialect.render_tool_choice(toolbridge.ToolChoice(mode="tool", tool="t")) == {
        "allowed_tools": {"mode": "any", "tools": ["t"]}}
    sdk.GenerationConfig.model_validate({"tool_choice": dialect.render_tool_choice(
        toolbridge.ToolChoice(mode="tool", tool="t"))})


def test_what_gemini_ignores_is_reported_and_the_policy_honoured() -> None:
    box = toolbridge.Toolbox()

    @box.tool
    def tag(name: str) -> str:
        """Tag something."""
        return name

    definition = box.get("tag").model_copy(update={"parameters": {
        "type": "object", "properties": {"name": {"type": "string", "minLength": 2}},
        "required": ["name"]}})
    rendered = toolbridge.get_dialect(D).render_tools([definition])
    assert rendered.definitions[0]["parameters"]["properties"]["name"]["minLength"] == 2
    [loss] = rendered.losses["tag"]
    assert (loss.pointer, loss.keyword, loss.enforced) == ("/properties/name", "minLength",
                                                           True)
    with pytest.raises(toolbridge.SchemaConversionError, match="minLength"):
        toolbridge.get_dialect(D).render_tools([definition], policy="lossless")
