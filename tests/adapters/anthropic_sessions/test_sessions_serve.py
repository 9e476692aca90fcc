"""The sessions backend through the one serve driver, against the emulator (real HTTP on
loopback): streamed steps, recovery after stream drops and failed requests (what was answered
is read back from the session's events), tool confirmations through the approvals machinery,
and the blocking client. Counted from the emulator's journal."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge.http import RetryPolicy, Secret
from toolbridge.serve import DriverSettings, aconverse
from toolbridge.serve import aanswer_pending as aserve
from toolbridge.testing import emulated_options, emulator
from toolbridge_anthropic_sessions.client import SessionsClient

DIALECT = "anthropic-sessions"
FAST = RetryPolicy(backoff=0.001, max_delay=0.01)
SETTINGS = DriverSettings(recovery=RetryPolicy(max_attempts=6, backoff=0.005, max_delay=0.05))
TWO_ROUNDS = {"turns": [{"rounds": [
    [{"name": "lookup", "arguments": {"key": "a"}}, {"name": "lookup", "arguments": {"key": "b"}}],
    [{"name": "lookup", "arguments": {"key": "c"}}]], "reply": "got {outputs}"},
    {"rounds": [[{"name": "lookup", "arguments": {"key": "d"}}]], "reply": "then {outputs}"}]}
DELETE = {"name": "delete_user", "arguments": {"id": 7},
          "approval": {"server": "crm", "message": "Delete user 7?", "output": "user 7 deleted"}}


def toolbox(runs: list[str], store: str = "memory://") -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(store=store)

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        runs.append(key)
        return f"value of {key}"

    return box


def options(base_url: str) -> Any:
    return emulated_options(DIALECT, base_url).model_copy(update={"retry": FAST})


@pytest.mark.parametrize("faults", [
    {}, {"drop_stream_after": 3}, {"duplicate_events": 2},
    {"fail_requests": [{"nth": 6, "status": 503}, {"nth": 9, "status": 500,
                                                   "after_processing": True}]},
], ids=["plain", "drops", "duplicates", "failures"])
async def test_two_turns_complete_and_every_call_runs_once(faults: dict[str, Any]) -> None:
    runs: list[str] = []
    with emulator(DIALECT, script=TWO_ROUNDS, faults=faults) as emu:
        transcript = await asyncio.wait_for(aconverse(
            toolbox(runs), DIALECT, ["first", "second"], options(emu.base_url),
            settings=SETTINGS), 60)
        assert transcript.status == "completed", transcript.render()
        assert transcript.reply == 'then ["value of d"]'
        assert sorted(runs) == ["a", "b", "c", "d"]
        assert sorted(emu.state.results_received()) == sorted(set(
            emu.state.results_received()))  # each result taken once
        assert len(emu.state.results_received()) == 4
        assert list(emu.state.messages_received().values()) == [["first", "second"]]
        assert not transcript.of_kind("note"), transcript.render()  # no call seen twice


async def test_without_an_event_stream_the_turns_are_polled() -> None:
    """Every attempt to open the stream fails (past the client's retries): the backend reads
    the events list until each step shows, and the conversation completes."""
    runs: list[str] = []
    refused = [{"nth": n, "matching": "/events/stream", "status": 503} for n in range(1, 41)]
    with emulator(DIALECT, script=TWO_ROUNDS, faults={"fail_requests": refused}) as emu:
        opts = options(emu.base_url).model_copy(update={"poll_every": 0.01})
        transcript = await asyncio.wait_for(aconverse(
            toolbox(runs), DIALECT, ["first", "second"], opts, settings=SETTINGS), 60)
        assert transcript.status == "completed", transcript.render()
        assert sorted(runs) == ["a", "b", "c", "d"]
        assert not [e for e in emu.journal.entries() if "/events/stream" in e.path
                    and e.status == 200]  # never streamed
        listed = [e for e in emu.journal.entries("GET") if e.path.endswith("/events")]
        assert len(listed) > 4  # polled
        assert len(emu.state.results_received()) == 4


async def test_a_successor_serves_the_session_from_its_events(tmp_path: Path) -> None:
    """A session served after its first worker stopped: the calls still waiting are read back
    from the session's events and answered; what was answered is not asked again."""
    runs: list[str] = []
    script = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}]],
                         "reply": "got {outputs}"}]}
    with emulator(DIALECT, script=script) as emu:
        client = SessionsClient(base_url=emu.base_url, api_key=Secret("k"))
        agent = client.create_agent("a", "claude-sonnet-4-6", toolbox(runs))
        environment = client.create_environment("e")
        session = client.create_session(agent["id"], environment["id"])
        client.send_message(session["id"], "go")
        transcript = await aserve(toolbox(runs), DIALECT, options(emu.base_url),
                                  conversation=session["id"], settings=SETTINGS)
        assert transcript.status == "completed", transcript.render()
        assert runs == ["a"] and emu.state.results_received() == [
            e["id"] for e in client.all_events(session["id"])
            if e["type"] == "agent.custom_tool_use"]
        again = await aserve(toolbox(runs), DIALECT, options(emu.base_url),
                             conversation=session["id"], settings=SETTINGS)
        assert again.status == "completed" and runs == ["a"]
        client.close()


async def test_a_confirmation_is_an_approval_sent_once_as_user_tool_confirmation(
        tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    script = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": "b"}}, DELETE]],
                         "reply": "done {outputs}"}]}
    runs: list[str] = []
    with emulator(DIALECT, script=script) as emu:
        first = await aconverse(toolbox(runs, store), DIALECT, ["remove user 7"],
                                options(emu.base_url))
        assert first.status == "awaiting_approval", first.render()
        assert runs == ["b"]
        [request] = toolbox(runs, store).approvals.pending()
        assert (request.origin, request.tool, dict(request.arguments)) == (
            "backend", "delete_user", {"id": 7})
        toolbox(runs, store).approvals.deny(request, "admins only")
        again = await aserve(toolbox(runs, store), DIALECT, options(emu.base_url),
                             conversation=first.conversation)
        assert again.status == "completed", again.render()
        assert "denied: admins only" in str(again.reply)
        sent = [e for entry in emu.journal.entries("POST")
                for e in (entry.body or {}).get("events", [])
                if e.get("type") == "user.tool_confirmation"]
        assert sent == [{"type": "user.tool_confirmation", "tool_use_id": request.key.call_id,
                         "result": "deny", "deny_message": "admins only"}]
        await aserve(toolbox(runs, store), DIALECT, options(emu.base_url),
                     conversation=first.conversation)
        assert runs == ["b"] and json.dumps(emu.journal.entries("POST")[-1].body).count(
            "tool_confirmation") <= 1


def test_the_blocking_client_plays_a_turn() -> None:
    runs: list[str] = []
    box = toolbox(runs)
    script = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": "z"}}]],
                         "reply": "got {outputs}"}]}
    with emulator(DIALECT, script=script) as emu, SessionsClient(
            base_url=emu.base_url + "/v1", api_key="sk-ant-sekrit", retry=FAST) as client:
        agent = client.create_agent("a", "claude-sonnet-4-6", box)
        session = client.create_session(agent["id"], client.create_environment("e")["id"])
        stream = client.stream_events(session["id"])
        client.send_message(session["id"], "hi")
        for event in stream:
            if event["type"] == "session.status_idle":
                if event["stop_reason"]["type"] != "requires_action":
                    break
                page = client.list_events(session["id"], limit=1000)
                client.submit_results(session["id"], box.handle(
                    DIALECT, {**page, "session_id": session["id"]}))
        stream.close()
        events = client.all_events(session["id"])
        assert events[-2]["content"][0]["text"] == 'got ["value of z"]'
        assert runs == ["z"] and "sekrit" not in repr(client)
