"""An httpcore network backend on plain asyncio (a protocol and a buffer per connection).

httpcore's default async backend goes through anyio: a socket stream with its guards, events
and queues per connection, and several layers per read. A worker holding one event stream per
conversation pays that for each of them; this backend keeps a connection to a transport, a
byte buffer and one waiting future, and reads and writes without extra layers. Reads pause
while ``READ_LIMIT`` bytes wait unread (a slow consumer slows the sender through TCP, not
memory) and resume once the reader drained half of them. Imported on first use only
(through `exclusive_transport`): it imports httpcore.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import httpcore

__all__ = ["READ_LIMIT", "network_backend"]

READ_LIMIT = 256 * 1024
"""Unread bytes a connection buffers before it stops reading from its socket."""

T = TypeVar("T")


def network_backend() -> httpcore.AsyncNetworkBackend:
    """The backend (one, shared: it holds no state of its own)."""
    return _BACKEND


class Protocol(asyncio.Protocol):
    """Buffers what arrives (pausing reads past ``READ_LIMIT``); wakes the one reader or
    writer waiting."""

    __slots__ = ("buffer", "eof", "error", "paused", "reader", "reading", "transport", "writer")

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.paused = False
        self.reading = True
        self.reader: asyncio.Future[None] | None = None
        self.writer: asyncio.Future[None] | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.reading and len(self.buffer) >= READ_LIMIT and self.transport is not None:
            self.reading = False
            self.transport.pause_reading()
        self._wake("reader")

    def taken(self) -> None:
        """The reader took from the buffer: read the socket again once half is drained."""
        if not self.reading and len(self.buffer) < READ_LIMIT // 2 and (
                self.transport is not None and not self.transport.is_closing()):
            self.reading = True
            self.transport.resume_reading()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake("reader")
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self.eof = True
        self.error = exc
        self._wake("reader")
        self._wake("writer")

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake("writer")

    def _wake(self, which: str) -> None:
        waiter = getattr(self, which)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

async def _wait(protocol: Protocol, which: str, timeout: float | None,
                expired: type[Exception]) -> None:
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()
    setattr(protocol, which, waiter)

    def expire() -> None:
        if not waiter.done():
            waiter.set_exception(expired("timed out"))

    timer = None if timeout is None else loop.call_later(timeout, expire)
    try:
        await waiter
    finally:
        setattr(protocol, which, None)
        if timer is not None:
            timer.cancel()


async def _within(work: Coroutine[Any, Any, T], timeout: float | None,
                  expired: Callable[[], Exception]) -> T:
    """``work``'s result, or ``expired()`` past ``timeout`` seconds (``work`` cancelled).

    Not `asyncio.wait_for`: before Python 3.12 it returns the result of work that finished
    as the caller was cancelled, and the caller's cancellation is lost (a task stopped while
    it connects goes on, then waits on what it connected: a driver closing a conversation
    waited forever for its event reader). `asyncio.wait` lets the cancellation through."""
    if timeout is None:
        return await work
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if not done:
        raise expired()
    return task.result()


class Stream(httpcore.AsyncNetworkStream):
    __slots__ = ("protocol",)

    def __init__(self, protocol: Protocol) -> None:
        self.protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self.protocol
        while not protocol.buffer and not protocol.eof:
            await _wait(protocol, "reader", timeout, httpcore.ReadTimeout)
        if not protocol.buffer:
            if protocol.error is not None:
                raise httpcore.ReadError(str(protocol.error))
            return b""
        data = bytes(protocol.buffer[:max_bytes])
        del protocol.buffer[:max_bytes]
        protocol.taken()
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        protocol = self.protocol
        transport = protocol.transport
        if transport is None or transport.is_closing():
            raise httpcore.WriteError(str(protocol.error or "the connection is closed"))
        transport.write(buffer)
        while protocol.paused and not transport.is_closing():
            await _wait(protocol, "writer", timeout, httpcore.WriteTimeout)

    async def aclose(self) -> None:
        if self.protocol.transport is not None:
            self.protocol.transport.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        protocol = self.protocol
        assert protocol.transport is not None
        loop = asyncio.get_running_loop()
        try:
            upgraded = await _within(loop.start_tls(
                protocol.transport, protocol, ssl_context, server_hostname=server_hostname),
                timeout, lambda: httpcore.ConnectTimeout("TLS handshake timed out"))
        except (OSError, ssl.SSLError) as exc:
            raise httpcore.ConnectError(str(exc)) from exc  # the cause: an untrusted cert?
        if upgraded is None:
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        assert isinstance(upgraded, asyncio.Transport)
        protocol.transport = upgraded
        return self

    def get_extra_info(self, info: str) -> Any:
        protocol = self.protocol
        if info == "is_readable":  # an idle connection the server closed, or that spoke
            return protocol.eof or bool(protocol.buffer)
        transport = protocol.transport
        if transport is None:
            return None
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        return transport.get_extra_info(info)  # "ssl_object", "socket"

class Backend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        protocol = Protocol()
        try:
            await _within(loop.create_connection(
                lambda: protocol, host, port,
                local_addr=(local_address, 0) if local_address else None), timeout,
                lambda: httpcore.ConnectTimeout(f"connecting to {host}:{port} timed out"))
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from None
        except BaseException:  # cancelled: a connection made meanwhile is not kept
            if protocol.transport is not None:
                protocol.transport.close()
            raise
        sock = protocol.transport.get_extra_info("socket") if protocol.transport else None
        for option in socket_options or ():
            if sock is not None:
                sock.setsockopt(*option)
        return Stream(protocol)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None
                                  ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        protocol = Protocol()
        try:
            await _within(loop.create_unix_connection(lambda: protocol, path), timeout,
                          lambda: httpcore.ConnectTimeout(f"connecting to {path} timed out"))
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from None
        except BaseException:  # cancelled: a connection made meanwhile is not kept
            if protocol.transport is not None:
                protocol.transport.close()
            raise
        return Stream(protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

_BACKEND = Backend()
