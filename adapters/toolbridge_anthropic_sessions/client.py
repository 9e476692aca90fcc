"""HTTP clients of Claude Managed Agents sessions (httpx): `SessionsClient` (sync) and
`AsyncSessionsClient`, one set of calls (`_requests.Requests`) sent two ways.

User messages are never re-sent once they may have arrived (``idempotent=False``); results
and confirmations are retried (a retry of one the service took is refused ``400``, which the
serve backend recognises by reading the session's events).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from toolbridge.http import AsyncSender, Network, Secret, Sender, aread_events, read_events

from ._requests import ClientConfig, Requests, Tools, message_event

__all__ = ["AsyncEventStream", "AsyncSessionsClient", "EventStream", "SessionsClient"]


class EventStream:
    """An open event stream (connected): iterate its events; `close` it."""

    def __init__(self, response: httpx.Response, reader: Any) -> None:
        self._response = response
        self._events = read_events(response, reader)

    def __iter__(self) -> EventStream:
        return self

    def __next__(self) -> dict[str, Any]:
        event: dict[str, Any] = next(self._events)
        return event

    def close(self) -> None:
        self._events.close()
        self._response.close()


class AsyncEventStream:
    """An open event stream (connected): iterate its events; `aclose` it."""

    def __init__(self, response: httpx.Response, reader: Any) -> None:
        self._response = response
        self._events = aread_events(response, reader)

    def __aiter__(self) -> AsyncEventStream:
        return self

    async def __anext__(self) -> dict[str, Any]:
        event: dict[str, Any] = await self._events.__anext__()
        return event

    async def aclose(self) -> None:
        await self._events.aclose()
        await self._response.aclose()


class SessionsClient(Requests):
    """Blocking client. Options: ``api_key``, ``base_url``, ``timeout``, ``retry`` (a
    `toolbridge.http.RetryPolicy`), ``headers``, and the network's (`toolbridge.http.Network`:
    ``proxy``, ``verify``, ``cert``, ``http2``, ``trust_env``), or a caller's ``http_client``."""

    def __init__(self, *, http_client: httpx.Client | None = None,
                 api_key: str | Secret | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = ClientConfig(api_key=api_key, **options)
        self._owns = http_client is None
        self._http = http_client or network.client(self.config.timeout)
        self._sender = Sender(self.config, self._http)

    def create_agent(self, name: str, model: str, tools: Tools = (), *,
                     system: str | None = None) -> dict[str, Any]:
        """``POST /v1/agents`` with ``tools`` (a Toolbox, definitions or wire dicts)."""
        return self._sender.send(self._create_agent(name, model, tools, system))

    def create_environment(self, name: str) -> dict[str, Any]:
        """``POST /v1/environments`` (a ``cloud`` environment)."""
        return self._sender.send(self._create_environment(name))

    def create_session(self, agent_id: str, environment_id: str, *,
                       metadata: Mapping[str, str] | None = None,
                       title: str | None = None) -> dict[str, Any]:
        """``POST /v1/sessions``: an idle session of the agent."""
        return self._sender.send(self._create_session(agent_id, environment_id, metadata,
                                                      title))

    def retrieve_session(self, session_id: str) -> dict[str, Any]:
        return self._sender.send(self._retrieve_session(session_id))

    def list_events(self, session_id: str, *, page: str | None = None, limit: int = 20,
                    order: str = "asc") -> dict[str, Any]:
        """One page of events: ``{"data": [...], "next_page": cursor or None}``."""
        return self._sender.send(self._list_events(session_id, page, limit, order))

    def all_events(self, session_id: str) -> list[dict[str, Any]]:
        """Every event of the session, oldest first."""
        return self._sender.run(self._all_events(session_id))

    def send_events(self, session_id: str, events: Sequence[Mapping[str, Any]], *,
                    idempotent: bool = True) -> dict[str, Any]:
        """``POST .../events``: the events as the service recorded them (``data``)."""
        return self._sender.send(self._send_events(session_id, events, idempotent=idempotent))

    def send_message(self, session_id: str, message: str | Sequence[Mapping[str, Any]]
                     ) -> dict[str, Any]:
        """A ``user.message`` (sent once: never retried after it may have arrived)."""
        return self.send_events(session_id, [message_event(message)], idempotent=False)

    def submit_results(self, session_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send a `Toolbox.handle` body (``{"events": [...]}``)."""
        return self.send_events(session_id, list(body.get("events") or []))

    def stream_events(self, session_id: str) -> EventStream:
        """The live event stream (from now on; connected when this returns), until it ends
        or drops."""
        call, reader = self._stream(session_id)
        return EventStream(self._sender.open(call), reader)

    def close(self) -> None:
        if self._owns:
            self._http.close()

    def __enter__(self) -> SessionsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncSessionsClient(Requests):
    """Async client; same methods and options as `SessionsClient`, awaited."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None,
                 api_key: str | Secret | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = ClientConfig(api_key=api_key, **options)
        self._owns = http_client is None
        self._http = http_client or network.async_client(self.config.timeout, keep=64)
        self._streams = http_client or network.async_client(self.config.timeout, keep=0)
        self._sender = AsyncSender(self.config, self._http, self._streams)

    async def create_agent(self, name: str, model: str, tools: Tools = (), *,
                           system: str | None = None) -> dict[str, Any]:
        return await self._sender.send(self._create_agent(name, model, tools, system))

    async def create_environment(self, name: str) -> dict[str, Any]:
        return await self._sender.send(self._create_environment(name))

    async def create_session(self, agent_id: str, environment_id: str, *,
                             metadata: Mapping[str, str] | None = None,
                             title: str | None = None) -> dict[str, Any]:
        return await self._sender.send(self._create_session(agent_id, environment_id,
                                                            metadata, title))

    async def retrieve_session(self, session_id: str) -> dict[str, Any]:
        return await self._sender.send(self._retrieve_session(session_id))

    async def list_events(self, session_id: str, *, page: str | None = None, limit: int = 20,
                          order: str = "asc") -> dict[str, Any]:
        return await self._sender.send(self._list_events(session_id, page, limit, order))

    async def all_events(self, session_id: str) -> list[dict[str, Any]]:
        return await self._sender.run(self._all_events(session_id))

    async def send_events(self, session_id: str, events: Sequence[Mapping[str, Any]], *,
                          idempotent: bool = True) -> dict[str, Any]:
        return await self._sender.send(self._send_events(session_id, events,
                                                         idempotent=idempotent))

    async def send_message(self, session_id: str, message: str | Sequence[Mapping[str, Any]]
                           ) -> dict[str, Any]:
        return await self.send_events(session_id, [message_event(message)], idempotent=False)

    async def submit_results(self, session_id: str, body: Mapping[str, Any]
                             ) -> dict[str, Any]:
        return await self.send_events(session_id, list(body.get("events") or []))

    async def stream_events(self, session_id: str) -> AsyncEventStream:
        call, reader = self._stream(session_id)
        return AsyncEventStream(await self._sender.open(call), reader)

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()
            await self._streams.aclose()

    async def __aenter__(self) -> AsyncSessionsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
