"""HTTP clients for the Gemini API's ``generateContent`` (httpx): `GeminiClient` (sync) and
`AsyncGeminiClient`.

``base_url`` (default ``https://generativelanguage.googleapis.com``), ``api_key`` (default
``$GEMINI_API_KEY``, then ``$GOOGLE_API_KEY``), sent as ``x-goog-api-key``. The API keeps no
conversation: a dropped stream is sent again (the model runs again; nothing was answered
yet), bounded by ``retry.max_attempts``. Both clients send the calls of `GeminiCalls`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from toolbridge.http import AsyncSender, Network, Sender

from ._calls import GeminiCalls, GeminiConfig, OnChunk, chunks_reader

__all__ = ["AsyncGeminiClient", "GeminiClient", "GeminiConfig"]


class GeminiClient(GeminiCalls):
    """Blocking client; options as `GeminiConfig`, network settings as
    `toolbridge.http.Network`, or a caller's own ``http_client``."""

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = GeminiConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.client(self.config.timeout)
        self._sender = Sender(self.config, self._http)

    def generate(self, model: str, **body: Any) -> dict[str, Any]:
        """``POST models/{model}:generateContent``: ``contents``, ``tools``, ... as keywords."""
        return self._sender.send(self._generate(model, body))

    def stream(self, model: str, **body: Any) -> Iterator[dict[str, Any]]:
        """``streamGenerateContent?alt=sse``: the chunks as they arrive."""
        return self._sender.events(self._stream(model, body), chunks_reader())

    def stream_response(self, model: str, *, on_chunk: OnChunk = None, **body: Any
                        ) -> dict[str, Any]:
        """Stream and assemble one response; a stream that drops before its
        ``finishReason`` is sent again (``retry.max_attempts`` in all)."""
        return self._sender.run(self._stream_response(model, on_chunk, body))

    def close(self) -> None:
        if self._owns:
            self._http.close()

    def __enter__(self) -> GeminiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncGeminiClient(GeminiCalls):
    """Async form of `GeminiClient` (same methods, awaited; `stream` is an async iterator)."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = GeminiConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.async_client(self.config.timeout)
        self._sender = AsyncSender(self.config, self._http)

    async def generate(self, model: str, **body: Any) -> dict[str, Any]:
        """``POST models/{model}:generateContent``."""
        return await self._sender.send(self._generate(model, body))

    def stream(self, model: str, **body: Any) -> AsyncIterator[dict[str, Any]]:
        """``streamGenerateContent?alt=sse``: the chunks as they arrive."""
        return self._sender.events(self._stream(model, body), chunks_reader())

    async def stream_response(self, model: str, *, on_chunk: OnChunk = None, **body: Any
                              ) -> dict[str, Any]:
        """See `GeminiClient.stream_response`."""
        return await self._sender.run(self._stream_response(model, on_chunk, body))

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncGeminiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
