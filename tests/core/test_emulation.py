"""The emulator base: journal, faults, SSE framing and the scripted model, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from toolbridge import UsageError
from toolbridge.cli._options import parse_fault_options
from toolbridge.testing import Faults, Script, ScriptError, StreamFaults
from toolbridge.testing.emulators import Emulator, ScriptedModel, faults_from, sse_frames


class Tiny(Emulator):
    dialect = "tiny"
    faults_type = StreamFaults
    faults: StreamFaults

    def build_app(self) -> Any:
        async def echo(request: Request) -> JSONResponse:
            return JSONResponse({"got": await request.json()})

        async def events(request: Request) -> StreamingResponse:
            async def source() -> AsyncIterator[tuple[str | None, Any]]:
                for i in range(5):
                    yield ("tick", {"i": i})

            return StreamingResponse(sse_frames(source(), self.faults, done=b"data: [DONE]\n\n"),
                                     media_type="text/event-stream")

        return Starlette(routes=[Route("/echo", echo, methods=["POST"]),
                                 Route("/events", events)])

    def error_body(self, status: int, message: str) -> Any:
        return {"error": {"message": message, "type": "tiny_error"}}


def read_events(client: httpx.Client, url: str) -> list[str]:
    with client.stream("GET", url) as response:
        return [line for line in response.iter_lines() if line.startswith("data:")]


def test_journal_records_and_redacts() -> None:
    with Tiny().run() as emu, httpx.Client() as client:
        r = client.post(emu.url("/echo"), json={"a": 1},
                        headers={"Authorization": "Bearer sk-secret", "api-key": "k2"})
        assert r.json() == {"got": {"a": 1}}
        [entry] = emu.journal.entries("POST", "/echo")
        assert (entry.body, entry.status, entry.response) == ({"a": 1}, 200, {"got": {"a": 1}})
        assert entry.headers["authorization"] == entry.headers["api-key"] == "<redacted>"
        over_http = client.get(emu.url("/_emulator/journal")).json()
        assert over_http[0]["path"] == "/echo"
        assert "sk-secret" not in json.dumps(over_http)


def test_fail_requests_use_the_dialect_error_shape_and_retry_after() -> None:
    faults = Faults(fail_requests=[{"nth": 2, "status": 429, "retry_after": 1.5}])
    with Tiny(faults=faults).run() as emu, httpx.Client() as client:
        assert client.post(emu.url("/echo"), json={}).status_code == 200
        second = client.post(emu.url("/echo"), json={})
        assert second.status_code == 429 and second.headers["retry-after"] == "1.5"
        assert second.json()["error"]["type"] == "tiny_error"
        assert client.post(emu.url("/echo"), json={}).status_code == 200


def test_stream_faults() -> None:
    with Tiny().run() as emu, httpx.Client() as client:
        assert read_events(client, emu.url("/events"))[-1] == "data: [DONE]"
    with Tiny(faults={"duplicate_events": 2}).run() as emu, httpx.Client() as client:
        data = read_events(client, emu.url("/events"))
        assert data.count('data: {"i": 1}') == 2 and data.count('data: {"i": 0}') == 1
    with Tiny(faults={"drop_stream_after": 2}).run() as emu, httpx.Client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            read_events(client, emu.url("/events"))


def test_latency() -> None:
    import time

    with Tiny(faults={"latency_ms": 120}).run() as emu, httpx.Client() as client:
        started = time.perf_counter()
        client.post(emu.url("/echo"), json={})
        assert time.perf_counter() - started >= 0.12


def test_scripted_model_plays_rounds_and_checks_calls() -> None:
    script = Script.load({"turns": [{
        "rounds": [[{"name": "f", "arguments": {"x": 1}}],
                   [{"name": "f", "arguments": {"x": 2}}, {"name": "f", "arguments": {"x": 3}}]],
        "reply": "got {outputs}"}]})
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    model = ScriptedModel(script, {"f": schema})
    model.start_turn("hello")
    assert [c.arguments for c in model.next_round()] == [{"x": 1}]
    model.record("one")
    assert len(model.next_round()) == 2
    model.record({"two": 2})
    assert model.next_round() == []
    assert model.reply() == 'got ["one", {"two": 2}]'
    model.start_turn("beyond the script")
    assert model.next_round() == [] and model.reply() == "beyond the script"

    with pytest.raises(ScriptError, match="does not declare"):
        ScriptedModel(script, {"g": schema}).check(script.turns[0].rounds[0][0])
    bad = Script.load({"turns": [{"rounds": [[{"name": "f", "arguments": {"x": "no"}}]]}]})
    model = ScriptedModel(bad, {"f": schema})
    model.start_turn("hi")
    with pytest.raises(ScriptError, match="rejected by its declared schema"):
        model.next_round()


def test_script_and_fault_parsing(tmp_path: Any) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"turns": [{"reply": "x"}]}')
    assert Script.load(str(path)).turns[0].reply == "x"
    with pytest.raises(ScriptError):
        Script.load('{"turns": 3}')
    given = parse_fault_options(["latency_ms=5", "drop-stream-after=2",
                                 'fail_requests=[{"nth": 1, "status": 503}]'])
    faults = faults_from(given, StreamFaults, "tiny")
    assert faults.latency_ms == 5 and faults.drop_stream_after == 2
    assert faults.fail_requests[0].status == 503


@pytest.mark.parametrize(("given", "valid"), [
    ({"latencyms": 5}, "fail_requests, latency_ms"),
    ({"drop_stream_after": 1}, "fail_requests, latency_ms"),  # this emulator has no streams
])
def test_unknown_faults_are_refused_with_the_valid_ones(given: dict[str, Any], valid: str
                                                        ) -> None:
    with pytest.raises(UsageError) as info:
        faults_from(given, Faults, "tiny")
    text = str(info.value)
    assert text.startswith(f"unknown fault(s) {next(iter(given))} for the tiny emulator")
    assert text.endswith(f"valid: {valid}")


@pytest.mark.parametrize("dialect", ["openai-agents", "openai-assistants", "google-ces"])
def test_every_emulator_declares_its_faults(dialect: str) -> None:
    from toolbridge.testing import emulator

    own = {"openai-agents": {"registration_race"}, "openai-assistants": {"expire_after"},
           "google-ces": set()}[dialect]
    streams = set() if dialect == "google-ces" else {"drop_stream_after", "duplicate_events"}
    with pytest.raises(UsageError, match="valid: ") as info:
        with emulator(dialect, faults={"nosuch": 1}):
            pass
    listed = set(str(info.value).split("valid: ", 1)[1].split(", "))
    assert listed == {"fail_requests", "latency_ms"} | streams | own
    if dialect != "openai-agents":
        with pytest.raises(UsageError, match="registration_race"):
            with emulator(dialect, faults={"registration_race": True}):
                pass


def test_a_processed_request_whose_reply_is_dropped() -> None:
    """``after_processing``: the app acts on the request, the client gets the failure."""
    seen: list[Any] = []

    class Counting(Tiny):
        def build_app(self) -> Any:
            async def echo(request: Request) -> JSONResponse:
                seen.append(await request.json())
                return JSONResponse({"got": seen[-1]})

            return Starlette(routes=[Route("/echo", echo, methods=["POST"])])

    faults = {"fail_requests": [{"nth": 2, "status": 502, "after_processing": True}]}
    with Counting(faults=faults).run() as emu, httpx.Client() as client:
        assert client.post(emu.url("/echo"), json={"n": 1}).status_code == 200
        lost = client.post(emu.url("/echo"), json={"n": 2})
        assert lost.status_code == 502 and "after processing it" in lost.text
        assert client.post(emu.url("/echo"), json={"n": 3}).status_code == 200
        entries = emu.journal.entries("POST", "/echo")
    assert seen == [{"n": 1}, {"n": 2}, {"n": 3}]  # the second one was processed
    assert [e.dropped for e in entries] == [None, 200, None]
    assert entries[1].status == 502
