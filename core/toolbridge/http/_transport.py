"""`exclusive_transport`: an httpx transport that gives each request a connection of its own.

httpx's default pool (httpcore's) can hand the same idle HTTP/1.1 connection to several queued
requests at once; all but one find it taken and go round again, and when many requests are
queued together (a worker submitting for many conversations) one can go round dozens of
times: tens to hundreds of milliseconds before it is even written (encode/httpcore#1110;
pydantic/httpx2#974 keeps the behaviour). It also walks every connection for every request,
twice. Here a request takes an idle connection (the newest) or opens one, and gives it back
when its response is closed: no two requests ever race for one connection, and a worker
holding a thousand event streams pays nothing per request for them. Connections are
httpcore's own (HTTP/1.1, TLS), on a plain-asyncio network backend (`_network`). This module
imports httpx and httpcore: `toolbridge.http` imports it on first use only.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from typing import Protocol, cast

import httpcore
import httpx

from ._network import network_backend
from ._tls import tls_context

__all__ = ["exclusive_transport"]

_CORE_ERRORS = (httpcore.UnsupportedProtocol, httpcore.TimeoutException,
                httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError)


class _CoreBody(Protocol):
    """What httpcore's connection gives as a response's stream."""

    def __aiter__(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


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
        self._idle: list[httpcore.AsyncHTTPConnection] = []
        self._closed = False

    async def _connection(self, origin: httpcore.Origin) -> httpcore.AsyncHTTPConnection:
        while self._idle:
            connection = self._idle.pop()
            if (connection.can_handle_request(origin) and connection.is_idle()
                    and not connection.has_expired()):
                return connection
            await connection.aclose()  # expired, or closed by the server
        return httpcore.AsyncHTTPConnection(
            origin, ssl_context=self._ssl, keepalive_expiry=self.keepalive_expiry,
            network_backend=network_backend())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = url.port or (443 if url.raw_scheme == b"https" else 80)
        origin = httpcore.Origin(url.raw_scheme, url.raw_host, port)
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=port,
                             target=url.raw_path),
            headers=request.headers.raw, content=request.stream,
            extensions=request.extensions)
        connection = await self._connection(origin)
        try:
            response = await connection.handle_async_request(core)
        except _CORE_ERRORS as exc:
            await connection.aclose()
            raise _mapped(exc, request) from exc
        except BaseException:
            await connection.aclose()
            raise
        return httpx.Response(response.status, headers=response.headers,
                              stream=_Body(cast(_CoreBody, response.stream), connection, self,
                                           request),
                              extensions=response.extensions)

    async def release(self, connection: httpcore.AsyncHTTPConnection) -> None:
        if self._closed or len(self._idle) >= self.keep or not connection.is_idle():
            await connection.aclose()
        else:
            self._idle.append(connection)

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.aclose()

    def __repr__(self) -> str:
        return f"<exclusive transport: {len(self._idle)} idle>"


class _Body(httpx.AsyncByteStream):
    """A response body that gives its connection back when it is closed."""

    __slots__ = ("_connection", "_pool", "_request", "_stream")

    def __init__(self, stream: _CoreBody, connection: httpcore.AsyncHTTPConnection,
                 pool: ExclusiveTransport, request: httpx.Request) -> None:
        self._stream = stream
        self._connection: httpcore.AsyncHTTPConnection | None = connection
        self._pool = pool
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._stream:
                yield chunk
        except _CORE_ERRORS as exc:
            raise _mapped(exc, self._request) from exc

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        except _CORE_ERRORS as exc:
            raise _mapped(exc, self._request) from exc
        finally:
            connection, self._connection = self._connection, None
            if connection is not None:
                await self._pool.release(connection)
