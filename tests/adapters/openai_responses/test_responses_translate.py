"""Translation on recorded payloads: tools, pending calls, results, tool_choice, store keys."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.conversations.conversation_item_list import ConversationItemList
from openai.types.responses.function_tool_param import FunctionToolParam
from openai.types.responses.response import Response
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
)
from openai.types.responses.response_create_params import ToolChoice as SDKToolChoice
from openai.types.responses.response_input_item_param import FunctionCallOutput
from openai.types.responses.response_stream_event import ResponseStreamEvent
from openai.types.responses.tool_param import ToolParam
from openai_sdk_types import check_model, check_param
from responses_support import D, payload

import toolbridge
from toolbridge import (
    Content,
    DocumentPart,
    ImagePart,
    TextPart,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UsageError,
    WireFormatError,
)
from toolbridge.plugin import MAX_ARGUMENT_BYTES
from toolbridge.testing import check_dialect
from toolbridge_openai_responses import OpenAIResponsesDialect, ResponsesCorrelation

dialect = toolbridge.get_dialect(D)
RESPONSE = "openai-responses.response.function-calls"


def _create(body: dict[str, Any], toolbox: toolbridge.Toolbox) -> dict[str, Any]:
    """A whole continuing request: our fragment plus the driver's model and tools."""
    return {"model": "gpt-5", "tools": toolbox.definitions(D), **body}


def test_registered_through_the_entry_point() -> None:
    assert isinstance(dialect, OpenAIResponsesDialect)
    assert dialect.limits.max_result_chars == 10_485_760 and dialect.limits.content_parts


def test_samples_are_what_the_sdk_expects() -> None:
    assert check_model(payload(RESPONSE), Response) == []
    assert check_model(payload("openai-responses.response.background-queued"), Response) == []
    for name in ("output-item-done", "output-item-added", "function-call-arguments-done"):
        assert check_model(payload(f"openai-responses.stream.{name}.event"),
                           ResponseStreamEvent) == []
    assert check_param(payload("openai-responses.tools.namespace-deferred"),
                       list[ToolParam]) == []
    assert check_model(payload("openai-responses.conversation-items.list.response"),
                       ConversationItemList) == []


def test_conformance() -> None:
    tools = [ToolDefinition(name="get_weather"), ToolDefinition(name="get_time")]
    check_dialect(dialect, tools, payload(RESPONSE))


# ---------------------------------------------------------------------- definitions
def test_rendered_tools_validate_against_the_sdk(toolbox: toolbridge.Toolbox) -> None:
    weather, clock = toolbox.definitions(D)
    assert check_param([weather, clock], list[FunctionToolParam]) == []
    assert weather["strict"] is True and weather["parameters"]["additionalProperties"] is False
    assert set(weather["parameters"]["required"]) == {"location", "unit"}
    assert clock == {"type": "function", "name": "get_time",
                     "description": "Get the local time in an IANA time zone.",
                     "parameters": {"type": "object", "properties": {"tz": {"type": "string"}},
                                    "required": ["tz"], "additionalProperties": False},
                     "strict": True}  # strict=None and lossless: sent strict


def test_not_lossless_is_sent_as_declared_with_strict_false() -> None:
    schema = {"type": "object", "properties": {
        "tags": {"type": "object", "additionalProperties": {"type": "string"}}}}
    [wire] = dialect.render_tools([ToolDefinition(name="t", parameters=schema)]).definitions
    assert wire["parameters"] == schema and wire["strict"] is False  # absent means strict here
    on = dialect.render_tools([ToolDefinition(name="t", parameters=schema, strict=True)])
    assert on.definitions[0]["strict"] is True and on.losses["t"]


def test_deferred_tools_add_tool_search_and_returns_become_output_schema() -> None:
    returns = {"type": "object", "properties": {"name": {"type": "string"}}}
    tools = [ToolDefinition(name="a", defer_loading=True, returns=returns),
             ToolDefinition(name="b", defer_loading=True)]
    definitions = dialect.render_tools(tools).definitions
    assert check_param(definitions, list[ToolParam]) == []
    assert definitions[-1] == {"type": "tool_search"}
    assert [d.get("defer_loading") for d in definitions[:2]] == [True, True]
    assert definitions[0]["output_schema"] == returns and "output_schema" not in definitions[1]


def test_output_schema_only_where_the_output_is_sent_as_the_json_it_describes() -> None:
    """A handler's string goes out as it is: a returns schema admitting one describes no
    wire text, so it is not sent; the others describe exactly the JSON that is sent."""
    import jsonschema

    box = toolbridge.Toolbox(store=None)
    box.tool(lambda: "x", name="text")
    for name, value, annotation in (("maybe", "plain", "str | None"),
                                    ("either", "raw", "str | int"),
                                    ("count", 3, "int"),
                                    ("rows", [{"a": 1}], "list[dict[str, int]]"),
                                    ("nothing", None, "int | None")):
        namespace: dict[str, Any] = {}
        exec(f"def {name}() -> {annotation}:\n    return {value!r}", namespace)
        box.tool(namespace[name])
    wire = {d["name"]: d for d in box.definitions(D)}
    assert [n for n, d in wire.items() if "output_schema" in d] == ["count", "rows", "nothing"]
    response = {"id": "resp_1", "object": "response", "status": "completed", "output": [
        {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": n,
         "arguments": "{}", "status": "completed"} for n in wire]}
    outputs = {item["call_id"].removeprefix("call_"): item["output"]
               for item in box.handle(D, response)["input"]}
    assert outputs["maybe"] == "plain" and outputs["either"] == "raw"  # text, as it is
    for name in ("count", "rows", "nothing"):
        jsonschema.validate(json.loads(outputs[name]), wire[name]["output_schema"])


def test_namespaces_and_deferred_tools_read_back_and_render_unchanged() -> None:
    wire = payload("openai-responses.tools.namespace-deferred")
    tools = dialect.read_tools(wire)
    assert [(t.name, t.defer_loading, t.strict) for t in tools] == [
        ("get_customer", True, True), ("send_invoice", True, False)]
    assert tools[0].returns == wire[0]["tools"][0]["output_schema"]
    assert dialect.render_tools(tools).definitions == wire


def test_a_foundry_agent_definition_reads_as_tools() -> None:
    definition = payload("azure-foundry.agent-version.response")["definition"]
    [tool] = dialect.read_tools(definition)
    assert tool.name == "get_weather" and tool.strict is True
    assert dialect.render_tools([tool]).definitions == definition["tools"]


@pytest.mark.parametrize("tools, field", [
    ({"tools": "x"}, "tools"), ([7], "tools[0]"), ([{"type": 1}], "tools[0].type"),
    ([{"type": "function"}], "tools[0].name"),
    ([{"type": "function", "name": "a", "strict": "yes"}], "tools[0].strict"),
    ([{"type": "namespace", "name": "n"}], "tools[0].tools"),
    ([{"type": "function", "name": "bad name"}], "tools[0].name"),
])
def test_malformed_tool_lists_name_the_field(tools: Any, field: str) -> None:
    with pytest.raises(WireFormatError) as info:
        dialect.read_tools(tools)
    assert info.value.field == field


@pytest.mark.parametrize("choice", [ToolChoice(), ToolChoice(mode="none"),
                                    ToolChoice(mode="required"),
                                    ToolChoice.named("get_time")])
def test_tool_choice_fits_the_sdk(choice: ToolChoice) -> None:
    wire = dialect.render_tool_choice(choice)
    assert check_param(wire, SDKToolChoice) == []
    if choice.mode == "tool":
        assert wire == {"type": "function", "name": "get_time"}


# ---------------------------------------------------------------------- pending calls
def test_reads_the_calls_of_a_response() -> None:
    calls = dialect.read_calls(payload(RESPONSE)).calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_w1", "get_weather", {"location": "Paris", "unit": "celsius"}),
        ("call_t1", "get_time", {"tz": "Europe/Paris"})]
    assert (calls[0].conversation, calls[0].turn) == ("resp_68a1b2c3", "resp_68a1b2c3")
    assert calls[0].correlation == ResponsesCorrelation(
        response_id="resp_68a1b2c3", call_id="call_w1", item_id="fc_68a1b2c3_0")


def test_a_response_of_a_conversation_is_keyed_and_continued_by_it(
        toolbox: toolbridge.Toolbox) -> None:
    response = {**payload(RESPONSE), "conversation": {"id": "conv_1"}}
    calls = dialect.read_calls(response).calls
    assert {(c.conversation, c.turn) for c in calls} == {("conv_1", "")}  # see read_calls
    body = toolbox.handle(D, response)
    assert body["conversation"] == "conv_1" and "previous_response_id" not in body
    assert check_param(_create(body, toolbox), ResponseCreateParamsNonStreaming) == []


def test_reads_sdk_objects_and_the_completed_event(toolbox: toolbridge.Toolbox) -> None:
    sdk = Response.model_validate(payload(RESPONSE))
    assert [o["call_id"] for o in toolbox.handle(D, sdk)["input"]] == ["call_w1", "call_t1"]
    event = {"type": "response.completed", "sequence_number": 9, "response": payload(RESPONSE)}
    assert check_model(event, ResponseStreamEvent) == []
    assert [c.id for c in dialect.read_calls(event).calls] == ["call_w1", "call_t1"]


@pytest.mark.parametrize("name", ["openai-responses.stream.output-item-done.event",
                                  "openai-responses.stream.output-item-added.event",
                                  "openai-responses.function-call.output-item"])
def test_a_lone_event_or_item_is_not_a_payload(name: str) -> None:
    with pytest.raises(WireFormatError) as info:
        dialect.read_calls(payload(name))
    assert info.value.field == "type"


@pytest.mark.parametrize("status", ["queued", "in_progress", "failed", "cancelled",
                                    "incomplete"])
def test_only_a_completed_response_has_pending_calls(status: str) -> None:
    assert dialect.read_calls({**payload(RESPONSE), "status": status}).calls == ()
    queued = payload("openai-responses.response.background-queued")
    assert dialect.read_calls(queued).calls == ()


def test_client_side_items_other_than_functions_are_left_unhandled() -> None:
    response = payload(RESPONSE)
    approval = {"type": "mcp_approval_request", "id": "mcpr_1", "name": "x",
                "arguments": "{}", "server_label": "s"}
    response["output"] += [approval, {"type": "message", "id": "m", "role": "assistant",
                                      "status": "completed", "content": []}]
    pending = dialect.read_calls(response)
    assert len(pending.calls) == 2 and pending.unhandled == (approval,)


@pytest.mark.parametrize("field, value, where", [
    ("id", None, "id"), ("output", "x", "output"), ("conversation", 3, "conversation"),
    ("conversation", {"id": ""}, "conversation.id"), ("status", 5, "status"),
])
def test_malformed_responses_name_the_field(field: str, value: Any, where: str) -> None:
    with pytest.raises(WireFormatError) as info:
        dialect.read_calls({**payload(RESPONSE), field: value})
    assert (info.value.dialect, info.value.field) == (D, where)


def test_bad_argument_strings_fail_only_their_own_call(toolbox: toolbridge.Toolbox) -> None:
    response = payload(RESPONSE)
    deep = '{"a":' * 1000 + "1" + "}" * 1000
    for index, arguments in ((1, '{"tz": '), (1, deep),
                             (1, '{"tz": "' + "x" * MAX_ARGUMENT_BYTES + '"}')):
        response["output"][1]["arguments"] = arguments
        body = toolbox.handle(D, response)
        first, second = (item["output"] for item in body["input"])
        assert json.loads(first)["location"] == "Paris"
        assert "invalid arguments for get_time" in json.loads(second)["error"], index


# ---------------------------------------------------------------------- results
def test_results_match_the_recorded_request(toolbox: toolbridge.Toolbox) -> None:
    sample = payload("openai-responses.function-call-output.request")
    response = payload(RESPONSE)
    response["id"] = "resp_68a1b2c3"
    response["output"] = [{**response["output"][0], "call_id": "call_r1"}]
    body = toolbox.handle(D, response)
    assert body["previous_response_id"] == sample["previous_response_id"]
    assert [i["call_id"] for i in body["input"]] == ["call_r1"]
    assert check_param(body["input"], list[FunctionCallOutput]) == []
    assert check_param(_create(body, toolbox), ResponseCreateParamsNonStreaming) == []


def test_content_and_error_results_fit_the_sdk() -> None:
    [weather, clock] = dialect.read_calls(
        {**payload(RESPONSE), "conversation": {"id": "conv_68a1b2c3"}}).calls
    content = Content(parts=(TextPart(text='{"temp_c":18}'),
                             ImagePart(url="https://example.com/radar/paris.png")))
    body = dialect.write_results([ToolResult.ok(weather, content),
                                  ToolResult.failed(clock, "time service unavailable")])
    assert body["input"][0]["output"] == [
        {"type": "input_text", "text": '{"temp_c":18}'},
        {"type": "input_image", "image_url": "https://example.com/radar/paris.png"}]
    assert body["input"][1]["output"] == '{"error": "time service unavailable"}'
    assert check_param({"model": "gpt-5", **body}, ResponseCreateParamsNonStreaming) == []


def test_a_handler_returning_documents_writes_input_files() -> None:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(location: str, unit: str = "c") -> list[Any]:
        """The forecast as files."""
        return [DocumentPart(data="JVBERi0xLjQ=", title=f"{location}.pdf"),
                DocumentPart(media_type="text/plain", data="bm90ZXM="),
                DocumentPart(url="https://example.com/q3.pdf", title="q3.pdf")]

    weather = dialect.read_calls(payload(RESPONSE)).calls[0]
    [result] = box.execute([weather])
    body = dialect.write_results([result])
    assert body["input"][0]["output"] == [
        {"type": "input_file", "filename": "Paris.pdf",
         "file_data": "data:application/pdf;base64,JVBERi0xLjQ="},
        {"type": "input_file", "filename": "document.txt",
         "file_data": "data:text/plain;base64,bm90ZXM="},
        {"type": "input_file", "file_url": "https://example.com/q3.pdf", "filename": "q3.pdf"}]
    assert check_param({"model": "gpt-5", **body}, ResponseCreateParamsNonStreaming) == []
    assert check_param(body["input"][0], FunctionCallOutput) == []


def test_results_of_two_responses_are_refused() -> None:
    one = dialect.read_calls(payload(RESPONSE)).calls[0]
    other = dialect.read_calls({**payload(RESPONSE), "id": "resp_2"}).calls[0]
    with pytest.raises(UsageError, match="several responses"):
        dialect.write_results([ToolResult.ok(one, 1), ToolResult.ok(other, 2)])


def test_foundry_continuation_with_agent_reference_fits(toolbox: toolbridge.Toolbox) -> None:
    sample = payload("azure-foundry.function-call-output.request")
    response = {**payload(RESPONSE), "conversation": {"id": sample["conversation"]}}
    body = toolbox.handle(D, response)
    request = {"agent_reference": sample["agent_reference"], **body}
    assert set(request) == set(sample)
    del request["agent_reference"]  # checked as AgentReference by validate_samples.py
    assert check_param(request, ResponseCreateParamsNonStreaming) == []


# ---------------------------------------------------------------------- store keys
def test_a_second_delivery_is_answered_from_the_store() -> None:
    box = toolbridge.Toolbox()
    runs: list[str] = []

    @box.tool(side_effects=True)
    def get_time(tz: str) -> str:
        """Time."""
        runs.append(tz)
        return "noon"

    response = payload(RESPONSE)
    response["output"] = response["output"][1:]
    first, second = box.handle(D, response), box.handle(D, response)
    assert first == second and runs == ["Europe/Paris"]


def test_conversation_keyword_keys_a_response_without_one() -> None:
    calls = dialect.read_calls_in(payload(RESPONSE), "conv_9").calls
    assert calls[0].conversation == "conv_9"
    assert dialect.write_results([ToolResult.ok(calls[0], 1)])["previous_response_id"] == (
        "resp_68a1b2c3")
    with pytest.raises(UsageError, match="belongs to conversation"):
        dialect.read_calls_in({**payload(RESPONSE), "conversation": {"id": "c1"}}, "c2")
