"""`exclusive_transport`: an httpx transport that gives each request a connection of its own.

httpx's default pool (httpcore's) can hand the same idle HTTP/1.1 connection to several queued
requests at once; all but one find it taken and go round again, and when many requests are
queued together (a worker submitting for many conversations) one can go round dozens of
times: tens to hundreds of milliseconds before it is even written (encode/httpcore#1110;
pydantic/httpx2#974 keeps the behaviour). Here every connection is a one-connection httpx
transport: a request takes an idle one (or a new one) and gives it back when its response is
closed, so no two requests ever race for one connection. httpx is imported when the first
transport is built, not with this module.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

__all__ = ["exclusive_transport"]


def exclusive_transport(*, keep: int = 64, keepalive_expiry: float = 5.0,
                        **options: Any) -> httpx.AsyncBaseTransport:
    """A transport for ``httpx.AsyncClient(transport=...)``: one connection per request in
    flight, at most ``keep`` idle ones kept for reuse (``keep=0`` for event streams, whose
    connection is not reused).

    ``options`` go to each connection's `httpx.AsyncHTTPTransport` (``verify``, ``http1``,
    ``local_address``, ...); TLS settings are built once and shared by all of them.
    """
    transport: httpx.AsyncBaseTransport = _classes()[0](keep, keepalive_expiry, options)
    return transport


@functools.cache
def _classes() -> tuple[type[Any], type[Any]]:
    import httpx

    class Exclusive(httpx.AsyncBaseTransport):
        def __init__(self, keep: int, keepalive_expiry: float, options: dict[str, Any]) -> None:
            verify = options.pop("verify", True)
            if not isinstance(verify, ssl.SSLContext):
                verify = httpx.create_ssl_context(verify=verify)  # once, not per connection
            self._options = {**options, "verify": verify, "limits": httpx.Limits(
                max_connections=1, max_keepalive_connections=1,
                keepalive_expiry=keepalive_expiry)}
            self.keep = keep
            self._idle: list[httpx.AsyncHTTPTransport] = []
            self._closed = False

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            connection = (self._idle.pop() if self._idle
                          else httpx.AsyncHTTPTransport(**self._options))
            try:
                response = await connection.handle_async_request(request)
            except BaseException:
                await connection.aclose()
                raise
            return httpx.Response(response.status_code, headers=response.headers,
                                  stream=Releasing(response.stream, connection, self),
                                  extensions=response.extensions)

        async def release(self, connection: httpx.AsyncHTTPTransport) -> None:
            if self._closed or len(self._idle) >= self.keep:
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

    class Releasing(httpx.AsyncByteStream):
        """A response body that gives its connection back when it is closed."""

        def __init__(self, stream: Any, connection: httpx.AsyncHTTPTransport,
                     pool: Exclusive) -> None:
            self._stream = stream
            self._connection: httpx.AsyncHTTPTransport | None = connection
            self._pool = pool

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._stream:
                yield chunk

        async def aclose(self) -> None:
            try:
                await self._stream.aclose()
            finally:
                connection, self._connection = self._connection, None
                if connection is not None:
                    await self._pool.release(connection)

    return Exclusive, Releasing
