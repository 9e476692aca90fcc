"""HTTP clients for Chat Completions on any OpenAI-compatible server (httpx): `ChatClient`
(sync) and `AsyncChatClient`.

OpenAI, vLLM, Ollama, LiteLLM: ``base_url`` (``.../v1``) and ``api_key``. Azure OpenAI:
``azure_endpoint`` + ``deployment`` + ``api_version`` (``/openai/deployments/{name}/chat/
completions?api-version=...``, ``api-key`` or an Entra ``token_provider``), or its v1 form as
a plain ``base_url`` (``https://RES.openai.azure.com/openai/v1``). Chat is stateless: a
dropped stream is sent again (the model runs again; nothing was answered yet), bounded by
``retry.max_attempts``. Both clients send the calls of `ChatCalls`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from toolbridge.http import AsyncSender, Network, Sender

from ._calls import ChatCalls, ChatConfig, OnChunk, chunks_reader

__all__ = ["AsyncChatClient", "ChatClient", "ChatConfig"]


class ChatClient(ChatCalls):
    """Blocking client; options as `ChatConfig`, network settings as `toolbridge.http.Network`
    (``proxy``, ``verify``, ``cert``, ``http2``, ``trust_env``), or a caller's own
    ``http_client``."""

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = ChatConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.client(self.config.timeout)
        self._sender = Sender(self.config, self._http)

    def create(self, **body: Any) -> dict[str, Any]:
        """``POST /chat/completions``: ``model``, ``messages``, ``tools``, ... as keywords."""
        return self._sender.send(self._create(body))

    def stream(self, **body: Any) -> Iterator[dict[str, Any]]:
        """``stream: true``: the chunks as they arrive (a drop ends them early, silently)."""
        return self._sender.events(self._stream(body), chunks_reader())

    def stream_completion(self, *, on_chunk: OnChunk = None, **body: Any) -> dict[str, Any]:
        """Stream and assemble one completion; a stream that drops before every choice has
        its ``finish_reason`` is sent again (``retry.max_attempts`` in all)."""
        return self._sender.run(self._stream_completion(on_chunk, body))

    def close(self) -> None:
        if self._owns:
            self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncChatClient(ChatCalls):
    """Async form of `ChatClient` (same methods, awaited; `stream` is an async iterator)."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = ChatConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.async_client(self.config.timeout)
        self._sender = AsyncSender(self.config, self._http)

    async def create(self, **body: Any) -> dict[str, Any]:
        """``POST /chat/completions``."""
        return await self._sender.send(self._create(body))

    def stream(self, **body: Any) -> AsyncIterator[dict[str, Any]]:
        """``stream: true``: the chunks as they arrive."""
        return self._sender.events(self._stream(body), chunks_reader())

    async def stream_completion(self, *, on_chunk: OnChunk = None, **body: Any
                                ) -> dict[str, Any]:
        """See `ChatClient.stream_completion`."""
        return await self._sender.run(self._stream_completion(on_chunk, body))

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
