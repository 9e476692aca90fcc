"""The official openai SDK against the emulator: the flow works, the rules are enforced."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import openai
import pytest
from agents_support import SCRIPT
from openai import OpenAI
from openai.types.beta.agent_session import AgentSession
from openai.types.beta.agent_session_event import AgentSessionEvent
from openai.types.beta.agent_session_item import AgentSessionItem
from openai_sdk_types import check_model

import toolbridge
from toolbridge.testing import emulator

DIALECT = "openai-agents"


@pytest.fixture
def emu() -> Iterator[Any]:
    with emulator(DIALECT, script=SCRIPT) as running:
        yield running


def sdk(emu: Any) -> OpenAI:
    return OpenAI(base_url=emu.base_url + "/v1", api_key="test", max_retries=0)


def first_turn(client: OpenAI, toolbox: toolbridge.Toolbox) -> tuple[str, list[Any]]:
    """Create a session with stream: true and answer every call; returns id and events."""
    stream = client.beta.agents.sessions.create(
        environment={"type": "none"}, input="Customer 123: weather in Paris and Lima?",
        agent={"model": "gpt-5", "tools": toolbox.definitions(DIALECT)}, stream=True)
    events = []
    for event in stream:
        events.append(event)
        if event.type == "agent.session.requires_action":
            body = toolbox.handle(DIALECT, event)
            for result in body["events"]:
                submit(client, event.session.id, result)
    return events[0].session.id, events


def submit(client: OpenAI, session_id: str, result: dict[str, Any]) -> None:
    """``events.create``, retrying the registration race once as the SDK's helper does."""
    try:
        client.beta.agents.sessions.events.create(session_id, events=[result])
    except openai.BadRequestError as exc:
        if "Unknown pending tool call" not in str(exc):
            raise
        client.beta.agents.sessions.events.create(session_id, events=[result])


def test_sdk_session_completes_with_outputs_quoted(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    client = sdk(emu)
    session_id, events = first_turn(client, toolbox)
    kinds = [e.type for e in events]
    assert kinds[0] == "agent.session.created" and kinds[-1] == "agent.session.idle"
    assert kinds.count("agent.session.requires_action") == 2
    done = [e for e in events if e.type == "agent.session.turn.item.done"]
    reply = done[-1].item.content[0].text
    outputs = json.loads(reply.removeprefix("Here is what I found: "))
    assert json.loads(outputs[0]) == {"id": "123", "plan": "pro"}
    assert sorted(outputs[1:]) == ["sunny in Lima", "sunny in Paris"]
    for event in events:  # every event the emulator sent fits the SDK's union strictly
        assert check_model(event.to_dict(), AgentSessionEvent) == []
    session = client.beta.agents.sessions.retrieve(session_id)
    assert session.status == "idle" and session.required_actions == []
    assert check_model(session.to_dict(), AgentSession) == []


def test_sdk_stream_helper_dispatches_tools_through_the_race(toolbox: toolbridge.Toolbox) -> None:
    with emulator(DIALECT, script=SCRIPT, faults={"registration_race": True}) as emu:
        client = sdk(emu)
        session_id, _ = first_turn(client, toolbox)  # the script's first turn
        calls: list[dict[str, Any]] = []

        def get_weather(arguments: dict[str, Any]) -> str:
            calls.append(arguments)
            return f"cold in {arguments['location']}"

        with client.beta.agents.sessions.stream(
            session_id, input="And Oslo?", tool_handlers={"get_weather": get_weather}
        ) as stream:
            result = stream.get_final_result()
        assert calls == [{"location": "Oslo"}]
        assert result.output_text == 'Oslo: ["cold in Oslo"]'
        posts = emu.journal.entries("POST", "/events")
        raced = [p for p in posts if p.status == 400]
        assert raced and raced[0].response["error"]["message"].startswith(
            "Unknown pending tool call: call_")
        assert raced[-1].headers["idempotency-key"] == posts[-1].headers["idempotency-key"]


def test_items_history(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    client = sdk(emu)
    session_id, _ = first_turn(client, toolbox)
    items = list(client.beta.agents.sessions.items.list(session_id, limit=2, order="asc"))
    kinds = [i.type for i in items]
    assert kinds[:2] == ["message", "function_call"] and kinds[-1] == "message"
    assert kinds.count("function_call_output") == 3
    for item in items:
        assert check_model(item.to_dict(), AgentSessionItem) == []


def _error(exc: openai.APIStatusError) -> dict[str, Any]:
    body = exc.response.json()
    assert set(body["error"]) == {"message", "type", "param", "code"}
    return dict(body["error"])


def test_unknown_call_id_is_the_real_400(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    client = sdk(emu)
    session_id, _ = first_turn(client, toolbox)
    result = {"type": "agent.session.input.tool_result", "turn_id": "turn_x", "call_id": "call_x",
              "success": True, "output": "late"}
    with pytest.raises(openai.BadRequestError) as info:
        client.beta.agents.sessions.events.create(session_id, events=[result])
    assert info.value.body == {"message": "Unknown pending tool call: call_x",
                               "type": "invalid_request_error", "param": "events[0].call_id",
                               "code": "invalid_request_error"}


def _pending(client: OpenAI, toolbox: toolbridge.Toolbox) -> Any:
    return client.beta.agents.sessions.create(
        environment={"type": "none"}, input="hi",
        agent={"tools": toolbox.definitions(DIALECT)})


def test_result_over_4_mib_is_refused(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    client = sdk(emu)
    session = _pending(client, toolbox)
    action = session.required_actions[0]
    big = {"type": "agent.session.input.tool_result", "turn_id": action.turn_id,
           "call_id": action.call_id, "success": True, "output": "x" * 4_194_305}
    with pytest.raises(openai.BadRequestError) as info:
        client.beta.agents.sessions.events.create(session.id, events=[big])
    assert _error(info.value)["param"] == "events[0].output"
    assert client.beta.agents.sessions.retrieve(session.id).status == "requires_action"


@pytest.mark.parametrize("field", ["turn_id", "call_id", "success"])
def test_missing_result_fields_are_refused(emu: Any, toolbox: toolbridge.Toolbox,
                                           field: str) -> None:
    client = sdk(emu)
    session = _pending(client, toolbox)
    action = session.required_actions[0]
    event = {"type": "agent.session.input.tool_result", "turn_id": action.turn_id,
             "call_id": action.call_id, "success": True, "output": "ok"}
    del event[field]
    with pytest.raises(openai.BadRequestError) as info:
        client.beta.agents.sessions.events.create(session.id, events=[event])  # type: ignore
    error = _error(info.value)
    assert error["code"] == "missing_required_parameter"
    assert error["param"] == f"events[0].{field}"


@pytest.mark.parametrize(("tools", "param"), [
    ([{"type": "function", "name": "f", "parameters": {"type": "object"}}],
     "agent.tools[0].description"),
    ([{"type": "function", "name": "f", "description": "", "parameters": {"type": "object"},
       "strict": True}], "agent.tools[0].strict"),
    ([{"type": "function", "name": "f", "description": "", "parameters": {"type": "object"},
       "defer_loading": True}], "agent.tools"),
])
def test_bad_tool_lists_are_refused(emu: Any, tools: list[dict[str, Any]], param: str) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        sdk(emu).beta.agents.sessions.create(environment={"type": "none"}, input="hi",
                                             agent={"tools": tools})  # type: ignore
    assert _error(info.value)["param"] == param


def test_input_is_required_without_an_environment(emu: Any) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        sdk(emu).beta.agents.sessions.create(environment={"type": "none"}, agent={"tools": []})
    assert _error(info.value)["param"] == "input"


def test_unknown_session_is_404(emu: Any) -> None:
    with pytest.raises(openai.NotFoundError):
        sdk(emu).beta.agents.sessions.retrieve("sess_missing")


def test_script_error_fails_the_session(emu: Any) -> None:
    client = sdk(emu)
    tools = [{"type": "function", "name": "get_customer", "description": "d",
              "parameters": {"type": "object"}}]  # the script's get_weather is undeclared
    session = client.beta.agents.sessions.create(environment={"type": "none"}, input="hi",
                                                 agent={"tools": tools})
    action = session.required_actions[0]
    client.beta.agents.sessions.events.create(session.id, events=[{
        "type": "agent.session.input.tool_result", "turn_id": action.turn_id,
        "call_id": action.call_id, "success": True, "output": "{}"}])
    failed = client.beta.agents.sessions.retrieve(session.id)
    assert failed.status == "failed" and "get_weather" in (failed.error or "")


def test_injected_429_uses_the_openai_error_shape() -> None:
    faults = {"fail_requests": [{"nth": 1, "status": 429, "retry_after": 0}]}
    with emulator(DIALECT, faults=faults) as emu, pytest.raises(openai.RateLimitError) as info:
        sdk(emu).beta.agents.sessions.retrieve("sess_any")
    assert _error(info.value)["code"] == "rate_limit_exceeded"


def _result(action: dict[str, Any]) -> dict[str, Any]:
    return {"type": "agent.session.input.tool_result", "call_id": action["call_id"],
            "turn_id": action["turn_id"], "success": True, "output": "ok"}


def test_idempotency_key_replays_once_and_a_new_key_is_unknown(
        emu: Any, toolbox: toolbridge.Toolbox) -> None:
    with httpx.Client(base_url=emu.base_url + "/v1") as http:
        created = http.post("/agents/sessions", json={
            "environment": {"type": "none"}, "input": "hi",
            "agent": {"tools": toolbox.definitions(DIALECT)}}).json()
        url = f"/agents/sessions/{created['id']}/events"
        body = {"events": [_result(created["required_actions"][0])]}

        def post(key: str) -> httpx.Response:
            return http.post(url, json=body, headers={"Idempotency-Key": key})

        def outputs() -> int:
            return sum(i["type"] == "function_call_output"
                       for i in emu.state.sessions[created["id"]].items)

        assert post("K").status_code == 202 and outputs() == 1
        assert post("K").status_code == 202 and outputs() == 1  # replayed, not re-applied
        again = post("K2")
    assert again.status_code == 400 and outputs() == 1
    assert again.json()["error"]["message"] == \
        "Unknown pending tool call: " + body["events"][0]["call_id"]


def test_two_results_for_one_call_in_one_request(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    with httpx.Client(base_url=emu.base_url + "/v1") as http:
        created = http.post("/agents/sessions", json={
            "environment": {"type": "none"}, "input": "hi",
            "agent": {"tools": toolbox.definitions(DIALECT)}}).json()
        result = _result(created["required_actions"][0])
        answer = http.post(f"/agents/sessions/{created['id']}/events",
                           json={"events": [result, {**result, "output": "again"}]})
    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == "events[1].call_id"
    assert "Unknown pending tool call" in answer.json()["error"]["message"]
    state = emu.state.sessions[created["id"]]
    assert not any(i["type"] == "function_call_output" for i in state.items)
    assert state.required_actions[0]["call_id"] == result["call_id"]  # still pending


@contextmanager
def _session_with(emu_script: dict[str, Any], toolbox: toolbridge.Toolbox
                  ) -> Iterator[tuple[Any, httpx.Client, dict[str, Any]]]:
    with emulator(DIALECT, script=emu_script) as running, \
            httpx.Client(base_url=running.base_url + "/v1") as http:
        created = http.post("/agents/sessions", json={
            "environment": {"type": "none"}, "input": "hi",
            "agent": {"tools": toolbox.definitions(DIALECT)}}).json()
        yield running, http, created


def test_a_hallucinated_id_is_listed_but_its_result_is_refused(
        toolbox: toolbridge.Toolbox) -> None:
    script = {"turns": [{"rounds": [
        [{"name": "get_customer", "arguments": {"customer_id": "1"}}],
        [{"name": "get_weather", "arguments": {"location": "Rome"},
          "misbehave": "hallucinated_id"},
         {"name": "get_weather", "arguments": {"location": "Lima"}}],
    ], "reply": "{outputs}"}]}
    with _session_with(script, toolbox) as (running, http, created):
        first = created["required_actions"][0]
        url = f"/agents/sessions/{created['id']}/events"
        assert http.post(url, json={"events": [_result(first)]}).status_code == 202
        session = http.get(f"/agents/sessions/{created['id']}").json()
        reused, issued = session["required_actions"]
        assert reused["call_id"] == first["call_id"] and reused["arguments"] == {
            "location": "Rome"}
        refused = http.post(url, json={"events": [_result(reused)]})
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == \
            "Unknown pending tool call: " + first["call_id"]
        assert http.post(url, json={"events": [_result(issued)]}).status_code == 202
        done = http.get(f"/agents/sessions/{created['id']}").json()
        assert done["status"] == "idle" and done["required_actions"] == []
        items = [i for i in running.state.sessions[created["id"]].items
                 if i["type"] == "function_call"]
        assert [i["status"] for i in items] == ["completed", "incomplete", "completed"]


def test_a_round_of_only_a_hallucinated_id_waits_for_nothing(
        toolbox: toolbridge.Toolbox) -> None:
    script = {"turns": [{"rounds": [
        [{"name": "get_customer", "arguments": {"customer_id": "1"}}],
        [{"name": "get_weather", "arguments": {"location": "Rome"},
          "misbehave": "hallucinated_id"}],
    ], "reply": "{outputs}"}]}
    with _session_with(script, toolbox) as (running, http, created):
        first = created["required_actions"][0]
        http.post(f"/agents/sessions/{created['id']}/events", json={"events": [_result(first)]})
        session = running.state.sessions[created["id"]]
        assert session.status == "idle" and session.required_actions == []
        assert session.items[-1]["content"][0]["text"] == '["ok"]'


def test_broken_json_is_a_string_where_the_arguments_object_belongs(
        toolbox: toolbridge.Toolbox) -> None:
    script = {"turns": [{"rounds": [[{"name": "get_weather", "raw_arguments": '{"location": ',
                                      "misbehave": "broken_json"}]]}]}
    with _session_with(script, toolbox) as (_, _, created):
        assert created["required_actions"][0]["arguments"] == '{"location": '
        body = toolbox.handle(DIALECT, created)
    assert body["events"][0]["success"] is False
    assert "not valid JSON" in body["events"][0]["error"]
