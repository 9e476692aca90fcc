"""`AsyncAgentsClient`: the async form of `AgentsClient` (same methods and options, awaited)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge.http import AsyncSender, Network, Secret

from ._client_common import (
    ClientConfig,
    EventDeduper,
    Tools,
    events_of,
    message_event,
)
from ._saved_agents import AsyncSavedAgents
from ._streams import AsyncEventStream, follow

__all__ = ["AsyncAgentsClient"]


class AsyncAgentsClient(AsyncSavedAgents):
    """Async client; same methods and options as `AgentsClient`, awaited."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None,
                 api_key: str | Secret | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = ClientConfig(api_key=api_key, **options)
        self._owns = http_client is None
        # Direct: a connection per request in flight (httpcore's pool makes concurrent
        # requests of many sessions race for one); event streams keep none idle.
        self._http = http_client or network.async_client(self.config.timeout, keep=64)
        self._streams = http_client or network.async_client(self.config.timeout, keep=0)
        self._sender = AsyncSender(self.config, self._http, self._streams)

    async def retrieve_session(self, session_id: str) -> dict[str, Any]:
        return await self._sender.send(self._retrieve_session(session_id))

    async def create_session(self, tools: Tools = (), *, input: Any = None,
                             environment: Mapping[str, Any] | None = None,
                             agent: Mapping[str, Any] | None = None, model: str | None = None,
                             instructions: str | None = None,
                             metadata: Mapping[str, str] | None = None,
                             agent_id: str | None = None) -> dict[str, Any]:
        return await self._sender.send(self._create_session(
            tools, input, environment, agent, model, instructions, metadata, agent_id))

    async def create_session_stream(
        self, tools: Tools = (), *, input: Any, environment: Mapping[str, Any] | None = None,
        agent: Mapping[str, Any] | None = None, model: str | None = None,
        instructions: str | None = None, metadata: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> AsyncEventStream:
        return AsyncEventStream(await self._sender.open(self._create_session_stream(
            tools, input, environment, agent, model, instructions, metadata, idempotency_key)),
            EventDeduper())

    async def update_tools(self, session_id: str, tools: Tools) -> dict[str, Any]:
        return await self._sender.send(self._update_tools(session_id, tools))

    async def send_events(self, session_id: str, events: Sequence[Mapping[str, Any]], *,
                          idempotency_key: str | None = None) -> None:
        await self._sender.send(self._send_events(session_id, events, idempotency_key))

    async def submit_results(self, session_id: str,
                             body: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> None:
        """Send each ``tool_result`` on its own request, concurrently."""
        await asyncio.gather(*(self.send_events(session_id, [e]) for e in events_of(body)))

    async def send_message(self, session_id: str, message: str | Sequence[Mapping[str, Any]],
                           *, idempotency_key: str | None = None) -> None:
        await self.send_events(session_id, [message_event(message)],
                               idempotency_key=idempotency_key)

    async def cancel(self, session_id: str) -> None:
        await self.send_events(session_id, [{"type": "agent.session.input.cancel"}])

    async def list_sessions(self, *, metadata: Mapping[str, str] | None = None,
                            after: str | None = None, limit: int = 20, order: str = "desc"
                            ) -> dict[str, Any]:
        return await self._sender.send(self._list_sessions(metadata, after, limit, order))

    async def list_items(self, session_id: str, *, after: str | None = None, limit: int = 20,
                         order: str = "desc") -> dict[str, Any]:
        return await self._sender.send(self._list_items(session_id, after, limit, order))

    async def stream_events(self, session_id: str, *, deduper: EventDeduper | None = None
                            ) -> AsyncEventStream:
        return AsyncEventStream(await self._sender.open(self._stream_events(session_id)),
                                deduper or EventDeduper())

    def follow_session(self, session_id: str) -> AsyncGenerator[dict[str, Any], None]:
        """See `AgentsClient.follow_session`; close it with ``contextlib.aclosing``."""
        return self._sender.iterate(follow(self, session_id))

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()
            await self._streams.aclose()

    async def __aenter__(self) -> AsyncAgentsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
