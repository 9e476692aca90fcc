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

import asyncio
import time
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge import BackendError
from toolbridge.http import (
    Secret,
    asend_with_retries,
    exclusive_transport,
    raise_for_backend,
    send_with_retries,
    transport_error,
)

from ._client_common import (
    ClientConfig,
    EventDeduper,
    PendingCallRaceError,
    is_race,
    message_event,
    new_key,
    race_error,
    render_tools,
    resync_event,
    session_body,
)
from ._saved_agents import AsyncSavedAgents, SavedAgents
from ._streams import AsyncEventStream, EventStream

__all__ = [
    "AgentsClient", "AsyncAgentsClient", "AsyncEventStream", "EventDeduper", "EventStream",
    "PendingCallRaceError",
]

Tools = Any  # a Toolbox, ToolDefinitions, or wire dicts


class _Requests:
    """Builds every request; subclasses send them."""

    config: ClientConfig
    _http: Any

    def _build(self, method: str, path: str, *, json: Any = None,
               params: Mapping[str, Any] | None = None,
               headers: Mapping[str, str] | None = None, stream: bool = False) -> httpx.Request:
        merged = self.config.headers()
        merged.update(headers or {})
        timeout = self.config.stream_timeout() if stream else httpx.Timeout(self.config.timeout)
        request: httpx.Request = self._http.build_request(
            method, self.config.base_url + path, json=json, params=params, headers=merged,
            timeout=timeout)
        return request

    def _create_body(self, tools: Tools, input: Any, environment: Mapping[str, Any] | None,
                     agent: Mapping[str, Any] | None, model: str | None,
                     instructions: str | None, metadata: Mapping[str, str] | None,
                     stream: bool, agent_id: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"environment": dict(environment or {"type": "none"})}
        spec = dict(agent or {})
        if model is not None:
            spec["model"] = model
        if instructions is not None:
            spec["instructions"] = instructions
        rendered = render_tools(tools)
        if agent_id is None or rendered:  # a saved agent keeps its tools unless replaced
            spec["tools"] = rendered
        if agent_id is not None:
            body["agent_id"] = agent_id
        if spec:
            body["agent"] = spec
        if input is not None:
            body["input"] = input
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if stream:
            body["stream"] = True
        return body

    def _events_request(self, session_id: str, events: Sequence[Mapping[str, Any]],
                        key: str) -> httpx.Request:
        return self._build("POST", f"/agents/sessions/{session_id}/events",
                           json={"events": list(events)},
                           headers={"Idempotency-Key": key, "Accept": "*/*"})

    def _stream_request(self, session_id: str) -> httpx.Request:
        return self._build("GET", f"/agents/sessions/{session_id}/events",
                           params={"include_obfuscation": "false"},
                           headers={"Accept": "text/event-stream"}, stream=True)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.config!r}>"


def _list_params(metadata: Mapping[str, str] | None, after: str | None, limit: int,
                 order: str) -> dict[str, Any]:
    params: dict[str, Any] = {"limit": limit, "order": order}
    if after:
        params["after"] = after
    for key, value in (metadata or {}).items():
        params[f"metadata[{key}]"] = value
    return params


def _events_of(body: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    if isinstance(body, Mapping):
        return list(body.get("events", []))
    return list(body)


# ============================================================================ sync
class AgentsClient(_Requests, SavedAgents):
    """Blocking client. Options: ``api_key``, ``base_url``, ``organization``, ``project``,
    ``timeout``, ``retry`` (a `toolbridge.http.RetryPolicy`), ``race_delays``, ``headers``."""

    _http: httpx.Client

    def __init__(self, *, http_client: httpx.Client | None = None,
                 api_key: str | Secret | None = None, **options: Any) -> None:
        self.config = ClientConfig(api_key=api_key, **options)
        self._owns = http_client is None
        self._http = http_client or httpx.Client(timeout=self.config.timeout,
                                                 limits=self.config.limits())
        self._streams = http_client or httpx.Client(timeout=self.config.timeout,
                                                    limits=self.config.stream_limits())

    def _send(self, request: httpx.Request, what: str) -> httpx.Response:
        response = send_with_retries(self._http, request, self.config.retry)
        raise_for_backend(response, what)
        return response

    def retrieve_session(self, session_id: str) -> dict[str, Any]:
        """``GET /agents/sessions/{id}``: status, ``required_actions``, agent."""
        what = f"retrieve session {session_id}"
        return session_body(self._send(self._build("GET", f"/agents/sessions/{session_id}"),
                                       what), what)

    def create_session(self, tools: Tools = (), *, input: Any = None,
                       environment: Mapping[str, Any] | None = None,
                       agent: Mapping[str, Any] | None = None, model: str | None = None,
                       instructions: str | None = None,
                       metadata: Mapping[str, str] | None = None,
                       agent_id: str | None = None) -> dict[str, Any]:
        """``POST /agents/sessions`` declaring ``tools`` (environment ``none`` by default);
        with ``agent_id``, a session of that saved agent (``tools`` then replace its own)."""
        body = self._create_body(tools, input, environment, agent, model, instructions,
                                 metadata, False, agent_id)
        return session_body(self._send(self._build("POST", "/agents/sessions", json=body),
                                       "create session"), "create session")

    def create_session_stream(self, tools: Tools = (), *, input: Any,
                              environment: Mapping[str, Any] | None = None,
                              agent: Mapping[str, Any] | None = None, model: str | None = None,
                              instructions: str | None = None,
                              metadata: Mapping[str, str] | None = None) -> EventStream:
        """Create a session with ``stream: true``: its events from creation on."""
        body = self._create_body(tools, input, environment, agent, model, instructions,
                                 metadata, True)
        request = self._build("POST", "/agents/sessions", json=body,
                              headers={"Accept": "text/event-stream"}, stream=True)
        return EventStream(self._open(request, "create session"), EventDeduper())

    def update_tools(self, session_id: str, tools: Tools) -> dict[str, Any]:
        """Replace the session's tools (they apply from the next model call)."""
        body = {"agent": {"tools": render_tools(tools)}}
        what = f"update session {session_id}"
        return session_body(self._send(
            self._build("POST", f"/agents/sessions/{session_id}", json=body), what), what)

    def send_events(self, session_id: str, events: Sequence[Mapping[str, Any]], *,
                    idempotency_key: str | None = None) -> None:
        """``POST .../events`` (202), one key for every retry; retries the pending-call race."""
        request = self._events_request(session_id, events, idempotency_key or new_key())
        what = f"send events to session {session_id}"
        for delay in (*self.config.race_delays, None):
            response = send_with_retries(self._http, request, self.config.retry)
            if not is_race(response, events):
                raise_for_backend(response, what)
                return
            if delay is None:
                raise race_error(response, what)
            time.sleep(delay)

    def submit_results(self, session_id: str,
                       body: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> None:
        """Send each ``tool_result`` of ``body`` (as `Toolbox.handle` returns it) on its own."""
        for event in _events_of(body):
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
        return session_body(self._send(self._build(
            "GET", "/agents/sessions", params=_list_params(metadata, after, limit, order)),
            "list sessions"), "list sessions")

    def list_items(self, session_id: str, *, after: str | None = None, limit: int = 20,
                   order: str = "desc") -> dict[str, Any]:
        """One page of history: ``{"data": [...], "has_more": bool}``."""
        params: dict[str, Any] = {"limit": limit, "order": order}
        if after:
            params["after"] = after
        what = f"list items of session {session_id}"
        return session_body(self._send(self._build(
            "GET", f"/agents/sessions/{session_id}/items", params=params), what), what)

    def _open(self, request: httpx.Request, what: str) -> httpx.Response:
        policy = self.config.retry
        for attempt in range(1, policy.max_attempts + 1):
            failed: Exception | None = None
            try:
                response = self._streams.send(request, stream=True)
            except httpx.TransportError as exc:
                failed = exc
            if failed is not None:  # raised out here: the httpx error is not chained to ours
                if attempt >= policy.max_attempts:
                    raise transport_error(f"{what}", failed)
                time.sleep(policy.delay(attempt, None))
                continue
            if response.is_success:
                return response
            response.read()
            response.close()
            if attempt >= policy.max_attempts or response.status_code not in policy.retry_statuses:
                raise_for_backend(response, what)
            time.sleep(policy.delay(attempt, response))
        raise BackendError(f"{what}: no attempt left")  # unreachable: the loop returns or raises

    def stream_events(self, session_id: str, *, deduper: EventDeduper | None = None
                      ) -> EventStream:
        """Open the live event stream (connected when this returns)."""
        return EventStream(self._open(self._stream_request(session_id),
                                      f"stream session {session_id}"), deduper or EventDeduper())

    def follow_session(self, session_id: str) -> Iterator[dict[str, Any]]:
        """Events forever: after each (re)connect, a session snapshot shaped like its lifecycle
        event (``event_id`` ``resync-N``), then live events; reconnects when a stream ends."""
        deduper = EventDeduper()
        count = quiet = 0
        while True:
            with self.stream_events(session_id, deduper=deduper) as stream:
                count += 1
                yield resync_event(self.retrieve_session(session_id), count)
                received = 0
                for event in stream:
                    received += 1
                    yield event
            quiet = quiet + 1 if received == 0 else 0
            if quiet:
                time.sleep(self.config.retry.delay(quiet, None))

    def close(self) -> None:
        if self._owns:
            self._http.close()
            self._streams.close()

    def __enter__(self) -> AgentsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ============================================================================ async
class AsyncAgentsClient(_Requests, AsyncSavedAgents):
    """Async client; same methods and options as `AgentsClient`, awaited."""

    _http: httpx.AsyncClient

    def __init__(self, *, http_client: httpx.AsyncClient | None = None,
                 api_key: str | Secret | None = None, **options: Any) -> None:
        self.config = ClientConfig(api_key=api_key, **options)
        self._owns = http_client is None
        # A connection per request in flight (httpcore's pool makes concurrent requests of
        # many sessions race for one connection); event streams in a pool of their own.
        self._http = http_client or httpx.AsyncClient(
            timeout=self.config.timeout, transport=exclusive_transport(keep=64))
        self._streams = http_client or httpx.AsyncClient(
            timeout=self.config.timeout, transport=exclusive_transport(keep=0))

    async def _send(self, request: httpx.Request, what: str) -> httpx.Response:
        response = await asend_with_retries(self._http, request, self.config.retry)
        raise_for_backend(response, what)
        return response

    async def retrieve_session(self, session_id: str) -> dict[str, Any]:
        what = f"retrieve session {session_id}"
        return session_body(await self._send(
            self._build("GET", f"/agents/sessions/{session_id}"), what), what)

    async def create_session(self, tools: Tools = (), *, input: Any = None,
                             environment: Mapping[str, Any] | None = None,
                             agent: Mapping[str, Any] | None = None, model: str | None = None,
                             instructions: str | None = None,
                             metadata: Mapping[str, str] | None = None,
                             agent_id: str | None = None) -> dict[str, Any]:
        body = self._create_body(tools, input, environment, agent, model, instructions,
                                 metadata, False, agent_id)
        return session_body(await self._send(
            self._build("POST", "/agents/sessions", json=body), "create session"),
            "create session")

    async def create_session_stream(
        self, tools: Tools = (), *, input: Any, environment: Mapping[str, Any] | None = None,
        agent: Mapping[str, Any] | None = None, model: str | None = None,
        instructions: str | None = None, metadata: Mapping[str, str] | None = None,
    ) -> AsyncEventStream:
        body = self._create_body(tools, input, environment, agent, model, instructions,
                                 metadata, True)
        request = self._build("POST", "/agents/sessions", json=body,
                              headers={"Accept": "text/event-stream"}, stream=True)
        return AsyncEventStream(await self._open(request, "create session"), EventDeduper())

    async def update_tools(self, session_id: str, tools: Tools) -> dict[str, Any]:
        body = {"agent": {"tools": render_tools(tools)}}
        what = f"update session {session_id}"
        return session_body(await self._send(
            self._build("POST", f"/agents/sessions/{session_id}", json=body), what), what)

    async def send_events(self, session_id: str, events: Sequence[Mapping[str, Any]], *,
                          idempotency_key: str | None = None) -> None:
        request = self._events_request(session_id, events, idempotency_key or new_key())
        what = f"send events to session {session_id}"
        for delay in (*self.config.race_delays, None):
            response = await asend_with_retries(self._http, request, self.config.retry)
            if not is_race(response, events):
                raise_for_backend(response, what)
                return
            if delay is None:
                raise race_error(response, what)
            await asyncio.sleep(delay)

    async def submit_results(self, session_id: str,
                             body: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> None:
        """Send each ``tool_result`` on its own request, concurrently."""
        await asyncio.gather(*(self.send_events(session_id, [e]) for e in _events_of(body)))

    async def send_message(self, session_id: str, message: str | Sequence[Mapping[str, Any]],
                           *, idempotency_key: str | None = None) -> None:
        await self.send_events(session_id, [message_event(message)],
                               idempotency_key=idempotency_key)

    async def cancel(self, session_id: str) -> None:
        await self.send_events(session_id, [{"type": "agent.session.input.cancel"}])

    async def list_sessions(self, *, metadata: Mapping[str, str] | None = None,
                            after: str | None = None, limit: int = 20, order: str = "desc"
                            ) -> dict[str, Any]:
        return session_body(await self._send(self._build(
            "GET", "/agents/sessions", params=_list_params(metadata, after, limit, order)),
            "list sessions"), "list sessions")

    async def list_items(self, session_id: str, *, after: str | None = None, limit: int = 20,
                         order: str = "desc") -> dict[str, Any]:
        params: dict[str, Any] = {"limit": limit, "order": order}
        if after:
            params["after"] = after
        what = f"list items of session {session_id}"
        return session_body(await self._send(self._build(
            "GET", f"/agents/sessions/{session_id}/items", params=params), what), what)

    async def _open(self, request: httpx.Request, what: str) -> httpx.Response:
        policy = self.config.retry
        for attempt in range(1, policy.max_attempts + 1):
            failed: Exception | None = None
            try:
                response = await self._streams.send(request, stream=True)
            except httpx.TransportError as exc:
                failed = exc
            if failed is not None:  # raised out here: the httpx error is not chained to ours
                if attempt >= policy.max_attempts:
                    raise transport_error(f"{what}", failed)
                await asyncio.sleep(policy.delay(attempt, None))
                continue
            if response.is_success:
                return response
            await response.aread()
            await response.aclose()
            if attempt >= policy.max_attempts or response.status_code not in policy.retry_statuses:
                raise_for_backend(response, what)
            await asyncio.sleep(policy.delay(attempt, response))
        raise BackendError(f"{what}: no attempt left")  # unreachable: the loop returns or raises

    async def stream_events(self, session_id: str, *, deduper: EventDeduper | None = None
                            ) -> AsyncEventStream:
        return AsyncEventStream(await self._open(self._stream_request(session_id),
                                                 f"stream session {session_id}"),
                                deduper or EventDeduper())

    async def follow_session(self, session_id: str) -> AsyncGenerator[dict[str, Any], None]:
        """See `AgentsClient.follow_session`; close it with ``contextlib.aclosing``."""
        deduper = EventDeduper()
        count = quiet = 0
        while True:
            async with await self.stream_events(session_id, deduper=deduper) as stream:
                count += 1
                yield resync_event(await self.retrieve_session(session_id), count)
                received = 0
                async for event in stream:
                    received += 1
                    yield event
            quiet = quiet + 1 if received == 0 else 0
            if quiet:
                await asyncio.sleep(self.config.retry.delay(quiet, None))

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()
            await self._streams.aclose()

    async def __aenter__(self) -> AsyncAgentsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
