from __future__ import annotations

import logging
import sys
from typing import Any

import httpx
import pytest
from ces_support import ADD_SCRIPT, APP, SESSION

import toolbridge
import toolbridge.http
from toolbridge.serve import aconverse
from toolbridge.testing import emulated_options, emulator
from toolbridge_google_ces import (
    AsyncCesClient,
    CesApiError,
    CesClient,
    arun_conversation,
    endpoint,
    run_conversation,
    session_name,
)

FAST = toolbridge.http.RetryPolicy(backoff=0.01, max_delay=0.05)
TOKEN = "ya29.super-secret-token"

FAULTS: list[dict[str, Any]] = [
    {},
    {"fail_requests": [{"nth": 1, "status": 429, "retry_after": 0.01}]},
    {"fail_requests": [{"nth": 2, "status": 500}, {"nth": 3, "status": 503}]},
    {"fail_requests": [{"nth": 4, "status": 503}, {"nth": 6, "status": 429}]},
    {"latency_ms": 20},
]


@pytest.mark.parametrize("faults", FAULTS)
async def test_conversation_under_faults(toolbox: toolbridge.Toolbox,
                                         faults: dict[str, Any]) -> None:
    with emulator("google-ces", script=ADD_SCRIPT, faults=faults) as emu:
        transcript = await arun_conversation(toolbox, ["add please", "thanks"], session=SESSION,
                                             base_url=emu.base_url, token=TOKEN, retry=FAST)
    kinds = [e.kind for e in transcript.entries]
    assert kinds == ["tools", "user", "call", "result", "call", "call", "result", "result",
                     "reply", "user", "reply"]
    assert transcript.of_kind("reply")[0].text == 'done: [5, 42, {"error": "cannot: no"}]'
    assert transcript.reply == "thanks"
    assert toolbox.seen == [(int, int), (int, int)]  # type: ignore[attr-defined]


async def test_transcript_holds_the_wire_calls_and_results(toolbox: toolbridge.Toolbox) -> None:
    with emulator("google-ces", script=ADD_SCRIPT) as emu:
        transcript = await arun_conversation(toolbox, ["add please"], session=SESSION,
                                             base_url=emu.base_url, token=TOKEN, retry=FAST)
        runs = emu.journal.entries("POST", ":runSession")
    asked = [item for entry in runs for output in entry.response.get("outputs", [])
             for item in output.get("toolCalls", {}).get("toolCalls", [])]
    sent = [entry.body for entry in runs[1:]]
    calls, results = transcript.of_kind("call"), transcript.of_kind("result")
    assert [c.data["id"] for c in calls] == [a["id"] for a in asked] and len(asked) == 3
    assert [c.data["arguments"] for c in calls] == [a["args"] for a in asked]
    assert [c.text for c in calls] == ['add({"a":2,"b":3})', 'add({"a":40,"b":2})',
                                       'broken({"reason":"no"})']
    assert [r.text for r in results] == ["5", "42", "error: cannot: no"]
    answered = [a for body in sent for a in body["inputs"][0]["toolResponses"]["toolResponses"]]
    assert [r.data["id"] for r in results] == [a["id"] for a in answered]
    assert [a["id"] for a in answered] == [c["id"] for c in asked]
    assert transcript.status == "completed" and transcript.conversation == SESSION


def test_sync_run_conversation_with_float_numbers(toolbox: toolbridge.Toolbox) -> None:
    with emulator("google-ces", script=ADD_SCRIPT, number_style="float") as emu:
        transcript = run_conversation(toolbox, ["add"], session=SESSION, base_url=emu.base_url,
                                      token=lambda: TOKEN, retry=FAST)
        assert '"a":2.0' in transcript.of_kind("call")[0].text
        assert toolbox.seen == [(int, int), (int, int)]  # type: ignore[attr-defined]
        # a second conversation finds the tools unchanged: it only lists them
        before = len(emu.journal.entries(contains="/tools"))
        again = run_conversation(toolbox, ["add"], session=session_name("p", "us", "a"),
                                 base_url=emu.base_url, token=TOKEN)
        tools = emu.journal.entries(contains="/tools")[before:]
        assert again.status == "completed" and [t.method for t in tools] == ["GET"]


def test_client_retries_are_bounded_and_errors_typed() -> None:
    always = {"fail_requests": [{"nth": n, "status": 503} for n in range(1, 10)]}
    with emulator("google-ces", faults=always) as emu, \
            CesClient(base_url=emu.base_url, token=TOKEN, retry=FAST) as client:
        with pytest.raises(CesApiError) as info:
            client.send_text(SESSION, "hi")
        assert len(emu.journal) == FAST.max_attempts
    assert info.value.status == 503 and info.value.status_name == "UNAVAILABLE"
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value.body)


@pytest.mark.parametrize(("status", "attempts"), [(500, 1), (502, 1), (503, 2), (429, 2)])
def test_run_session_retries_only_when_the_turn_did_not_run(status: int, attempts: int) -> None:
    faults = {"fail_requests": [{"nth": 1, "status": status, "retry_after": 0.01}]}
    with emulator("google-ces", faults=faults) as emu, \
            CesClient(base_url=emu.base_url, token=TOKEN, retry=FAST) as client:
        if attempts == 1:
            with pytest.raises(CesApiError) as info:
                client.send_text(SESSION, "hi")
            assert info.value.status == status
        else:
            assert client.send_text(SESSION, "hi")["outputs"][0]["text"] == "hi"
        assert len(emu.journal.entries("POST", ":runSession")) == attempts


async def test_run_session_retries_connect_errors_only() -> None:
    sent: list[str] = []

    def flaky(error: type[httpx.TransportError]) -> httpx.MockTransport:
        def handle(request: httpx.Request) -> httpx.Response:
            sent.append(request.url.path)
            if len(sent) == 1:
                raise error("boom", request=request)
            return httpx.Response(200, json={"outputs": [{"text": "ok"}]})
        return httpx.MockTransport(handle)

    async with AsyncCesClient(
            base_url="http://ces.test", token=TOKEN, retry=FAST,
            http_client=httpx.AsyncClient(transport=flaky(httpx.ConnectError))) as c:
        assert (await c.send_text(SESSION, "hi"))["outputs"][0]["text"] == "ok"
    assert len(sent) == 2
    sent.clear()
    with CesClient(base_url="http://ces.test", token=TOKEN, retry=FAST,
                   http_client=httpx.Client(transport=flaky(httpx.ReadTimeout))) as client:
        with pytest.raises(toolbridge.BackendError, match="not retried"):
            client.send_text(SESSION, "hi")
        assert len(sent) == 1
        assert client.list_tools(APP) == []  # idempotent calls still retry read errors
    assert len(sent) == 2


def test_client_tools_and_session_errors(toolbox: toolbridge.Toolbox) -> None:
    with emulator("google-ces") as emu, \
            CesClient(base_url=emu.base_url, token=TOKEN, retry=FAST) as client:
        report = client.sync_tools(toolbox, APP)
        assert len(report.created) == 3 and report.tool_names[f"{APP}/tools/add"] == "add"
        tool = client.get_tool(f"{APP}/tools/add")
        assert tool["clientFunction"]["parameters"]["type"] == "OBJECT"
        client.update_tool(tool["name"], {"clientFunction": {**tool["clientFunction"],
                                                             "description": "old"}})
        again = client.sync_tools(toolbox, APP)
        assert again.updated == [f"{APP}/tools/add"] and len(again.unchanged) == 2
        client.delete_tool(f"{APP}/tools/broken")
        assert len(client.list_tools(APP)) == 2
        assert client.send_text(SESSION, "echo me")["outputs"][0]["text"] == "echo me"
        with pytest.raises(toolbridge.UsageError):
            client.send_text("sessions/bad", "x")
        with pytest.raises(CesApiError) as info:
            client.run_session(SESSION, {"inputs": [{"toolResponses": {"toolResponses": [
                {"id": "x", "response": {"output": 1}}]}}]})
        assert info.value.status == 400 and "unknown tool call id" in str(info.value)
        headers = emu.journal.entries("POST", ":runSession")[0].headers
        assert headers["authorization"] == "<redacted>"
        assert headers["x-goog-request-params"] == f"config.session={SESSION}"


async def test_token_never_logged(toolbox: toolbridge.Toolbox,
                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    faults = {"fail_requests": [{"nth": 1, "status": 500}]}
    with emulator("google-ces", script=ADD_SCRIPT, faults=faults) as emu:
        client = AsyncCesClient(base_url=emu.base_url, token=toolbridge.http.Secret(TOKEN),
                                retry=FAST)
        transcript = await arun_conversation(toolbox, ["add"], session=SESSION, client=client)
        await client.aclose()
    assert TOKEN not in caplog.text and TOKEN not in repr(client)
    assert TOKEN not in transcript.render(show_data=True)
    assert "retrying" in caplog.text


def test_endpoints_and_missing_google_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    assert endpoint() == "https://ces.googleapis.com"
    assert endpoint(universe_domain="example.com") == "https://ces.example.com"
    with pytest.raises(TypeError):
        CesClient(token="t", region="us")  # type: ignore[call-arg]
    assert CesClient(token="t", universe_domain="example.com").base_url == "https://ces.example.com"
    monkeypatch.setitem(sys.modules, "google.auth", None)
    with pytest.raises(toolbridge.UsageError, match="toolbridge\\[google-auth\\]"):
        CesClient()


async def test_max_rounds_stops_a_looping_agent(toolbox: toolbridge.Toolbox) -> None:
    with emulator("google-ces", script=ADD_SCRIPT) as emu:
        transcript = await arun_conversation(toolbox, ["add"], session=SESSION,
                                             base_url=emu.base_url, token=TOKEN, max_rounds=1)
    assert transcript.status == "incomplete" and "more than 1 rounds" in str(transcript.error)


async def test_converse_for_the_demo(toolbox: toolbridge.Toolbox,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    dialect = toolbridge.get_dialect("google-ces")
    with emulator("google-ces", script=ADD_SCRIPT) as emu:
        transcript = await aconverse(toolbox, dialect, ["add"],
                                     emulated_options(dialect, emu.base_url))
    assert transcript.reply.startswith("done: [5, 42")
    for name in ("GOOGLE_CES_APP", "TOOLBRIDGE_GOOGLE_CES_APP"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(toolbridge.UsageError, match="app="):
        await aconverse(toolbox, dialect, ["add"], {"token": "t"})


def test_a_create_whose_reply_was_lost_counts_as_done_when_identical(
        toolbox: toolbridge.Toolbox) -> None:
    # The list is request 1, the first create request 2: it is stored, its reply lost (500);
    # its retry gets 409 "already exists", the stored tool is read and compared.
    lost = {"fail_requests": [{"nth": 2, "status": 500, "after_processing": True}]}
    with emulator("google-ces", faults=lost) as emu, \
            CesClient(base_url=emu.base_url, token=TOKEN, retry=FAST) as client:
        report = client.sync_tools(toolbox, APP)
        creates = emu.journal.entries("POST", f"{APP}/tools")
        assert [e.status for e in creates][:2] == [500, 409] and creates[0].dropped == 200
        assert len(report.created) == 3 and len(client.list_tools(APP)) == 3
        assert client.send_text(SESSION, "echo me")["outputs"][0]["text"] == "echo me"


def test_a_create_that_finds_a_different_tool_names_both(toolbox: toolbridge.Toolbox) -> None:
    with emulator("google-ces") as emu, \
            CesClient(base_url=emu.base_url, token=TOKEN, retry=FAST) as client:
        client.sync_tools(toolbox, APP)
        stored = client.get_tool(f"{APP}/tools/add")
        ours = {"displayName": stored["displayName"], "clientFunction": stored["clientFunction"]}
        assert client.create_tool(APP, ours, "add")["name"] == f"{APP}/tools/add"
        other = {**ours, "clientFunction": {**ours["clientFunction"], "description": "other"}}
        with pytest.raises(CesApiError) as info:
            client.create_tool(APP, other, "add")
        assert info.value.status == 409 and info.value.status_name == "ALREADY_EXISTS"
        message = str(info.value)
        assert f"{APP}/tools/add already exists with a different definition" in message
        assert '"other"' in message and stored["clientFunction"]["description"] in message
        posts = emu.journal.entries("POST", f"{APP}/tools")
        assert [e.status for e in posts[-2:]] == [409, 409]  # a 409 is not retried
