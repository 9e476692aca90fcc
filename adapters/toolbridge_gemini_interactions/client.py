"""HTTP clients of the Gemini Interactions API (httpx): `InteractionsClient` (sync) and
`AsyncInteractionsClient`, both sending the calls of `InteractionCalls`.

``base_url`` (default ``https://generativelanguage.googleapis.com``) and ``api_key`` (default
``$GOOGLE_API_KEY``, then ``$GEMINI_API_KEY``); ``key_in_query=True`` sends it as ``?key=``.
A create is never sent again once it may have arrived (it is not idempotent).
"""

from __future__ import annotations

from typing import Any

import httpx

from toolbridge.http import AsyncSender, Network, Sender

from ._calls import InteractionCalls, InteractionsConfig, StreamGatherer

__all__ = ["AsyncInteractionsClient", "InteractionsClient", "InteractionsConfig",
           "StreamGatherer"]


class InteractionsClient(InteractionCalls):
    """Blocking client; options as `InteractionsConfig`, network settings as
    `toolbridge.http.Network`, or a caller's own ``http_client``."""

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = InteractionsConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.client(self.config.timeout)
        self._sender = Sender(self.config, self._http)

    def create(self, **body: Any) -> dict[str, Any]:
        """``POST /v1/interactions``: ``model``, ``input``, ``tools``,
        ``previous_interaction_id``, ... as keywords."""
        return self._sender.send(self._create(body))

    def get(self, interaction_id: str) -> dict[str, Any]:
        """``GET /v1/interactions/{id}``."""
        return self._sender.send(self._get(interaction_id))

    def cancel(self, interaction_id: str) -> dict[str, Any]:
        """``POST /v1/interactions/{id}/cancel`` (a background interaction)."""
        return self._sender.send(self._cancel(interaction_id))

    def stream_interaction(self, **body: Any) -> dict[str, Any]:
        """``stream: true``, gathered into the interaction (read back after a drop)."""
        return self._sender.run(self._stream_interaction(body))

    def close(self) -> None:
        if self._owns:
            self._http.close()

    def __enter__(self) -> InteractionsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncInteractionsClient(InteractionCalls):
    """Async form of `InteractionsClient` (same methods, awaited)."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None,
                 **options: Any) -> None:
        network = Network.take(options)
        self.config = InteractionsConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.async_client(self.config.timeout)
        self._sender = AsyncSender(self.config, self._http)

    async def create(self, **body: Any) -> dict[str, Any]:
        """``POST /v1/interactions``."""
        return await self._sender.send(self._create(body))

    async def get(self, interaction_id: str) -> dict[str, Any]:
        """``GET /v1/interactions/{id}``."""
        return await self._sender.send(self._get(interaction_id))

    async def cancel(self, interaction_id: str) -> dict[str, Any]:
        """``POST /v1/interactions/{id}/cancel``."""
        return await self._sender.send(self._cancel(interaction_id))

    async def stream_interaction(self, **body: Any) -> dict[str, Any]:
        """See `InteractionsClient.stream_interaction`."""
        return await self._sender.run(self._stream_interaction(body))

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncInteractionsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
