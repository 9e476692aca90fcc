"""`toolbridge.http.exclusive_transport`: a connection per request in flight, none raced for."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from toolbridge.http import exclusive_transport
from toolbridge.testing import emulator


async def test_concurrent_requests_each_get_a_connection_and_idle_ones_are_reused() -> None:
    with emulator("openai-agents") as emu:
        transport = exclusive_transport(keep=4)
        async with httpx.AsyncClient(transport=transport) as client:
            url = emu.base_url + "/v1/agents/sessions"
            answers = await asyncio.gather(*(client.get(url) for _ in range(30)))
            assert all(a.status_code == 200 for a in answers)
            assert "4 idle" in repr(transport)  # 30 at once, 4 kept
            again = await asyncio.gather(*(client.get(url) for _ in range(3)))
            assert all(a.status_code == 200 for a in again)
        assert "0 idle" in repr(transport)  # closed with the client


async def test_streams_keep_no_connection_and_errors_free_theirs() -> None:
    with emulator("openai-agents") as emu:
        transport = exclusive_transport(keep=0)
        async with httpx.AsyncClient(transport=transport) as client:
            async with client.stream("GET", emu.base_url + "/v1/agents/sessions") as response:
                assert response.status_code == 200
                await response.aread()
            assert "0 idle" in repr(transport)
            with contextlib.suppress(httpx.ConnectError):
                await client.get("http://127.0.0.1:9/")  # nothing listens there
            assert "0 idle" in repr(transport)


class FastSender(asyncio.Protocol):
    """An HTTP server answering one request with ``size`` bytes written as fast as the socket
    takes them; it notes when its transport asked it to stop writing."""

    def __init__(self, size: int, paused: asyncio.Event) -> None:
        self.size, self.paused, self.written = size, paused, 0
        self.transport: asyncio.Transport | None = None
        self.more = asyncio.Event()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if b"\r\n\r\n" in data and self.transport is not None:
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                                 b"Content-Length: %d\r\n\r\n" % self.size)
            asyncio.get_running_loop().create_task(self.send())

    async def send(self) -> None:
        chunk = b"x" * 65536
        while self.written < self.size and self.transport is not None:
            self.transport.write(chunk)
            self.written += len(chunk)
            if self.paused.is_set():
                await self.more.wait()
            await asyncio.sleep(0)

    def pause_writing(self) -> None:
        self.paused.set()

    def resume_writing(self) -> None:
        self.paused.clear()
        self.more.set()
        self.more = asyncio.Event()


async def test_a_slow_reader_pauses_a_sender_that_outruns_it() -> None:
    """Backpressure: while the consumer reads nothing, the connection stops reading its socket
    (past `READ_LIMIT`), the sender's writes back up and it is told to pause, having sent far
    less than the body; reading on then brings every byte."""
    from toolbridge.http._network import READ_LIMIT

    size = 64 * 1024 * 1024
    paused = asyncio.Event()
    senders: list[FastSender] = []

    def make() -> FastSender:
        senders.append(FastSender(size, paused))
        return senders[-1]

    server = await asyncio.get_running_loop().create_server(make, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient(transport=exclusive_transport(keep=0)) as client:
            async with client.stream("GET", f"http://127.0.0.1:{port}/big") as response:
                chunks = response.aiter_raw()
                received = len(await chunks.__anext__())
                await asyncio.wait_for(paused.wait(), 10)  # the reader is stalled
                await asyncio.sleep(0.2)
                stalled_at = senders[0].written
                assert stalled_at < size // 2, stalled_at  # TCP buffers and READ_LIMIT only
                assert size // 64 > READ_LIMIT
                async for chunk in chunks:
                    received += len(chunk)
        assert received == size
    finally:
        server.close()
        await server.wait_closed()


class OneChunkThenWait(asyncio.Protocol):
    """An HTTP server answering each request with a chunked body: one ``size``-byte chunk,
    then nothing (an event stream between two events) until the client goes."""

    def __init__(self, size: int) -> None:
        self.size = size

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if b"\r\n\r\n" in data:
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n"
                                 % (self.size, b"x" * self.size))


async def test_a_waiting_stream_keeps_no_copy_of_the_chunk_it_handed_on() -> None:
    """Streams waiting for their next chunk, each having read a 48 KB one through httpx's
    ``aiter_raw``, hold far less than that chunk each (httpcore's reader held it twice)."""
    import gc
    import tracemalloc

    size, count = 48 * 1024, 20
    server = await asyncio.get_running_loop().create_server(
        lambda: OneChunkThenWait(size), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    waiting: list[asyncio.Task[bytes]] = []
    try:
        async with httpx.AsyncClient(transport=exclusive_transport(keep=0)) as client:
            async with contextlib.AsyncExitStack() as streams:
                tracemalloc.start()
                before = tracemalloc.get_traced_memory()[0]
                for _ in range(count):
                    response = await streams.enter_async_context(
                        client.stream("GET", f"http://127.0.0.1:{port}/events"))
                    chunks = response.aiter_raw()
                    received = 0
                    while received < size:
                        received += len(await chunks.__anext__())
                    waiting.append(asyncio.ensure_future(chunks.__anext__()))
                await asyncio.sleep(0.1)
                gc.collect()
                per_stream = (tracemalloc.get_traced_memory()[0] - before) / count
                tracemalloc.stop()
                assert not any(task.done() for task in waiting)
                assert per_stream < size / 2, per_stream
                for task in waiting:
                    task.cancel()
                await asyncio.gather(*waiting, return_exceptions=True)
    finally:
        server.close()
        await server.wait_closed()


class CloseAtOnce(asyncio.Protocol):
    """An HTTP server that closes each connection as soon as a request arrives."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.transport.close()


async def test_a_server_that_closes_without_answering_is_a_typed_protocol_error() -> None:
    server = await asyncio.get_running_loop().create_server(CloseAtOnce, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient(transport=exclusive_transport()) as client:
            with contextlib.suppress(httpx.RemoteProtocolError):
                await client.get(f"http://127.0.0.1:{port}/")
                raise AssertionError("the request did not fail")
    finally:
        server.close()
        await server.wait_closed()


class Answer(asyncio.Protocol):
    """An HTTP server answering every request on a connection with ``status`` and a body
    of ``size`` bytes."""

    def __init__(self, status: int = 200, size: int = 2) -> None:
        self.status, self.size = status, size
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        for _ in range(data.count(b"\r\n\r\n")):
            self.transport.write(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n"
                                 % (self.status, self.size) + b"x" * self.size)


@contextlib.asynccontextmanager
async def serving(factory: Callable[[], asyncio.Protocol]) -> AsyncIterator[str]:
    server = await asyncio.get_running_loop().create_server(factory, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    finally:
        server.close()
        await server.wait_closed()


async def test_a_request_cancelled_as_its_connection_opens_is_cancelled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cancellation of a request whose connection was made in the same moment reaches it
    (`asyncio.wait_for` before 3.12 returned the connection and dropped the cancellation: a
    driver closing a conversation then waited forever for its event reader, which went on
    to read a stream with nothing more to say)."""
    loop = asyncio.get_running_loop()
    connect = loop.create_connection
    requester: list[asyncio.Task[Any]] = []

    async def connect_then_cancel_the_requester(*args: Any, **kwargs: Any) -> Any:
        made = await connect(*args, **kwargs)
        requester[0].cancel()  # while the connection is handed over
        return made

    async with serving(lambda: Answer(size=100_000)) as url:
        async with httpx.AsyncClient(transport=exclusive_transport()) as client:
            monkeypatch.setattr(loop, "create_connection", connect_then_cancel_the_requester)
            requester.append(asyncio.ensure_future(client.get(url, timeout=5)))
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(requester[0], 5)
            monkeypatch.undo()
            assert (await client.get(url, timeout=5)).status_code == 200


async def test_a_response_left_unread_or_cancelled_mid_body_is_not_reused() -> None:
    """An error answer closed with its body unread, and a read cancelled mid-body, close
    their connections; the next requests on the transport get whole answers."""
    async with serving(lambda: Answer(status=500, size=300_000)) as url:
        transport = exclusive_transport(keep=4)
        async with httpx.AsyncClient(transport=transport) as client:
            async with client.stream("GET", url) as response:
                assert response.status_code == 500  # its body is never read
            assert "0 idle" in repr(transport)
            async with client.stream("GET", url) as response:
                read = asyncio.ensure_future(response.aread())
                await asyncio.sleep(0)
                read.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await read
            assert "0 idle" in repr(transport)
            answers = await asyncio.gather(*(client.get(url) for _ in range(3)))
            assert [len(a.content) for a in answers] == [300_000] * 3
            assert "3 idle" in repr(transport)
