"""The emulator is strict like the service: the real error shapes of openai-responses.md §8,
the URL forms and their credentials, store=false, script errors, Foundry agent versions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openai.types.responses.response import Response
from openai.types.shared.error_object import ErrorObject
from openai_sdk_types import check_model
from responses_support import PARALLEL, D, payload

import toolbridge
from toolbridge.testing import emulator


@pytest.fixture
def http() -> Iterator[tuple[httpx.Client, Any]]:
    with emulator(D, script=PARALLEL) as emu, httpx.Client(
            base_url=emu.base_url + "/v1", headers={"Authorization": "Bearer k"}) as client:
        yield client, emu


def _tools(toolbox: toolbridge.Toolbox) -> list[dict[str, Any]]:
    return toolbox.definitions(D)


def _error(answer: httpx.Response, status: int, message: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert check_model(error, ErrorObject) == [] and message in error["message"], error
    return dict(error)


def test_responses_fit_the_sdk_model(http: Any, toolbox: toolbridge.Toolbox) -> None:
    client, _ = http
    response = client.post("/responses", json={"model": "m", "input": "x",
                                               "tools": _tools(toolbox)}).json()
    assert check_model(response, Response) == []


def test_missing_and_unknown_outputs_get_the_real_errors(http: Any,
                                                         toolbox: toolbridge.Toolbox) -> None:
    client, _ = http
    first = client.post("/responses", json={"model": "m", "input": "x",
                                            "tools": _tools(toolbox)}).json()
    weather, clock = (i["call_id"] for i in first["output"])
    one = [{"type": "function_call_output", "call_id": weather, "output": "{}"}]
    error = _error(client.post("/responses", json={
        "model": "m", "previous_response_id": first["id"], "input": one}), 400,
        f"No tool output found for function call {clock}.")
    assert error == {**payload("openai-responses.error.no-tool-output")["error"],
                     "message": f"No tool output found for function call {clock}."}
    stray = [*one, {"type": "function_call_output", "call_id": "call_nope", "output": "x"}]
    _error(client.post("/responses", json={"model": "m", "previous_response_id": first["id"],
                                           "input": stray}), 400,
           "No tool call found for function call output with call_id call_nope.")
    long = [{"type": "function_call_output", "call_id": "c" * 65, "output": "x"}]
    error = _error(client.post("/responses", json={"model": "m", "input": long}), 400,
                   "string too long")
    assert error["code"] == "string_above_max_length" and error["param"] == "input[0].call_id"


@pytest.mark.parametrize(("part", "param", "message"), [
    ({"type": "output_text", "text": "x"}, "input[0].output[1].type", "Supported values are"),
    ("x", "input[0].output[1]", "expected an object"),
    ({"type": "input_image"}, "input[0].output[1].image_url", "Missing required parameter"),
    ({"type": "input_text", "text": 7}, "input[0].output[1].text", "expected a string"),
    ({"type": "input_file", "file_data": "data:application/pdf;base64,JVBE"},
     "input[0].output[1].filename", "Missing required parameter"),
])
def test_an_output_part_the_service_does_not_take_is_a_400_naming_it(
        http: Any, toolbox: toolbridge.Toolbox, part: Any, param: str, message: str) -> None:
    client, _ = http
    first = client.post("/responses", json={"model": "m", "input": "x",
                                            "tools": _tools(toolbox)}).json()
    good = {"type": "input_image", "image_url": "https://example.com/a.png"}
    outputs = [{"type": "function_call_output", "call_id": i["call_id"],
                "output": [good, part]} for i in first["output"]]
    error = _error(client.post("/responses", json={
        "model": "m", "previous_response_id": first["id"], "input": outputs}), 400, message)
    assert error["param"] == param
    outputs = [{**o, "output": [good, {"type": "input_text", "text": "ok"}]} for o in outputs]
    taken = client.post("/responses", json={"model": "m", "previous_response_id": first["id"],
                                            "input": outputs})
    assert taken.status_code == 200, taken.text


def test_a_conversation_refuses_a_second_answer_to_one_call(
        http: Any, toolbox: toolbridge.Toolbox) -> None:
    client, _ = http
    conversation = client.post("/conversations", json={}).json()["id"]
    first = client.post("/responses", json={"model": "m", "input": "x", "tools": _tools(
        toolbox), "conversation": conversation}).json()
    outputs = [{"type": "function_call_output", "call_id": i["call_id"], "output": "1"}
               for i in first["output"]]
    added = client.post(f"/conversations/{conversation}/items", json={"items": outputs})
    assert added.status_code == 200 and [i["type"] for i in added.json()["data"]] == [
        "function_call_output"] * 2
    _error(client.post("/responses", json={"model": "m", "conversation": conversation,
                                           "input": outputs}), 400, "No tool call found")
    final = client.post("/responses", json={"model": "m", "conversation": conversation,
                                            "input": [], "tools": _tools(toolbox)}).json()
    assert final["output"][0]["content"][0]["text"] == 'Answer: ["1", "1"]'


@pytest.mark.parametrize("body, status, message", [
    ({"input": "x"}, 400, "Missing required parameter: 'model'."),
    ({"model": "m", "agent_reference": {"name": "a"}}, 400, "Unknown parameter"),
    ({"model": "m", "previous_response_id": "resp_x"}, 400, "Previous response with id"),
    ({"model": "m", "conversation": "conv_x"}, 404, "Conversation with id 'conv_x'"),
    ({"model": "m", "previous_response_id": "r", "conversation": "c"}, 400,
     "cannot be used together"),
    ({"model": "m", "tools": [{"type": "function", "name": "f", "strict": True,
                               "parameters": {"type": "object", "properties": {}}}]}, 400,
     "additionalProperties"),
    ({"model": "m", "tools": [{"type": "function", "name": "bad name", "parameters": {}}]},
     400, "does not match pattern"),
])
def test_invalid_requests_are_refused(http: Any, body: Any, status: int, message: str) -> None:
    client, _ = http
    _error(client.post("/responses", json=body), status, message)


def test_store_false_is_not_kept_and_script_errors_fail_the_response(http: Any) -> None:
    client, _ = http
    unstored = client.post("/responses", json={"model": "m", "input": "x", "store": False})
    assert client.get(f"/responses/{unstored.json()['id']}").status_code == 404
    failed = client.post("/responses", json={"model": "m", "input": "x"}).json()
    assert failed["status"] == "failed" and "emulator script error" in failed["error"][
        "message"]  # the script calls tools this request does not declare


def test_each_url_form_wants_its_credential() -> None:
    with emulator(D) as emu, httpx.Client(base_url=emu.base_url) as client:
        body = {"model": "m", "input": "x"}
        _error(client.post("/v1/responses", json=body), 401, "didn't provide an API key")
        assert client.post("/openai/v1/responses", json=body,
                           headers={"api-key": "k"}).status_code == 200
        assert client.post("/openai/responses", json=body, headers={"api-key": "k"}
                           ).status_code == 404  # the dated form needs api-version
        foundry = client.post("/api/projects/p/openai/v1/responses", json=body,
                              headers={"api-key": "k"})
        assert foundry.status_code == 401  # Foundry takes Entra tokens only
        legacy = client.post("/api/projects/p/openai/v1/responses", headers={
            "Authorization": "Bearer t"}, json={"input": "x", "agent": {"name": "a"}})
        _error(legacy, 400, "'agent' property is deprecated")
        unknown = client.post("/api/projects/p/openai/v1/responses", headers={
            "Authorization": "Bearer t"}, json={"input": "x", "agent_reference": {
                "type": "agent_reference", "name": "nobody"}})
        _error(unknown, 404, "Agent 'nobody'")


def test_agent_versions_and_their_tools_win(toolbox: toolbridge.Toolbox) -> None:
    with emulator(D, script=PARALLEL) as emu, httpx.Client(
            base_url=emu.base_url + "/api/projects/p", params={"api-version": "v1"},
            headers={"Authorization": "Bearer t"}) as client:
        definition = payload("azure-foundry.agent-version.create.request")
        definition["definition"]["tools"] = _tools(toolbox)
        created = client.post("/agents/weather-agent/versions", json=definition).json()
        assert created["object"] == "agent.version" and created["id"] == "weather-agent:1"
        assert client.get("/agents/weather-agent/versions/1").json()["version"] == "1"
        response = client.post("/openai/v1/responses", json={
            "input": "x", "tools": [], "agent_reference": {"type": "agent_reference",
                                                           "name": "weather-agent"}}).json()
        assert [i["name"] for i in response["output"]] == ["get_weather", "get_time"]
        assert response["model"] == "gpt-4.1-mini"
        missing = client.post("/agents/x/versions", json={"definition": {"kind": "prompt"}})
        assert missing.status_code == 400 and "code" in missing.json()["error"]
