"""`AsyncResponsesClient`: the async form of `ResponsesClient` (same methods, awaited)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge.http import AsyncSender, Network

from ._config import ClientConfig
from ._requests import OnEvent, Requests, events_reader

__all__ = ["AsyncResponsesClient"]


class AsyncResponsesClient(Requests):
    """Async client; see `ResponsesClient` for the options and the recovery rules. An async
    ``credential`` (``azure.identity.aio``) or awaitable ``token_provider`` works here."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = ClientConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.async_client(self.config.timeout)
        self._sender = AsyncSender(self.config, self._http)

    # ------------------------------------------------------------------ responses
    async def create(self, **body: Any) -> dict[str, Any]:
        """``POST /responses``."""
        return await self._sender.send(self._create(body))

    async def retrieve(self, response_id: str) -> dict[str, Any]:
        """``GET /responses/{id}``."""
        return await self._sender.send(self._retrieve(response_id))

    async def poll(self, response_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        """Read the response until it is no longer ``queued`` or ``in_progress``."""
        return await self._sender.run(self._poll(response_id, timeout))

    async def cancel(self, response_id: str) -> dict[str, Any]:
        """``POST /responses/{id}/cancel``."""
        return await self._sender.send(self._cancel(response_id))

    def events(self, request: httpx.Request, *, idempotent: bool
               ) -> AsyncIterator[dict[str, Any]]:
        """The decoded events of one stream request; ends quietly when the stream drops."""
        return self._sender.events(self._given(request, idempotent), events_reader(), request)

    def stream(self, **body: Any) -> AsyncIterator[dict[str, Any]]:
        """``POST /responses`` with ``stream: true``: its events."""
        return self._sender.events(self._stream(body), events_reader())

    def attach(self, response_id: str, *, starting_after: int | None = None
               ) -> AsyncIterator[dict[str, Any]]:
        """Re-attach to a background response's stream after sequence number N."""
        return self._sender.events(self._attach(response_id, starting_after), events_reader())

    async def stream_response(self, *, on_event: OnEvent = None, **body: Any
                              ) -> dict[str, Any]:
        """See `ResponsesClient.stream_response`."""
        return await self._sender.run(self._stream_response(on_event, body))

    # ------------------------------------------------------------------ conversations
    async def create_conversation(self, items: Sequence[Mapping[str, Any]] = (), *,
                                  metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``POST /conversations``; more than 20 items are added in further requests."""
        return await self._sender.run(self._create_conversation(items, metadata))

    async def retrieve_conversation(self, conversation_id: str) -> dict[str, Any]:
        """``GET /conversations/{id}``."""
        return await self._sender.send(self._retrieve_conversation(conversation_id))

    async def delete_conversation(self, conversation_id: str) -> None:
        """``DELETE /conversations/{id}``."""
        await self._sender.send(self._delete_conversation(conversation_id))

    async def add_items(self, conversation_id: str, items: Sequence[Mapping[str, Any]]
                        ) -> list[dict[str, Any]]:
        """``POST /conversations/{id}/items`` (20 per request): the items as stored."""
        return await self._sender.run(self._add_items(conversation_id, items))

    async def list_items(self, conversation_id: str, *, after: str | None = None,
                         limit: int = 20, order: str = "asc") -> dict[str, Any]:
        """One page of ``GET /conversations/{id}/items``."""
        return await self._sender.send(self._list_items(conversation_id, after, limit, order))

    async def all_items(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every item of the conversation, oldest first (all pages)."""
        return await self._sender.run(self._all_items(conversation_id))

    # ------------------------------------------------------------------ Foundry agents
    async def create_agent_version(self, name: str, *, definition: Mapping[str, Any],
                                   **fields: Any) -> dict[str, Any]:
        """``POST {project}/agents/{name}/versions?api-version=v1``."""
        return await self._sender.send(self._create_agent_version(name, definition, fields))

    async def list_agent_versions(self, name: str) -> list[dict[str, Any]]:
        """``GET {project}/agents/{name}/versions``: every version, oldest first."""
        return await self._sender.run(self._list_agent_versions(name))

    async def list_deployments(self) -> dict[str, str]:
        """``GET {project}/deployments?api-version=v1``: each model deployment's name and
        the model it serves (``modelName``), following ``nextLink`` pages."""
        return await self._sender.run(self._list_deployments())

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncResponsesClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
