"""Translation on recorded payloads: tools, pending calls, results, tool_choice, strict nulls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from assistants_support import D, payload
from openai.types.beta.assistant_stream_event import AssistantStreamEvent
from openai.types.beta.assistant_tool_choice_option_param import AssistantToolChoiceOptionParam
from openai.types.beta.assistant_tool_param import AssistantToolParam
from openai.types.beta.threads.run import Run
from openai.types.beta.threads.run_submit_tool_outputs_params import ToolOutput
from openai_sdk_types import check_model, check_param, parse_model

import toolbridge
from toolbridge import ToolCall, ToolChoice, ToolDefinition, ToolResult, WireFormatError
from toolbridge.testing import check_dialect
from toolbridge_openai_assistants import AssistantsCorrelation, OpenAIAssistantsDialect

dialect = toolbridge.get_dialect(D)


def test_registered_through_the_entry_point() -> None:
    assert isinstance(dialect, OpenAIAssistantsDialect)
    assert dialect.limits.max_result_chars == 1_048_576


def test_samples_are_what_the_sdk_expects() -> None:
    assert check_model(payload("run.requires-action.response"), Run) == []
    assert check_model(payload("stream.requires-action.event"), AssistantStreamEvent) == []
    assert check_param(payload("tools"), list[AssistantToolParam]) == []


def test_conformance() -> None:
    tools = [ToolDefinition(name="get_weather"), ToolDefinition(name="get_time")]
    check_dialect(dialect, tools, payload("run.requires-action.response"))


def test_rendered_tools_validate_against_sdk(toolbox: toolbridge.Toolbox) -> None:
    rendered = toolbox.render(D)
    assert check_param(rendered.definitions, list[AssistantToolParam]) == []
    weather, clock = rendered.definitions
    assert weather["function"]["strict"] is True
    params = weather["function"]["parameters"]
    assert params["additionalProperties"] is False
    assert set(params["required"]) == {"location", "unit"}  # optional became required+nullable
    assert clock == {"type": "function", "function": {
        "name": "get_time", "description": "Get the local time in an IANA time zone.",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}},
                       "required": ["tz"], "additionalProperties": False},
        "strict": True}}  # strict=None and lossless: sent strict


def test_strict_none_with_losses_is_sent_as_declared() -> None:
    schema = {"type": "object", "properties": {  # an open dict cannot be strict
        "tags": {"type": "object", "additionalProperties": {"type": "string"}}}}
    tool = ToolDefinition(name="t", parameters=schema)
    [definition] = dialect.render_tools([tool]).definitions
    assert definition["function"]["parameters"] == schema
    assert "strict" not in definition["function"]


def test_strict_false_is_kept_and_strict_true_reports_losses() -> None:
    schema = {"type": "object", "properties": {  # an open dict cannot be strict
        "tags": {"type": "object", "additionalProperties": {"type": "string"}}}}
    off = dialect.render_tools([ToolDefinition(name="t", parameters=schema, strict=False)])
    assert off.definitions[0]["function"]["strict"] is False
    on = dialect.render_tools([ToolDefinition(name="t", parameters=schema, strict=True)])
    assert on.definitions[0]["function"]["strict"] is True
    assert on.losses["t"]


@pytest.mark.parametrize("name", ["run.requires-action.response", "stream.requires-action.event"])
def test_reads_calls_from_run_and_stream_event(name: str) -> None:
    calls = dialect.read_calls(payload(name)).calls
    assert [(c.id, c.name) for c in calls] == [("call_w1", "get_weather"),
                                               ("call_t1", "get_time")]
    first = calls[0]
    assert first.arguments == {"location": "Seattle", "unit": None}
    assert (first.conversation, first.turn) == ("thread_abc123", "run_abc123")
    assert first.correlation == AssistantsCorrelation(
        thread_id="thread_abc123", run_id="run_abc123", tool_call_id="call_w1",
        expires_at=1767226200)


def test_reads_calls_from_sdk_objects() -> None:
    run = Run.model_validate(payload("run.requires-action.response"))
    body = toolbridge.Toolbox().handle(D, run)  # no tools: every call answers an error
    assert [o["tool_call_id"] for o in body["tool_outputs"]] == ["call_w1", "call_t1"]
    errors, event = parse_model(payload("stream.requires-action.event"), AssistantStreamEvent)
    assert errors == [] and type(event).__name__ == "ThreadRunRequiresAction"


def test_invalid_json_arguments_become_an_error_result_quoting_the_parse_error(
        toolbox: toolbridge.Toolbox) -> None:
    run = payload("run.requires-action.response")
    run["required_action"]["submit_tool_outputs"]["tool_calls"][1]["function"][
        "arguments"] = '{"tz": '
    body = toolbox.handle(D, run)
    error = json.loads(body["tool_outputs"][1]["output"])["error"]
    assert "not valid JSON" in error and "Expecting value" in error
    assert json.loads(body["tool_outputs"][0]["output"])["location"] == "Seattle"


def test_null_for_an_optional_parameter_lets_the_default_apply(
        toolbox: toolbridge.Toolbox) -> None:
    body = toolbox.handle(D, payload("run.requires-action.response"))
    assert json.loads(body["tool_outputs"][0]["output"])["unit"] == "celsius"


def test_null_kept_when_the_parameter_accepts_null() -> None:
    tool = ToolDefinition(name="t", parameters={
        "type": "object", "properties": {"a": {"type": ["string", "null"]},
                                         "b": {"type": "string"},
                                         "c": {"type": "object", "properties": {
                                             "d": {"type": "integer"}}}},
        "required": ["b"]})
    call = ToolCall(id="1", name="t", dialect=D,
                    arguments={"a": None, "b": None, "c": {"d": None}})
    assert dialect.decode_arguments(call, tool) == {"a": None, "b": None, "c": {}}


def _calls() -> list[ToolCall]:
    return list(dialect.read_calls(payload("run.requires-action.response")).calls)


def test_results_in_one_body_with_documented_error_form() -> None:
    ok, bad = _calls()
    body = dialect.write_results([ToolResult.ok(ok, {"temp_c": 14}),
                                  ToolResult.failed(bad, "time service unavailable")])
    assert body == {"tool_outputs": [
        {"tool_call_id": "call_w1", "output": '{"temp_c":14}'},
        {"tool_call_id": "call_t1", "output": '{"error": "time service unavailable"}'}]}
    assert check_param(body["tool_outputs"], list[ToolOutput]) == []
    assert set(body) == {"tool_outputs"}


def test_outputs_never_exceed_the_limit() -> None:
    call = _calls()[0]
    body = dialect.write_results([ToolResult.ok(call, "x" * 1_048_577)])
    output = body["tool_outputs"][0]["output"]
    assert len(output) < 1_048_576 and "1048576" in json.loads(output)["error"]
    exact = dialect.write_results([ToolResult.ok(call, "x" * 1_048_576)])
    assert len(exact["tool_outputs"][0]["output"]) == 1_048_576


@pytest.mark.parametrize(("choice", "wire"), [
    (ToolChoice(), "auto"), (ToolChoice(mode="none"), "none"),
    (ToolChoice(mode="required"), "required"),
    (ToolChoice.named("get_time"), {"type": "function", "function": {"name": "get_time"}}),
])
def test_tool_choice(choice: ToolChoice, wire: Any) -> None:
    assert dialect.render_tool_choice(choice) == wire
    assert check_param(wire, AssistantToolChoiceOptionParam) == []


@pytest.mark.parametrize(("bad", "field"), [
    ({"status": "requires_action", "id": "r", "thread_id": "t",
      "required_action": {"type": "submit_tool_outputs", "submit_tool_outputs": {}}},
     "required_action.submit_tool_outputs.tool_calls"),
    ({"event": "thread.run.requires_action", "data": {
        "status": "requires_action", "thread_id": "t", "required_action": {
            "type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "x"}}]}}}},
     "data.id"),
    ({"status": "requires_action", "id": "r", "thread_id": "t", "required_action": {
        "type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": [
            {"type": "function", "function": {"name": "x"}}]}}},
     "required_action.submit_tool_outputs.tool_calls[0].id"),
    ({"unexpected": 1}, "required_action"),
])
def test_malformed_payloads_name_the_field(bad: dict[str, Any], field: str) -> None:
    with pytest.raises(WireFormatError) as info:
        dialect.read_calls(bad)
    assert info.value.field == field and info.value.dialect == D


def test_completed_run_has_no_calls_and_other_actions_are_left_to_the_caller() -> None:
    done = {**payload("run.requires-action.response"), "status": "completed",
            "required_action": None}
    assert dialect.read_calls(done).calls == ()
    other = {**done, "required_action": {"type": "approve"}}
    assert dialect.read_calls(other).unhandled == ({"type": "approve"},)
