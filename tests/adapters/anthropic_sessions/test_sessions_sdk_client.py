"""The official anthropic client, unmodified, against the sessions emulator (real HTTP on
loopback): agents, environments, sessions, events list / stream / send; toolbridge answers the
calls it reads from the SDK's own objects. Counted from the emulator's journal."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

import toolbridge
from toolbridge.testing import emulator

DIALECT = "anthropic-sessions"
SCRIPT = {"turns": [{"rounds": [[{"name": "get_weather", "arguments": {"city": "Paris"}},
                                 {"name": "get_weather", "arguments": {"city": "Lima"}}]],
                     "reply": "found {outputs}"}]}


def toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"sunny in {city}"

    return box


def setup(client: anthropic.Anthropic, box: toolbridge.Toolbox) -> Any:
    agent = client.beta.agents.create(name="weather", model="claude-sonnet-4-6",
                                      tools=box.definitions(DIALECT))
    environment = client.beta.environments.create(name="env")
    return client.beta.sessions.create(agent=agent.id, environment_id=environment.id)


def test_the_sdk_streams_a_session_and_toolbridge_answers_its_calls() -> None:
    box = toolbox()
    with emulator(DIALECT, script=SCRIPT) as emu:
        client = anthropic.Anthropic(base_url=emu.base_url, api_key="sk-ant-test")
        session = setup(client, box)
        reply = ""
        with client.beta.sessions.events.stream(session.id) as stream:
            client.beta.sessions.events.send(session.id, events=[
                {"type": "user.message", "content": [{"type": "text", "text": "weather?"}]}])
            for event in stream:
                if event.type == "session.status_idle":
                    if event.stop_reason.type != "requires_action":
                        break
                    assert len(event.stop_reason.event_ids) == 2
                    page = client.beta.sessions.events.list(session.id, limit=100)
                    body = box.handle(DIALECT, page, conversation=session.id)
                    client.beta.sessions.events.send(session.id, events=body["events"])
                elif event.type == "agent.message":
                    reply = event.content[0].text
        assert reply == 'found ["sunny in Paris", "sunny in Lima"]'
        assert len(emu.state.results_received()) == 2
        assert emu.state.messages_received() == {session.id: ["weather?"]}
        assert client.beta.sessions.retrieve(session.id).status == "idle"


def test_the_emulator_is_strict_like_the_service() -> None:
    box = toolbox()
    with emulator(DIALECT, script=SCRIPT) as emu:
        client = anthropic.Anthropic(base_url=emu.base_url, api_key="sk-ant-test")
        session = setup(client, box)
        with pytest.raises(anthropic.BadRequestError, match="waits"):  # nothing is pending
            client.beta.sessions.events.send(session.id, events=[
                {"type": "user.custom_tool_result", "custom_tool_use_id": "sevt_nope",
                 "content": []}])
        client.beta.sessions.events.send(session.id, events=[
            {"type": "user.message", "content": [{"type": "text", "text": "weather?"}]}])
        with pytest.raises(anthropic.BadRequestError, match="waiting on events"):
            client.beta.sessions.events.send(session.id, events=[
                {"type": "user.message", "content": [{"type": "text", "text": "again"}]}])
        page = client.beta.sessions.events.list(session.id)
        body = box.handle(DIALECT, page, conversation=session.id)
        twice = body["events"] + body["events"][:1]
        with pytest.raises(anthropic.BadRequestError, match="answered twice"):
            client.beta.sessions.events.send(session.id, events=twice)
        assert emu.state.results_received() == []  # refused whole
        with pytest.raises(anthropic.BadRequestError, match="input_schema"):
            client.beta.agents.create(name="bad", model="claude-sonnet-4-6", tools=[
                {"type": "custom", "name": "x", "description": "d",
                 "input_schema": {"type": "string"}}])
        keyless = anthropic.Anthropic(base_url=emu.base_url, api_key="sk-ant-test",
                                      default_headers={"Authorization": anthropic.Omit()})
        with pytest.raises(anthropic.AuthenticationError):
            keyless.beta.sessions.retrieve(session.id)
