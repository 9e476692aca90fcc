from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from ces_support import ADD_SCRIPT, APP, SESSION, payload
from google.api_core import exceptions as gexc
from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import ces_v1

import toolbridge
from toolbridge.testing import emulator
from toolbridge_google_ces import GoogleCesDialect


def url(emu: Any, path: str) -> str:
    return f"{emu.base_url}/v1/{path}"


@pytest.fixture
def emu(toolbox: toolbridge.Toolbox) -> Iterator[Any]:
    with emulator("google-ces", script=ADD_SCRIPT) as running:
        for tool in toolbox.definitions("google-ces"):
            name = tool["clientFunction"]["name"]
            httpx.post(url(running, f"{APP}/tools"), params={"toolId": name}, json=tool)
        yield running


def run(emu: Any, body: Any) -> httpx.Response:
    return httpx.post(url(emu, f"{SESSION}:runSession"), json=body)


def test_official_sdk_runs_a_session_end_to_end(toolbox: toolbridge.Toolbox, emu: Any) -> None:
    options = ClientOptions(api_endpoint=emu.base_url)
    client = ces_v1.SessionServiceClient(credentials=AnonymousCredentials(), transport="rest",
                                         client_options=options)
    response = client.run_session(request={"config": {"session": SESSION},
                                           "inputs": [{"text": "add please"}]})
    rounds = 0
    bound = GoogleCesDialect(session=SESSION)
    while response.outputs and "tool_calls" in response.outputs[0]:
        body = toolbox.handle(bound, response)
        assert body["config"] == {"session": SESSION}
        request = ces_v1.RunSessionRequest.from_json(json.dumps(body),
                                                     ignore_unknown_fields=False)
        response = client.run_session(request=request)  # the body as handle returned it
        rounds += 1
    assert rounds == 2
    assert response.outputs[0].text == 'done: [5.0, 42.0, {"error": "cannot: no"}]'
    assert toolbox.seen == [(int, int), (int, int)]  # type: ignore[attr-defined]
    queries = {e.query for e in emu.journal.entries("POST", ":runSession")}
    assert queries == {"%24alt=json%3Benum-encoding%3Dint"}


def test_official_agent_client_manages_tools(emu: Any) -> None:
    options = ClientOptions(api_endpoint=emu.base_url)
    agents = ces_v1.AgentServiceClient(credentials=AnonymousCredentials(), transport="rest",
                                       client_options=options)
    tool = ces_v1.Tool.from_json(json.dumps(payload("tool.create.request")))
    created = agents.create_tool(parent=APP, tool=tool, tool_id="get-nearest-store")
    assert created.name == f"{APP}/tools/get-nearest-store"
    assert created.display_name == "get_nearest_store"
    assert created.execution_type == ces_v1.ExecutionType.SYNCHRONOUS
    created.client_function.description = "changed"
    updated = agents.update_tool(tool=created, update_mask={"paths": ["client_function"]})
    assert updated.client_function.description == "changed"
    names = [t.name for t in agents.list_tools(parent=APP)]
    assert created.name in names and len(names) == 4
    agents.delete_tool(name=created.name)
    with pytest.raises(gexc.NotFound):
        agents.get_tool(name=created.name)
    with pytest.raises(gexc.Conflict):
        agents.create_tool(parent=APP, tool=tool, tool_id="add")


def first_calls(emu: Any) -> list[dict[str, Any]]:
    answer = run(emu, {"inputs": [{"text": "go"}]}).json()
    calls: list[dict[str, Any]] = answer["outputs"][0]["toolCalls"]["toolCalls"]
    return calls


def respond(call: dict[str, Any], response: Any = None, **changes: Any) -> dict[str, Any]:
    entry = {"id": call["id"], "tool": call["tool"], "displayName": call["displayName"],
             "response": {"output": 1} if response is None else response, **changes}
    return {"config": {"session": SESSION},
            "inputs": [{"toolResponses": {"toolResponses": [entry]}}]}


def assert_google_error(answer: httpx.Response, code: int, status: str, text: str) -> None:
    assert answer.status_code == code, answer.text
    error = answer.json()["error"]
    assert error["code"] == code and error["status"] == status and text in error["message"]


def test_calls_carry_struct_numbers(emu: Any) -> None:
    (call,) = first_calls(emu)
    assert call["args"] == {"a": 2, "b": 3} and call["tool"] == f"{APP}/tools/add"
    assert call["displayName"] == "add" and call["id"].startswith("toolcall-")


def test_strict_unknown_id_wrong_tool_and_non_object(emu: Any) -> None:
    (call,) = first_calls(emu)
    assert_google_error(run(emu, respond(call, id="nope")), 400, "INVALID_ARGUMENT",
                        "unknown tool call id 'nope'")
    assert_google_error(run(emu, respond(call, tool=f"{APP}/tools/other")), 400,
                        "INVALID_ARGUMENT", "must echo the call's tool")
    assert_google_error(run(emu, respond(call, response="text")), 400, "INVALID_ARGUMENT",
                        "must be a JSON object")
    assert_google_error(run(emu, respond(call, response={"output": 1}, extra=1)), 400,
                        "INVALID_ARGUMENT", 'Unknown name "extra"')
    assert_google_error(run(emu, {"inputs": [{"text": "again"}]}), 400, "FAILED_PRECONDITION",
                        call["id"])
    assert run(emu, respond(call)).status_code == 200  # rejected requests changed nothing
    assert_google_error(run(emu, respond(call)), 400, "INVALID_ARGUMENT", "already answered")


def test_strict_session_and_body_shape(emu: Any) -> None:
    bad_session = url(emu, f"{APP}/sessions/x:runSession")
    assert_google_error(httpx.post(bad_session, json={"inputs": [{"text": "hi"}]}), 400,
                        "INVALID_ARGUMENT", "session id")
    assert_google_error(run(emu, {"inputs": []}), 400, "INVALID_ARGUMENT", "inputs")
    assert_google_error(run(emu, {"config": {"session": f"{APP}/sessions/other-1"},
                                  "inputs": [{"text": "x"}]}), 400, "INVALID_ARGUMENT",
                        "does not match")
    assert_google_error(run(emu, {"inputs": [{"text": "x", "dtmf": "1"}]}), 400,
                        "INVALID_ARGUMENT", "exactly one")


def test_tool_resources_are_strict(emu: Any) -> None:
    tools = url(emu, f"{APP}/tools")
    bad = {"clientFunction": {"name": "f", "parameters": {"type": "OBJECT",
                                                          "additionalProperties": False}}}
    assert_google_error(httpx.post(tools, json=bad), 400, "INVALID_ARGUMENT",
                        "additionalProperties")
    bad = {"clientFunction": {"name": "f", "parameters": {"type": "object"}}}
    assert_google_error(httpx.post(tools, json=bad), 400, "INVALID_ARGUMENT", "type")
    bad = {"clientFunction": {"name": "f", "parameters": {"type": "STRING", "format": "x"}}}
    assert_google_error(httpx.post(tools, json=bad), 400, "INVALID_ARGUMENT", '"format"')
    numeric = httpx.get(url(emu, f"{APP}/tools/add"), params={"$alt": "json;enum-encoding=int"})
    assert numeric.json()["clientFunction"]["parameters"]["type"] == 5
    assert_google_error(httpx.get(url(emu, f"{APP}/tools/none")), 404, "NOT_FOUND", "none")


def test_script_errors_are_reported(toolbox: toolbridge.Toolbox) -> None:
    script = {"turns": [{"rounds": [[{"name": "add", "arguments": {"a": "two"}}]]}]}
    with emulator("google-ces", script=script) as emu:
        httpx.post(url(emu, f"{APP}/tools"), params={"toolId": "add"},
                   json=toolbox.definitions("google-ces")[1])
        answer = run(emu, {"inputs": [{"text": "go"}]})
        assert_google_error(answer, 400, "FAILED_PRECONDITION", "emulator script error")
        assert emu.state.script_errors


def test_float_number_style_and_precision() -> None:
    tool = {"clientFunction": {"name": "f", "parameters": {
        "type": "OBJECT", "properties": {"n": {"type": "INTEGER"}}}}}
    script = {"turns": [{"rounds": [[{"name": "f", "arguments": {"n": 2 ** 53 + 1}}]]}]}
    with emulator("google-ces", script=script, number_style="float") as emu:
        httpx.post(url(emu, f"{APP}/tools"), params={"toolId": "f"}, json=tool)
        answer = run(emu, {"inputs": [{"text": "go"}]})
        assert '"n": 9007199254740992.0' in answer.text


MISBEHAVING = {"turns": [{"rounds": [
    [{"name": "add", "arguments": {"a": 1, "b": 2}}],
    [{"name": "add", "arguments": {"a": 3, "b": 4}, "misbehave": "hallucinated_id"},
     {"name": "subtract", "arguments": {"a": 1}, "misbehave": "unknown_tool"}],
], "reply": "{outputs}"}]}


def test_unknown_tool_and_hallucinated_id(toolbox: toolbridge.Toolbox) -> None:
    with emulator("google-ces", script=MISBEHAVING) as emu:
        for tool in toolbox.definitions("google-ces"):
            httpx.post(url(emu, f"{APP}/tools"), params={"toolId": tool["clientFunction"]["name"]},
                       json=tool)
        (first,) = first_calls(emu)
        answer = run(emu, respond(first)).json()
        reused, unknown = answer["outputs"][0]["toolCalls"]["toolCalls"]
        # The session lists what it waits on: the reused id is pending again, once.
        assert reused["id"] == first["id"] and reused["args"] == {"a": 3, "b": 4}
        assert unknown["tool"] == f"{APP}/tools/subtract" and unknown["displayName"] == "subtract"
        both = respond(reused)
        both["inputs"][0]["toolResponses"]["toolResponses"].append(
            respond(unknown)["inputs"][0]["toolResponses"]["toolResponses"][0])
        assert run(emu, both).json()["outputs"][0]["text"] == "[1, 1, 1]"
        assert_google_error(run(emu, respond(reused)), 400, "INVALID_ARGUMENT",
                            "already answered")
