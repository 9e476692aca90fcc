"""Our client and serve loop against the emulator: streaming, polling, Azure, every fault."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from assistants_support import PARALLEL, TWO_ROUNDS, D, weather_toolbox
from openai.types.beta.threads.run_submit_tool_outputs_params import ToolOutput
from openai_sdk_types import check_param

import toolbridge
import toolbridge.serve
from toolbridge import BackendError, UsageError
from toolbridge.errors import ServeError
from toolbridge.http import RetryPolicy
from toolbridge.testing import emulator
from toolbridge_openai_assistants import (
    AssistantsClient,
    AsyncAssistantsClient,
    RunExpiredError,
    arun_conversation,
    aserve_run,
    run_conversation,
)

FAST = RetryPolicy(backoff=0.01, max_delay=0.2)


def _openai(emu: Any, **extra: Any) -> dict[str, Any]:
    return {"base_url": emu.base_url + "/v1", "api_key": "sk-secret-123", "retry": FAST,
            **extra}


def _reply_outputs(transcript: toolbridge.Transcript) -> list[Any]:
    return json.loads(transcript.reply.removeprefix("Answer: "))


@pytest.mark.parametrize("stream", [True, False])
def test_conversation_two_rounds(stream: bool) -> None:
    with emulator(D, script=TWO_ROUNDS) as emu:
        transcript = run_conversation(weather_toolbox(), ["hi"], stream=stream, **_openai(emu))
        submits = [e.body for e in emu.journal.entries("POST", "submit_tool_outputs")]
    kinds = [e.kind for e in transcript.entries]
    assert kinds == ["tools", "user", "call", "result", "call", "call", "result", "result",
                     "reply"]
    outputs = _reply_outputs(transcript)
    assert outputs[0] == "12:00 in UTC"
    assert json.loads(outputs[2])["unit"] == "celsius"  # strict null -> default
    assert [len(b["tool_outputs"]) for b in submits] == [1, 2]  # one body per round
    assert all(b.get("stream", False) is stream for b in submits)
    for body in submits:
        assert check_param(body["tool_outputs"], list[ToolOutput]) == []


def test_azure_with_key_and_with_entra_token() -> None:
    with emulator(D, script=PARALLEL) as emu:
        for creds in ({"api_key": "az-key"}, {"azure_ad_token_provider": lambda: "entra-tok"}):
            transcript = run_conversation(
                weather_toolbox(), ["hi"], model="my-deployment", azure_endpoint=emu.base_url,
                api_version="2024-07-01-preview", retry=FAST, **creds)
            assert transcript.reply.startswith("Answer: ")
        entries = emu.journal.entries()
    assert all(e.path.startswith("/openai/") and "api-version=2024-07-01-preview" in e.query
               and "deployments" not in e.path for e in entries)
    assert {e.body["model"] for e in entries if e.path == "/openai/assistants"} == {
        "my-deployment"}
    assert any("api-key" in e.headers for e in entries)
    assert any(e.headers.get("authorization") == "<redacted>" for e in entries)


def test_azure_needs_version_and_one_credential() -> None:
    with pytest.raises(UsageError, match="api_version"):
        AssistantsClient(azure_endpoint="https://r.openai.azure.com", api_key="k")
    with pytest.raises(UsageError, match="exactly one"):
        AssistantsClient(azure_endpoint="https://r.openai.azure.com", api_version="v")

    async def token() -> str:
        return "tok"

    with AssistantsClient(azure_endpoint="https://r.openai.azure.com", api_version="v",
                          azure_ad_token_provider=token) as client, pytest.raises(
            UsageError, match="returning a str"):
        client.retrieve_run("thread_1", "run_1")


@pytest.mark.parametrize("faults", [
    {"fail_requests": [{"nth": 3, "status": 429, "retry_after": 0.05}]},
    {"fail_requests": [{"nth": n, "status": s} for n, s in ((4, 500), (5, 503), (7, 502))]},
    {"drop_stream_after": 2},
    {"duplicate_events": 2},
    {"latency_ms": 30},
])
@pytest.mark.parametrize("stream", [True, False])
def test_serve_loop_survives_faults(faults: dict[str, Any], stream: bool) -> None:
    with emulator(D, script=TWO_ROUNDS, faults=faults) as emu:
        transcript = run_conversation(weather_toolbox(), ["hi"], stream=stream, **_openai(emu))
        statuses = [e.status for e in emu.journal.entries()]
    assert len(_reply_outputs(transcript)) == 3
    if "fail_requests" in faults:
        assert {429, 500, 503, 502} & set(statuses)


def test_retries_are_bounded() -> None:
    # The client does not send a create (not idempotent) again on a 503: only the driver
    # does, once per recovery, after asking whether it arrived (no thread yet: it did not).
    fail = [{"nth": n, "status": 503} for n in range(1, 30)]
    once = toolbridge.serve.DriverSettings(recovery=RetryPolicy(max_attempts=1, backoff=0.01))
    with emulator(D, faults={"fail_requests": fail}) as emu:
        transcript = toolbridge.serve.converse(weather_toolbox(), D, ["hi"], _openai(emu),
                                               settings=once)
    assert transcript.status == "failed" and isinstance(transcript.error, BackendError)
    assert transcript.error.status == 503 and len(emu.journal) == 2


def test_poll_interval_follows_the_header_on_every_response(
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = weather_toolbox()
    with emulator(D, script=TWO_ROUNDS, poll_after_ms=70) as emu, AssistantsClient(
            **_openai(emu)) as client:
        delays: list[float] = []
        poll_delay = client.poll_delay

        def recorded() -> float:
            delays.append(poll_delay())
            return delays[-1]

        monkeypatch.setattr(client, "poll_delay", recorded)
        assistant = client.create_assistant(model="gpt-4o", tools=box.definitions(D))
        thread = client.create_thread()
        client.create_message(thread["id"], "hello")
        run = client.create_run(thread["id"], assistant["id"])
        assert client.poll_after == 0.07
        run = client.poll_run(thread["id"], run["id"])  # queued -> in_progress -> requires_action
        assert run["status"] == "requires_action"
        assert delays == [0.07]  # the 70 ms hint, not the 1 s default
        emu.state.poll_after_ms = 10  # the header changes mid-run
        run = client.submit_tool_outputs(thread["id"], run["id"], box.handle(D, run))
        assert client.poll_after == 0.01
        run = client.poll_run(thread["id"], run["id"])
        assert run["status"] == "requires_action"
    assert delays == [0.07, 0.01]


SECRET = "sk-secret-123"
CREDENTIALS: dict[str, Callable[[str], dict[str, Any]]] = {
    "openai-key": lambda url: {"base_url": url + "/v1", "api_key": SECRET},
    "azure-key": lambda url: {"azure_endpoint": url, "api_version": "2024-07-01-preview",
                              "api_key": SECRET},
    "azure-entra-token": lambda url: {"azure_endpoint": url, "api_version": "2024-07-01-preview",
                                      "azure_ad_token_provider": lambda: SECRET},
}


@pytest.mark.parametrize("kind", sorted(CREDENTIALS))
def test_key_never_logged_or_shown(kind: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    # requests 1-4: HTTP 500 (every attempt); 5: a 404; 7: a 429 inside the conversation
    fail = [{"nth": n, "status": 500} for n in range(1, FAST.max_attempts + 1)]
    with emulator(D, script=TWO_ROUNDS,
                  faults={"fail_requests": [*fail, {"nth": 7, "status": 429}]}) as emu:
        creds = CREDENTIALS[kind](emu.base_url)
        errors: list[BackendError] = []
        with AssistantsClient(**creds, retry=FAST) as client:
            for status in (500, 404):
                with pytest.raises(BackendError) as info:
                    client.retrieve_run("thread_nope", "run_nope")
                assert info.value.status == status
                errors.append(info.value)
            transcript = run_conversation(weather_toolbox(), ["hi"], retry=FAST, **creds)
        statuses = [e.status for e in emu.journal.entries()]
    assert len(_reply_outputs(transcript)) == 3 and 429 in statuses
    shown = [caplog.text, repr(client), repr(client.api_key), repr(transcript.entries)]
    for exc in errors:
        shown += [str(exc), repr(exc), repr(exc.body)]
    assert all(SECRET not in text for text in shown)


@pytest.mark.parametrize("stream", [True, False])
def test_retried_submission_already_accepted(stream: bool) -> None:
    transport = _LoseFirstSubmitAnswer()
    with emulator(D, script=TWO_ROUNDS) as emu:
        transcript = asyncio.run(arun_conversation(
            weather_toolbox(), ["hi"], stream=stream,
            http_client=httpx.AsyncClient(transport=transport), **_openai(emu)))
        submits = emu.journal.entries("POST", "submit_tool_outputs")
    assert transport.lost == 1
    assert [e.status for e in submits] == [200, 400, 200]
    refused = submits[1].response["error"]["message"]
    # polling leaves the run queued; a stream already ran it on to the next round
    expected = "Expected tool outputs" if stream else 'Runs in status "queued"'
    assert refused.startswith(expected)
    assert len(_reply_outputs(transcript)) == 3


class _LoseFirstSubmitAnswer(httpx.AsyncBaseTransport):
    """Delivers the first submission, then fails as if the answer were lost on the way back."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.lost = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.url.path.endswith("/submit_tool_outputs") and not self.lost:
            self.lost += 1
            await response.aread()
            await response.aclose()
            raise httpx.ReadError("connection reset by peer", request=request)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_expired_run_is_reported_clearly() -> None:
    with emulator(D, script=PARALLEL, expire_after=0.4) as emu:
        box = weather_toolbox()

        @box.tool(timeout=5)
        def slow() -> str:
            return "never"

        async def main() -> None:
            async with AsyncAssistantsClient(**_openai(emu), expiry_margin=0) as client:
                assistant = await client.create_assistant(model="gpt-4o",
                                                          tools=box.definitions(D))
                thread = await client.create_thread()
                await client.create_message(thread["id"], "hi")
                run = await client.create_run(thread["id"], assistant["id"])
                run = await client.poll_run(thread["id"], run["id"])
                await asyncio.sleep(0.6)
                with pytest.raises(RunExpiredError) as info:
                    await client.submit_tool_outputs(thread["id"], run["id"], {
                        "tool_outputs": []})
                assert info.value.run_id == run["id"] and info.value.status == 400
                served = await aserve_run(box, client, thread_id=thread["id"], run_id=run["id"])
                assert served.status == "expired"
                assert isinstance(served.error, RunExpiredError)
                assert served.error.run_id == run["id"]
                with pytest.raises(ServeError, match="ended expired") as raised:
                    served.raise_for_status()
                assert raised.value.__cause__ is served.error

        asyncio.run(main())


def test_expiry_mid_call_raises_run_expired_error() -> None:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(location: str, unit: str | None = None) -> str:
        time.sleep(0.8)
        return "sunny"

    @box.tool
    def get_time(tz: str) -> str:
        return "noon"

    with emulator(D, script=PARALLEL, faults={"expire_after": 0.5}) as emu:
        transcript = run_conversation(box, ["hi"], expiry_margin=0, **_openai(emu))
    assert transcript.status == "expired" and isinstance(transcript.error, RunExpiredError)
    assert "expired" in transcript.entries[-1].text


def test_handlers_that_cannot_finish_before_expiry_are_not_started() -> None:
    ran: list[str] = []
    box = toolbridge.Toolbox()

    @box.tool(timeout=30)
    def get_weather(location: str, unit: str | None = None) -> str:
        ran.append(location)
        return "sunny"

    @box.tool(timeout=0.1)
    def get_time(tz: str) -> str:
        return "noon"

    with emulator(D, script=PARALLEL, expire_after=10) as emu:
        transcript = run_conversation(box, ["hi"], expiry_margin=1, **_openai(emu))
    assert ran == []
    weather, clock = _reply_outputs(transcript)
    assert "was not started" in json.loads(weather)["error"]
    assert clock == "noon"


def test_async_conversation_with_tool_choice() -> None:
    with emulator(D, script=PARALLEL) as emu:
        transcript = asyncio.run(arun_conversation(
            weather_toolbox(), ["hi"], tool_choice=toolbridge.ToolChoice(mode="required"),
            **_openai(emu)))
        [create] = [e.body for e in emu.journal.entries("POST", "/runs")
                    if e.path.endswith("/runs")]
    assert create["tool_choice"] == "required" and create["stream"] is True
    assert transcript.reply.startswith("Answer: ")


def test_serving_an_existing_run() -> None:
    box = weather_toolbox()
    with emulator(D, script=PARALLEL) as emu, AssistantsClient(**_openai(emu)) as client:
        assistant = client.create_assistant(model="gpt-4o", tools=box.definitions(D))
        thread = client.create_thread()
        client.create_message(thread["id"], "hi")
        run = client.create_run(thread["id"], assistant["id"])
        final = toolbridge.serve.answer_pending(box, D, {"thread_id": thread["id"],
                                                         "run_id": run["id"], **_openai(emu)})
        assert final.status == "completed" and final.conversation == thread["id"]
        with pytest.raises(UsageError, match="thread_id"):
            toolbridge.serve.answer_pending(box, D, _openai(emu))
