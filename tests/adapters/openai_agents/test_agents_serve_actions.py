"""Serve loops: actions left to the caller, resubmission after a resync, turn-end evidence."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from agents_support import FAST, RACE, SCRIPT, weather_toolbox

import toolbridge
from toolbridge.testing import emulator
from toolbridge_openai_agents import (
    AgentsOptions,
    AsyncAgentsClient,
    arun_conversation,
    aserve_session,
)
from toolbridge_openai_agents._emulator_session import EmuSession
from toolbridge_openai_agents.backend import AgentsBackend

DIALECT = "openai-agents"


def mcp_action(turn_id: str | None) -> dict[str, Any]:
    return {"type": "mcp_approval_request", "request_id": "mcpr_1", "turn_id": turn_id,
            "request": {"arguments": {"q": "x"}, "message": "Allow search?", "name": "search",
                        "server_label": "docs"}}


def aclient(emu: Any) -> AsyncAgentsClient:
    return AsyncAgentsClient(base_url=emu.base_url + "/v1", retry=FAST, race_delays=RACE)


async def test_serve_session_awaits_when_only_an_mcp_approval_is_pending(
        toolbox: toolbridge.Toolbox) -> None:
    with emulator(DIALECT, script=SCRIPT) as emu:
        async with aclient(emu) as client:
            session = await client.create_session(toolbox, input="hi")
            state = emu.state.sessions[session["id"]]
            state.required_actions = [mcp_action(state.turn_id)]
            final = await asyncio.wait_for(aserve_session(toolbox, session["id"], client=client),
                                           5)
    assert final.status == "awaiting_approval" and "search (mcpr_1)" in str(final.error)
    [request] = final.entries[-1].data
    assert (request["call_id"], request["origin"], request["arguments"]) == (
        "mcpr_1", "backend", {"q": "x"})


async def test_serve_session_returns_when_another_action_is_pending(
        toolbox: toolbridge.Toolbox) -> None:
    with emulator(DIALECT, script=SCRIPT) as emu:
        async with aclient(emu) as client:
            session = await client.create_session(toolbox, input="hi")
            state = emu.state.sessions[session["id"]]
            state.required_actions = [{"type": "environment_connection", "turn_id":
                                       state.turn_id}, mcp_action(state.turn_id)]
            final = await asyncio.wait_for(aserve_session(toolbox, session["id"], client=client),
                                           5)
    assert final.status == "incomplete" and "environment_connection" in str(final.error)
    assert [a["type"] for a in final.entries[-1].data] == ["environment_connection",
                                                           "mcp_approval_request"]


async def test_conversation_awaits_with_a_note_on_an_mcp_approval(
        toolbox: toolbridge.Toolbox, monkeypatch: pytest.MonkeyPatch) -> None:
    played = EmuSession.advance

    def advance(self: EmuSession) -> None:
        """The second round asks for an MCP approval instead of function calls."""
        if not any(i["type"] == "function_call_output" for i in self.items):
            played(self)
            return
        self.required_actions.append(mcp_action(self.turn_id))
        self._session_event("requires_action")

    monkeypatch.setattr(EmuSession, "advance", advance)
    with emulator(DIALECT, script=SCRIPT) as emu:
        async with aclient(emu) as client:
            transcript = await asyncio.wait_for(
                arun_conversation(toolbox, ["weather?", "Oslo?"], client=client), 5)
    kinds = [e.kind for e in transcript.entries]
    assert kinds == ["tools", "user", "call", "result", "note"]  # "Oslo?" was not sent
    assert transcript.status == "awaiting_approval"
    note = transcript.entries[-1]
    assert "search (mcpr_1)" in note.text
    assert [(r["call_id"], r["tool"], r["origin"]) for r in note.data] == [
        ("mcpr_1", "search", "backend")]


async def test_a_lost_submission_is_resubmitted_after_a_resync() -> None:
    """The service answers 202 but loses the first result; after the stream drops, the
    snapshot still lists the call, so it goes again, answered from the store."""
    runs: dict[str, int] = {}
    toolbox = weather_toolbox(runs)
    script = {"turns": [{"rounds": [[{"name": "get_weather", "arguments": {"location": "Rome"}}]],
                         "reply": "{outputs}"}]}
    accept = EmuSession.accept_result
    lost: list[str] = []

    def lose_first(self: EmuSession, event: Any) -> None:
        if lost:
            accept(self, event)
            return
        lost.append(event["call_id"])  # swallowed; a later event cuts the stream
        asyncio.get_running_loop().call_later(0.05, lambda: self.emit("test.nudge"))

    with emulator(DIALECT, script=script, faults={"drop_stream_after": 1}) as emu:
        async with aclient(emu) as client:
            session = await client.create_session(toolbox, input="Rome?")
            state = emu.state.sessions[session["id"]]
            state.accept_result = lose_first.__get__(state)
            final = await asyncio.wait_for(aserve_session(toolbox, session["id"], client=client),
                                           5)
        posts = emu.journal.entries("POST", "/events")
    assert final.status == "completed" and runs == {"get_weather": 1}
    assert [p.body["events"][0]["call_id"] for p in posts] == lost * 2
    assert state.items[-1]["content"][0]["text"] == '["sunny in Rome"]'


async def test_an_idle_resync_ends_the_turn_only_once_it_started(
        toolbox: toolbridge.Toolbox) -> None:
    def resync(last_active_at: int) -> dict[str, Any]:
        return {"type": "agent.session.idle", "event_id": "resync-1", "session": {
            "id": "sess_1", "status": "idle", "required_actions": [],
            "last_active_at": last_active_at}}

    def backend() -> AgentsBackend:
        connection: Any = type("C", (), {"client": None, "options": AgentsOptions(),
                                         "dialect": toolbridge.get_dialect(DIALECT)})()
        made = AgentsBackend(connection, "sess_1")
        made._last_active_at = 100
        return made

    waiting = backend()
    assert waiting._see(resync(100)) is None  # the message may not have started the turn
    ended = waiting._see(resync(101))  # activity since the message was sent
    assert ended is not None and ended.status == "completed"
    seen = backend()
    seen._see({"type": "agent.session.turn.created", "event_id": "e1", "turn_id": "turn_1",
               "turn": {"subagent_id": None}})
    done = seen._see(resync(100))
    assert done is not None and done.status == "completed"


async def test_real_service_without_a_key_is_a_usage_error_before_any_request(
        toolbox: toolbridge.Toolbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    async def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a request was sent")

    monkeypatch.setattr(httpx.AsyncClient, "send", no_network)
    with pytest.raises(toolbridge.UsageError, match="OPENAI_API_KEY"):
        await arun_conversation(toolbox, ["hi"], base_url=None)
    with pytest.raises(toolbridge.UsageError, match="OPENAI_API_KEY"):
        await aserve_session(toolbox, "sess_1")


async def test_a_computer_use_request_is_denied_once_when_served_again(tmp_path: Any) -> None:
    """A browser authentication request (it can only be denied) waits in the store; denied
    elsewhere, serving again sends one ``cancel`` the SDK's input type accepts."""
    from openai.types.beta.agent_session_input_param import (
        SessionInputParamAgentSessionInputComputerUseApprovalRequestResult as Result,
    )
    from openai_sdk_types import check_param

    store = f"sqlite:///{tmp_path / 'store.db'}"
    box = weather_toolbox({}, store=store)
    action = {"type": "computer_use_approval_request", "request_id": "cua_1", "request": {
        "type": "browser_authentication", "fields": [], "options": []}}
    with emulator(DIALECT, script=SCRIPT) as emu:
        async with aclient(emu) as client:
            session = await client.create_session(box, input="hi")
            state = emu.state.sessions[session["id"]]
            state.required_actions = [{**action, "turn_id": state.turn_id}]
            state.waiting = {"cua_1"}  # what the session waits for now
            first = await asyncio.wait_for(aserve_session(box, session["id"], client=client), 5)
            assert first.status == "awaiting_approval", first.render()
            [request] = weather_toolbox({}, store=store).approvals.pending()
            assert (request.tool, request.origin) == ("browser_authentication", "backend")
            weather_toolbox({}, store=store).approvals.deny(request, "no credentials here")
            for _ in range(2):  # served twice: answered once
                await asyncio.wait_for(aserve_session(box, session["id"], client=client), 5)
        sent = [e for entry in emu.journal.entries("POST", "/events")
                for e in (entry.body or {}).get("events", [])
                if e.get("type", "").endswith("computer_use_approval_request_result")]
    assert sent == [{"type": "agent.session.input.computer_use_approval_request_result",
                     "request_id": "cua_1",
                     "response": {"type": "browser_authentication", "action": "cancel"}}]
    assert check_param(sent[0], Result) == []
