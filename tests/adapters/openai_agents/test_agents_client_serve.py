"""Our client and serve loops against the emulator, under each fault."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from agents_support import FAST, RACE, SCRIPT, weather_toolbox
from openai_sdk_types import check_events_body, check_tools

import toolbridge
import toolbridge.http
import toolbridge.serve
from toolbridge.errors import ServeError
from toolbridge.serve import DriverSettings
from toolbridge.testing import emulator
from toolbridge_openai_agents import (
    AgentsClient,
    AsyncAgentsClient,
    PendingCallRaceError,
    arun_conversation,
    aserve_session,
    run_conversation,
    serve_session,
)

DIALECT = "openai-agents"
KEY = "sk-test-SECRET-0123456789"


def aclient(emu: Any, **options: Any) -> AsyncAgentsClient:
    return AsyncAgentsClient(base_url=emu.base_url + "/v1", api_key=KEY, retry=FAST,
                             race_delays=RACE, **options)


def check_reply(transcript: toolbridge.Transcript) -> None:
    replies = transcript.of_kind("reply")
    assert len(replies) == 2
    outputs = json.loads(replies[0].text.removeprefix("Here is what I found: "))
    assert json.loads(outputs[0]) == {"id": "123", "plan": "pro"}
    assert sorted(outputs[1:]) == ["sunny in Lima", "sunny in Paris"]
    assert replies[1].text == 'Oslo: ["sunny in Oslo"]'


FAULTS = {
    "none": {},
    "drop_stream_after": {"drop_stream_after": 3},
    "duplicate_events": {"duplicate_events": 2},
    "registration_race": {"registration_race": True},
    "latency_ms": {"latency_ms": 5},
    "fail_requests": {"fail_requests": [{"nth": n, "status": s, "retry_after": 0.01}
                                        for n, s in ((2, 503), (4, 429), (6, 500), (9, 502))]},
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_conversation_under_each_fault(fault: str) -> None:
    runs: dict[str, int] = {}
    toolbox = weather_toolbox(runs)
    with emulator(DIALECT, script=SCRIPT, faults=FAULTS[fault]) as emu:
        async with aclient(emu) as client:
            transcript = await arun_conversation(
                toolbox, ["Customer 123: weather in Paris and Lima?", "And Oslo?"], client=client)
        posts = emu.journal.entries("POST", "/events")
    check_reply(transcript)
    assert runs == {"get_customer": 1, "get_weather": 3}  # nothing ran twice
    assert [e.kind for e in transcript.entries][:3] == ["tools", "user", "call"]
    for post in posts:
        assert check_events_body(post.body) == []
        assert post.headers["openai-beta"] == "agents=v1"
        assert post.headers["authorization"] == "<redacted>"
    if fault == "registration_race":  # each result: a 400, then the same key again
        results = [p for p in posts if p.body["events"][0]["type"].endswith("tool_result")]
        by_key: dict[str, list[int]] = {}
        for p in results:
            by_key.setdefault(p.headers["idempotency-key"], []).append(p.status)
        assert sorted(by_key.values()) == [[400, 202]] * 4
    if fault == "fail_requests":  # a refused result goes again under the same key
        results = [p for p in posts if p.body["events"][0]["type"].endswith("tool_result")]
        refused = [i for i, p in enumerate(results) if p.status >= 429]
        assert refused  # the schedule hits at least one result
        call_ids = [p.body["events"][0]["call_id"] for p in results]
        for i in refused:
            retry = next(p for j, p in enumerate(results) if j > i and call_ids[j] == call_ids[i])
            assert retry.headers["idempotency-key"] == results[i].headers["idempotency-key"]


async def test_serve_session_answers_until_idle(toolbox: toolbridge.Toolbox) -> None:
    with emulator(DIALECT, script=SCRIPT, faults={"drop_stream_after": 2}) as emu:
        async with aclient(emu) as client:
            session = await client.create_session(toolbox, input="hi")
            assert session["status"] == "requires_action"
            final = await aserve_session(toolbox, session["id"], client=client)
            assert final.status == "completed" and final.conversation == session["id"]
            page = await client.list_items(session["id"], limit=1)
    assert page["has_more"] and page["data"][0]["role"] == "assistant"


def test_sync_client_and_serve_session(toolbox: toolbridge.Toolbox) -> None:
    with emulator(DIALECT, script=SCRIPT, faults={"duplicate_events": 1}) as emu:
        base = emu.base_url + "/v1"
        with AgentsClient(base_url=base, api_key=KEY, retry=FAST) as client:
            session = client.create_session(toolbox, input="hi", model="gpt-5",
                                            metadata={"app": "test"})
            assert check_tools(session["agent"]["tools"]) == []
            body = toolbox.handle(DIALECT, client.retrieve_session(session["id"]))
            client.submit_results(session["id"], body)
            with client.stream_events(session["id"]) as stream:
                events = iter(stream)
                final = serve_session(toolbox, session["id"], base_url=base, retry=FAST)
                seen = [next(events)["event_id"] for _ in range(6)]
            assert len(set(seen)) == 6  # duplicates were dropped
            assert final.status == "completed"
            assert client.retrieve_session(session["id"])["status"] == "idle"
            with pytest.raises(toolbridge.BackendError, match="Unknown pending tool call"):
                client.submit_results(session["id"], body)


def test_run_conversation_sync(toolbox: toolbridge.Toolbox) -> None:
    with emulator(DIALECT, script=SCRIPT) as emu:
        transcript = run_conversation(toolbox, ["weather?", "Oslo?"],
                                      base_url=emu.base_url + "/v1")
    check_reply(transcript)


async def test_race_that_persists_raises_and_reuses_the_key(toolbox: toolbridge.Toolbox) -> None:
    with emulator(DIALECT, script=SCRIPT) as emu:
        async with aclient(emu) as client:
            session = await client.create_session(toolbox, input="hi")
            event = {"type": "agent.session.input.tool_result", "call_id": "call_gone",
                     "turn_id": session["required_actions"][0]["turn_id"], "success": True,
                     "output": "x"}
            with pytest.raises(PendingCallRaceError):
                await client.send_events(session["id"], [event], idempotency_key="k-1")
        posts = emu.journal.entries("POST", "/events")
    assert [p.headers["idempotency-key"] for p in posts] == ["k-1"] * 4


async def test_retry_after_is_honoured_and_bounded(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="toolbridge.http")
    faults = {"fail_requests": [{"nth": n, "status": 429, "retry_after": 0.2} for n in (1, 2)]}
    policy = toolbridge.http.RetryPolicy(max_attempts=3, backoff=0.001, max_delay=0.05)
    with emulator(DIALECT, faults=faults) as emu:
        async with AsyncAgentsClient(base_url=emu.base_url + "/v1", retry=policy) as client:
            with pytest.raises(toolbridge.BackendError) as info:
                await client.retrieve_session("sess_nope")
    waits = [r.getMessage() for r in caplog.records if r.getMessage().startswith("retrying")]
    assert [w.rsplit(" in ", 1)[1] for w in waits] == ["0.05s (attempt 2)", "0.05s (attempt 3)"]
    assert info.value.status == 404 and len(emu.journal) == 3  # the 0.2 s hint, capped


async def test_headers_and_the_key_never_shows(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    faults = {"fail_requests": [{"nth": 1, "status": 500}]}
    with emulator(DIALECT, faults=faults) as emu:
        client = aclient(emu, organization="org-1", project="proj-1")
        with pytest.raises(toolbridge.BackendError) as info:
            await client.retrieve_session("sess_nope")
        await client.aclose()
        headers = emu.journal.entries()[0].headers
    assert headers["openai-organization"] == "org-1" and headers["openai-project"] == "proj-1"
    assert headers["openai-beta"] == "agents=v1"
    shown = [repr(client), str(client.config), str(info.value), repr(info.value.body),
             caplog.text]
    assert all(KEY not in text for text in shown)
    assert "Secret('********')" in repr(client)


async def test_update_tools_replaces_the_list(toolbox: toolbridge.Toolbox) -> None:
    extra = toolbridge.ToolDefinition(name="refund", description="Refund.", defer_loading=True)
    with emulator(DIALECT, script=SCRIPT) as emu:
        async with aclient(emu) as client:
            session = await client.create_session(toolbox, input="hi")
            updated = await client.update_tools(session["id"], [*toolbox, extra])
    names = [t.get("name", t["type"]) for t in updated["agent"]["tools"]]
    assert names == ["get_customer", "get_weather", "refund", "tool_search"]


class _NoSubmits(httpx.AsyncBaseTransport):
    """A network where every result submission fails (the connection resets)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/events"):
            raise httpx.ConnectError("connection refused", request=request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_recovery_resubmits_stored_results_without_rerunning(tmp_path: Path) -> None:
    """A worker runs a side-effecting tool, then cannot submit its result and gives up; a new
    worker re-reads required_actions and resubmits the stored result."""
    runs: dict[str, int] = {}
    toolbox = weather_toolbox(runs, store=f"sqlite:///{tmp_path / 'results.db'}")
    script = {"turns": [{"rounds": [[{"name": "get_weather", "arguments": {"location": "Rome"}}]],
                         "reply": "{outputs}"}]}
    quick = DriverSettings(recovery=toolbridge.http.RetryPolicy(max_attempts=2, backoff=0.001))
    with emulator(DIALECT, script=script) as emu:
        base = emu.base_url + "/v1"
        async with AsyncAgentsClient(base_url=base) as setup:
            session = await setup.create_session(toolbox, input="Rome?")
        once = toolbridge.http.RetryPolicy(max_attempts=1)
        cut = AsyncAgentsClient(base_url=base, retry=once,
                                http_client=httpx.AsyncClient(transport=_NoSubmits()))
        with pytest.raises(ServeError, match="gave up after 2 recoveries") as info:
            await toolbridge.serve.aanswer_pending(toolbox, DIALECT, {"client": cut},
                                                   conversation=session["id"], settings=quick)
        await cut.aclose()
        assert info.value.transcript is not None and runs == {"get_weather": 1}
        final = await aserve_session(toolbox, session["id"], base_url=base, retry=FAST)
    assert final.status == "completed"
    assert runs == {"get_weather": 1}
    assert emu.state.sessions[session["id"]].items[-1]["content"][0]["text"] == \
        '["sunny in Rome"]'


async def test_watch_keeps_serving_until_cancelled(toolbox: toolbridge.Toolbox) -> None:
    with emulator(DIALECT, script=SCRIPT) as emu:
        async with aclient(emu) as client:
            session = await client.create_session(toolbox, input="first")
            worker = asyncio.create_task(aserve_session(toolbox, session["id"], client=client,
                                                        watch=True))
            for _ in range(200):
                await asyncio.sleep(0.01)
                if (await client.retrieve_session(session["id"]))["status"] == "idle":
                    break
            await client.send_message(session["id"], "second")
            for _ in range(200):
                await asyncio.sleep(0.01)
                state = emu.state.sessions[session["id"]]
                if state.status == "idle" and len(state.turns) == 2:
                    break
            assert not worker.done()
            worker.cancel()
            with pytest.raises(asyncio.CancelledError):
                await worker
    assert state.items[-1]["content"][0]["text"] == 'Oslo: ["sunny in Oslo"]'


async def test_serve_options_are_typed(toolbox: toolbridge.Toolbox) -> None:
    with pytest.raises(toolbridge.UsageError, match="session_id"):
        await toolbridge.serve.aanswer_pending(toolbox, DIALECT, {"base_url": "http://127.0.0.1:9",
                                                         "api_key": "k"})
    with pytest.raises(toolbridge.UsageError, match=r"unknown option\(s\) colour; known: "):
        await toolbridge.serve.aanswer_pending(toolbox, DIALECT,
                                               {"session_id": "s", "colour": "red"})
    with pytest.raises(toolbridge.UsageError, match="watch: Input should be a valid boolean"):
        await toolbridge.serve.aanswer_pending(toolbox, DIALECT,
                                               {"session_id": "s", "watch": "maybe"})
    with emulator(DIALECT, script=SCRIPT) as emu:
        base = emu.base_url + "/v1"
        async with aclient(emu) as client:
            session = await client.create_session(toolbox, input="hi")
        final = await toolbridge.serve.aanswer_pending(toolbox, DIALECT, {
            "session_id": session["id"], "base_url": base, "watch": "false"})
    assert final.status == "completed"


async def test_converse_on_the_bare_emulator_url(toolbox: toolbridge.Toolbox) -> None:
    with emulator(DIALECT, script=SCRIPT) as emu:
        transcript = await toolbridge.serve.aconverse(
            toolbox, DIALECT, ["weather?", "Oslo?"], {"base_url": emu.base_url,
                                                      "api_key": "demo"})
    check_reply(transcript)


async def test_async_client_saved_agents_and_a_session_of_one() -> None:
    box = weather_toolbox()
    with emulator(DIALECT, script=SCRIPT) as emu:
        async with aclient(emu) as client:
            agent = await client.create_agent(
                model="gpt-4.1", name="desk", instructions="Be brief.",
                tools=box.definitions(DIALECT))
            assert (await client.retrieve_agent(agent["id"]))["name"] == "desk"
            page = await client.list_agents(limit=5)
            assert [a["id"] for a in page["data"]] == [agent["id"]]
            session = await client.create_session(agent_id=agent["id"], input="hello")
            assert session["agent"]["name"] == "desk"  # the saved agent's settings
            with pytest.raises(toolbridge.BackendError, match="404"):
                await client.retrieve_agent("agent_nope")
