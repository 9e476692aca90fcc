"""`toolbridge.http` calls and flows, sent sync and async over loopback to a small emulator:
paging with pauses, a dialect's own resend, streams drained or relayed and always closed."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from toolbridge import BackendError
from toolbridge.http import (
    AsyncSender,
    Call,
    Drain,
    Emit,
    Flow,
    Open,
    Pause,
    Relay,
    RetryPolicy,
    Sender,
    SSEDecoder,
    raise_for_backend,
)
from toolbridge.testing.emulators import Emulator

FAST = RetryPolicy(backoff=0.001, max_attempts=2)


class Pages(Emulator):
    dialect = "pages"

    def build_app(self) -> Any:
        busy = itertools.count()

        async def items(request: Request) -> JSONResponse:
            after = int(request.query_params.get("after", "0"))
            return JSONResponse({"data": [after + 1, after + 2], "has_more": after < 4})

        async def race(request: Request) -> JSONResponse:
            if next(busy) < 2:
                return JSONResponse({"error": {"message": "not yet"}}, status_code=400)
            return JSONResponse({"ok": True})

        async def events(request: Request) -> StreamingResponse:
            async def frames() -> AsyncIterator[bytes]:
                for n in range(int(request.query_params.get("n", "20"))):
                    yield f"data: {json.dumps({'n': n})}\n\n".encode()
                yield b"data: [DONE]\n\n"

            return StreamingResponse(frames(), media_type="text/event-stream")

        async def missing(request: Request) -> JSONResponse:
            return JSONResponse({"error": {"message": "no such stream"}}, status_code=404)

        return Starlette(routes=[Route("/items", items), Route("/race", race),
                                 Route("/events", events), Route("/missing", missing)])


class Local:
    """The endpoint: a base URL, no credential."""

    retry = FAST

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def bearer(self) -> None:
        return None

    async def abearer(self) -> None:
        return None

    def request_for(self, call: Call[Any], token: None,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        return http.build_request(call.method, self.base_url + call.path, params=call.params,
                                  json=call.body)


class Numbers:
    """A `Reader` of ``{"n": ...}`` events."""

    def __init__(self) -> None:
        self.frames = SSEDecoder()
        self.finished = False
        self.ends: list[Exception | None] = []

    def feed(self, line: str) -> int | None:
        frame = self.frames.feed(line)
        if frame is None:
            return None
        if frame[1] == "[DONE]":
            self.finished = True
            return None
        return int(json.loads(frame[1])["n"])

    def ended(self, broke: Exception | None) -> None:
        self.ends.append(broke)


def read_json(response: httpx.Response) -> Any:
    raise_for_backend(response, "test")
    return response.json()


def every_item() -> Flow[list[int]]:
    items: list[int] = []
    after = 0
    while True:
        page = yield Call("GET", "/items", read_json, params={"after": after})
        items += page["data"]
        if not page["has_more"]:
            return items
        yield Pause(0.001)
        after = page["data"][-1]


def first_events(taken: list[int], count: int) -> Flow[None]:
    def take(n: int) -> bool:
        taken.append(n)
        return len(taken) == count

    yield Drain(Call("GET", "/events", read_json, stream=True), Numbers(), take)


def relayed() -> Flow[None]:
    stream = yield Open(Call("GET", "/events", read_json, params={"n": 3}, stream=True),
                        Numbers())
    yield Emit("opened")
    count = yield Relay(stream)
    yield Emit(f"relayed {count}")
    yield Emit((yield Call("GET", "/items", read_json))["data"])
    yield Relay((yield Open(Call("GET", "/events", read_json, stream=True), Numbers())))


RACE = Call("GET", "/race", read_json, resend=(0.001, 0.001),
            resend_if=lambda response: response.status_code == 400)


def test_sync_sender_runs_calls_flows_and_streams() -> None:
    opened: list[httpx.Response] = []
    with Pages().run() as emu, httpx.Client(event_hooks={"response": [opened.append]}) as http:
        sender = Sender(Local(emu.url()), http)
        assert sender.run(every_item()) == [1, 2, 3, 4, 5, 6]
        assert sender.send(RACE) == {"ok": True}  # re-sent twice, as resend says
        assert [e.path for e in emu.journal.entries()][-3:] == ["/race"] * 3
        taken: list[int] = []
        sender.run(first_events(taken, 4))
        assert taken == [0, 1, 2, 3]
        events = sender.iterate(relayed())
        assert list(itertools.islice(events, 9)) == [
            "opened", 0, 1, 2, "relayed 3", [1, 2], 0, 1, 2]
        events.close()  # the consumer stops: the open stream is closed
        assert all(response.is_closed for response in opened)
        with pytest.raises(TypeError, match="Open is a step of event flows"):
            sender.run(relayed())
        with pytest.raises(BackendError, match="no such stream"):
            list(sender.events(Call("GET", "/missing", read_json, stream=True), Numbers()))
        assert all(response.is_closed for response in opened)


async def test_async_sender_runs_the_same() -> None:
    opened: list[httpx.Response] = []

    async def hook(response: httpx.Response) -> None:
        opened.append(response)

    with Pages().run() as emu:
        async with httpx.AsyncClient(event_hooks={"response": [hook]}) as http:
            sender = AsyncSender(Local(emu.url()), http)
            assert await sender.run(every_item()) == [1, 2, 3, 4, 5, 6]
            assert await sender.send(RACE) == {"ok": True}
            assert [e.path for e in emu.journal.entries()][-3:] == ["/race"] * 3
            taken: list[int] = []
            await sender.run(first_events(taken, 4))
            assert taken == [0, 1, 2, 3]
            got: list[Any] = []
            events = sender.iterate(relayed())
            async for value in events:
                got.append(value)
                if len(got) == 9:
                    break
            await events.aclose()
            assert got == ["opened", 0, 1, 2, "relayed 3", [1, 2], 0, 1, 2]
            assert all(response.is_closed for response in opened)
            with pytest.raises(TypeError, match="Open is a step of event flows"):
                await sender.run(relayed())
            with pytest.raises(BackendError, match="no such stream"):
                async for _ in sender.events(Call("GET", "/missing", read_json, stream=True),
                                             Numbers()):
                    pass
            assert all(response.is_closed for response in opened)


def test_a_resend_that_never_succeeds_reads_the_last_answer() -> None:
    with Pages().run() as emu, httpx.Client() as http:
        sender = Sender(Local(emu.url()), http)
        once = Call("GET", "/race", read_json, resend=(0.001,),
                    resend_if=lambda response: response.status_code == 400)
        with pytest.raises(BackendError, match="not yet") as info:
            sender.send(once)
        assert info.value.status == 400 and len(emu.journal) == 2
