"""HTTP clients for Agents API sessions (httpx): `AgentsClient` (sync), `AsyncAgentsClient`.

The async client gives every request in flight a connection of its own
(`toolbridge.http.exclusive_transport`: httpx's pool makes concurrent requests race for one
connection), and event streams, which hold a connection each while open, a transport of their
own that keeps none idle.

Results are sent one event per request, each with its own ``Idempotency-Key`` reused on every
retry (429/5xx with Retry-After, transport errors, and the ``Unknown pending tool call`` race).
Event streams are de-duplicated by ``event_id``; `follow_session` reconnects after a drop and
re-reads the session so no pending call is missed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge.http import Network, Secret, Sender

from ._async_client import AsyncAgentsClient
from ._client_common import (
    ClientConfig,
    EventDeduper,
    PendingCallRaceError,
    Tools,
    events_of,
    message_event,
)
from ._saved_agents import SavedAgents
from ._streams import AsyncEventStream, EventStream, follow

__all__ = [
    "AgentsClient", "AsyncAgentsClient", "AsyncEventStream", "EventDeduper", "EventStream",
    "PendingCallRaceError",
]


class AgentsClient(SavedAgents):
    """Blocking client. Options: ``api_key``, ``base_url``, ``organization``, ``project``,
    ``timeout``, ``retry`` (a `toolbridge.http.RetryPolicy`), ``race_delays``, ``headers``,
    and the network's (`toolbridge.http.Network`: ``proxy``, ``verify``, ``cert``, ``http2``,
    ``trust_env``), or a caller's own ``http_client``."""

    def __init__(self, *, http_client: httpx.Client | None = None,
                 api_key: str | Secret | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = ClientConfig(api_key=api_key, **options)
        self._owns = http_client is None
        self._http = http_client or network.client(self.config.timeout,
                                                   limits=self.config.limits())
        self._streams = http_client or network.client(self.config.timeout,
                                                      limits=self.config.stream_limits())
        self._sender = Sender(self.config, self._http, self._streams)

    def retrieve_session(self, session_id: str) -> dict[str, Any]:
        """``GET /agents/sessions/{id}``: status, ``required_actions``, agent."""
        return self._sender.send(self._retrieve_session(session_id))

    def create_session(self, tools: Tools = (), *, input: Any = None,
                       environment: Mapping[str, Any] | None = None,
                       agent: Mapping[str, Any] | None = None, model: str | None = None,
                       instructions: str | None = None,
                       metadata: Mapping[str, str] | None = None,
                       agent_id: str | None = None) -> dict[str, Any]:
        """``POST /agents/sessions`` declaring ``tools`` (environment ``none`` by default);
        with ``agent_id``, a session of that saved agent (``tools`` then replace its own)."""
        return self._sender.send(self._create_session(
            tools, input, environment, agent, model, instructions, metadata, agent_id))

    def create_session_stream(self, tools: Tools = (), *, input: Any,
                              environment: Mapping[str, Any] | None = None,
                              agent: Mapping[str, Any] | None = None, model: str | None = None,
                              instructions: str | None = None,
                              metadata: Mapping[str, str] | None = None,
                              idempotency_key: str | None = None) -> EventStream:
        """Create a session with ``stream: true``: its events from creation on. Never sent
        twice; ``idempotency_key`` also goes in its metadata (``toolbridge_key``), which
        ``list_sessions(metadata=...)`` finds."""
        return EventStream(self._sender.open(self._create_session_stream(
            tools, input, environment, agent, model, instructions, metadata, idempotency_key)),
            EventDeduper())

    def update_tools(self, session_id: str, tools: Tools) -> dict[str, Any]:
        """Replace the session's tools (they apply from the next model call)."""
        return self._sender.send(self._update_tools(session_id, tools))

    def send_events(self, session_id: str, events: Sequence[Mapping[str, Any]], *,
                    idempotency_key: str | None = None) -> None:
        """``POST .../events`` (202), one key for every retry; retries the pending-call race."""
        self._sender.send(self._send_events(session_id, events, idempotency_key))

    def submit_results(self, session_id: str,
                       body: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> None:
        """Send each ``tool_result`` of ``body`` (as `Toolbox.handle` returns it) on its own."""
        for event in events_of(body):
            self.send_events(session_id, [event])

    def send_message(self, session_id: str, message: str | Sequence[Mapping[str, Any]], *,
                     idempotency_key: str | None = None) -> None:
        """Post a user message (starts a turn on an idle session)."""
        self.send_events(session_id, [message_event(message)], idempotency_key=idempotency_key)

    def cancel(self, session_id: str) -> None:
        """Cancel the active turn."""
        self.send_events(session_id, [{"type": "agent.session.input.cancel"}])

    def list_sessions(self, *, metadata: Mapping[str, str] | None = None,
                      after: str | None = None, limit: int = 20, order: str = "desc"
                      ) -> dict[str, Any]:
        """One page of sessions (``metadata[key]=value`` filters): ``{"data", "has_more"}``."""
        return self._sender.send(self._list_sessions(metadata, after, limit, order))

    def list_items(self, session_id: str, *, after: str | None = None, limit: int = 20,
                   order: str = "desc") -> dict[str, Any]:
        """One page of history: ``{"data": [...], "has_more": bool}``."""
        return self._sender.send(self._list_items(session_id, after, limit, order))

    def stream_events(self, session_id: str, *, deduper: EventDeduper | None = None
                      ) -> EventStream:
        """Open the live event stream (connected when this returns)."""
        return EventStream(self._sender.open(self._stream_events(session_id)),
                           deduper or EventDeduper())

    def follow_session(self, session_id: str) -> Iterator[dict[str, Any]]:
        """Events forever: after each (re)connect, a session snapshot shaped like its lifecycle
        event (``event_id`` ``resync-N``), then live events; reconnects when a stream ends."""
        return self._sender.iterate(follow(self, session_id))

    def close(self) -> None:
        if self._owns:
            self._http.close()
            self._streams.close()

    def __enter__(self) -> AgentsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
