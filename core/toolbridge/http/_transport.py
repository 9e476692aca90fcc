"""`exclusive_transport`: an httpx transport that gives each request a connection of its own.

httpx's default pool (httpcore's) can hand the same idle HTTP/1.1 connection to several queued
requests at once; all but one find it taken and go round again, and when many requests are
queued together (a worker submitting for many conversations) one can go round dozens of
times: tens to hundreds of milliseconds before it is even written (encode/httpcore#1110;
pydantic/httpx2#974 keeps the behaviour). It also walks every connection for every request,
twice. Here a request takes an idle connection (the newest) or opens one, and gives it back
when its response is closed: no two requests ever race for one connection, and a worker
holding a thousand event streams pays nothing per request for them. Connections are h11's
state on a plain-asyncio network backend (`_h1`, `_network`: HTTP/1.1, TLS), their bodies
read without keeping the last chunk. This module imports httpx, httpcore (for its network
backend's types and errors) and h11: `toolbridge.http` imports it on first use only.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator

import httpcore
import httpx

from ._h1 import Connection, Origin, ResponseHead
from ._tls import tls_context

__all__ = ["exclusive_transport"]

_CORE_ERRORS = (httpcore.UnsupportedProtocol, httpcore.TimeoutException,
                httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError)


def exclusive_transport(*, keep: int = 64, keepalive_expiry: float = 5.0,
                        verify: ssl.SSLContext | bool | str = True) -> httpx.AsyncBaseTransport:
    """A transport for ``httpx.AsyncClient(transport=...)``: one connection per request in
    flight, at most ``keep`` idle ones kept for reuse (``keep=0`` for event streams, whose
    connection is not reused); ``verify`` an `ssl.SSLContext`, or as `Network` takes it."""
    return ExclusiveTransport(keep, keepalive_expiry, verify)


def _mapped(exc: Exception, request: httpx.Request) -> Exception:
    """httpcore's error as httpx's (same names), as httpx's own transport maps them (a plain
    ``try``, not a context manager: a suspended read keeps no extra frame)."""
    kind = getattr(httpx, type(exc).__name__, httpx.TransportError)
    error: Exception = kind(str(exc), request=request)
    return error


class ExclusiveTransport(httpx.AsyncBaseTransport):
    """See the module: a connection per request in flight, idle ones kept newest first."""

    def __init__(self, keep: int, keepalive_expiry: float,
                 verify: ssl.SSLContext | bool | str) -> None:
        self._ssl = tls_context(verify)
        self.keep = keep
        self.keepalive_expiry = keepalive_expiry
        self._idle: list[Connection] = []
        self._closed = False

    async def _connection(self, origin: Origin, timeout: float | None) -> Connection:
        while self._idle:
            connection = self._idle.pop()
            if connection.reusable(origin):
                return connection
            await connection.aclose()  # expired, or closed by the server
        return await Connection.open(origin, self._ssl, timeout)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.raw_scheme not in (b"http", b"https"):
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}",
                                            request=request)
        origin = (url.raw_scheme, url.raw_host,
                  url.port or (443 if url.raw_scheme == b"https" else 80))
        timeouts = request.extensions.get("timeout", {})
        connection: Connection | None = None
        try:
            connection = await self._connection(origin, timeouts.get("connect"))
            head = await _exchange(connection, request, timeouts)
        except _CORE_ERRORS as exc:
            failed: Exception = exc
        except BaseException:
            if connection is not None:
                await connection.aclose()
            raise
        else:
            return httpx.Response(
                head.status, headers=head.headers,
                stream=_Body(connection, self, request, timeouts.get("read")),
                extensions={"http_version": head.version, "reason_phrase": head.reason})
        if connection is not None:
            await connection.aclose()
        raise _mapped(failed, request) from failed

    async def release(self, connection: Connection, finished: bool) -> None:
        if (finished and not self._closed and len(self._idle) < self.keep
                and connection.finished(self.keepalive_expiry)):
            self._idle.append(connection)
        else:
            await connection.aclose()

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.aclose()

    def __repr__(self) -> str:
        return f"<exclusive transport: {len(self._idle)} idle>"


async def _exchange(connection: Connection, request: httpx.Request,
                    timeouts: dict[str, float | None]) -> ResponseHead:
    """Send ``request`` on ``connection``; the response's head. A write the server cut short
    still reads its answer (an early error answer), as httpcore does."""
    write = timeouts.get("write")
    try:
        await connection.send_head(request.method.encode("ascii"), request.url.raw_path,
                                   request.headers.raw, write)
        assert isinstance(request.stream, httpx.AsyncByteStream)
        async for part in request.stream:
            if part:
                await connection.send_body(part, write)
        await connection.send_body(b"", write)
    except httpcore.WriteError:
        pass
    return await connection.receive_head(timeouts.get("read"))


class _Body(httpx.AsyncByteStream):
    """A response body read chunk by chunk, none kept between reads; its connection goes back
    to the transport when it is closed (for reuse once read to the end).

    Each chunk is handed on with its last byte apart: httpx's generators above (``aiter_raw``
    and the client's stream binding) keep the last chunk they handed on while the next one is
    awaited, and an event stream waits most of its life; a one-byte ``bytes`` is one of
    Python's shared single-byte objects, so what they keep then costs nothing."""

    __slots__ = ("_connection", "_done", "_pool", "_request", "_tail", "_timeout")

    def __init__(self, connection: Connection, pool: ExclusiveTransport,
                 request: httpx.Request, timeout: float | None) -> None:
        self._connection: Connection | None = connection
        self._pool = pool
        self._request = request
        self._timeout = timeout
        self._done = False
        self._tail: bytes | None = None

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        import h11

        if self._tail is not None:
            tail, self._tail = self._tail, None
            return tail
        connection = self._connection
        if connection is None or self._done:
            raise StopAsyncIteration
        try:
            event = await connection.next_event(self._timeout)
        except _CORE_ERRORS as exc:
            failed: Exception = exc
        else:
            if isinstance(event, h11.Data):
                data = memoryview(event.data)
                if len(data) > 1:
                    self._tail = bytes(data[-1:])
                    return bytes(data[:-1])
                return bytes(data)
            self._done = True  # EndOfMessage
            raise StopAsyncIteration
        await self.aclose()
        raise _mapped(failed, self._request) from failed

    async def aclose(self) -> None:
        self._tail = None
        connection, self._connection = self._connection, None
        if connection is not None:
            await self._pool.release(connection, self._done)
