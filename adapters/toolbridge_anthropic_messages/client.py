"""HTTP clients for the Messages API (httpx): `MessagesClient` (sync) and
`AsyncMessagesClient`.

Messages is stateless: a dropped stream is sent again (the model runs again; nothing was
answered yet), bounded by ``retry.max_attempts``. Both clients send the calls of
`MessagesCalls`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from toolbridge.http import AsyncSender, Network, Sender

from ._calls import MessagesCalls, MessagesConfig, OnEvent
from .stream import MessageEvents

__all__ = ["AsyncMessagesClient", "MessagesClient", "MessagesConfig"]


class MessagesClient(MessagesCalls):
    """Blocking client; options as `MessagesConfig`, network settings as
    `toolbridge.http.Network` (``proxy``, ``verify``, ``cert``, ``http2``, ``trust_env``), or
    a caller's own ``http_client``."""

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = MessagesConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.client(self.config.timeout)
        self._sender = Sender(self.config, self._http)

    def create(self, **body: Any) -> dict[str, Any]:
        """``POST /v1/messages``: ``model``, ``max_tokens``, ``messages``, ``tools``, ..."""
        return self._sender.send(self._create(body))

    def stream(self, **body: Any) -> Iterator[dict[str, Any]]:
        """``stream: true``: the events as they arrive (a drop ends them early, silently)."""
        return self._sender.events(self._stream(body), MessageEvents())

    def stream_message(self, *, on_event: OnEvent = None, **body: Any) -> dict[str, Any]:
        """Stream and assemble one message; a stream that drops before ``message_stop`` is
        sent again (``retry.max_attempts`` in all)."""
        return self._sender.run(self._stream_message(on_event, body))

    def close(self) -> None:
        if self._owns:
            self._http.close()

    def __enter__(self) -> MessagesClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMessagesClient(MessagesCalls):
    """Async form of `MessagesClient` (same methods, awaited; `stream` is an async
    iterator)."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = MessagesConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.async_client(self.config.timeout)
        self._sender = AsyncSender(self.config, self._http)

    async def create(self, **body: Any) -> dict[str, Any]:
        """``POST /v1/messages``."""
        return await self._sender.send(self._create(body))

    def stream(self, **body: Any) -> AsyncIterator[dict[str, Any]]:
        """``stream: true``: the events as they arrive."""
        return self._sender.events(self._stream(body), MessageEvents())

    async def stream_message(self, *, on_event: OnEvent = None, **body: Any
                             ) -> dict[str, Any]:
        """See `MessagesClient.stream_message`."""
        return await self._sender.run(self._stream_message(on_event, body))

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncMessagesClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
