"""What the sync and async clients share: configuration (their endpoint), every call, SSE,
de-duplication."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import httpx

from toolbridge import BackendError, Toolbox, ToolDefinition, WireFormatError
from toolbridge.http import Call, RetryPolicy, Secret, SSEDecoder, json_object, raise_for_backend

from .translate import DIALECT, tools_to_wire
from .wire import BETA_HEADER, RACE_MESSAGE

__all__ = [
    "DEFAULT_BASE_URL",
    "OPENING_KEY",
    "ClientConfig",
    "EventDeduper",
    "PendingCallRaceError",
    "Requests",
    "SSEParser",
    "events_of",
    "is_race",
    "message_event",
    "page_params",
    "render_tools",
    "resync_event",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RACE_DELAYS = (0.1, 0.3, 0.6)
"""Waits before re-sending after the registration race, as the SDK does (_dispatch.py)."""
OPENING_KEY = "toolbridge_key"
"""The metadata key of a session created with an idempotency key: that key (a successor
finds the session by it when the reply that named the session was lost)."""
DONE = object()
Tools = Any  # a Toolbox, ToolDefinitions, or wire dicts


class PendingCallRaceError(BackendError):
    """``Unknown pending tool call`` persisted after every race retry: the call is not pending."""


class ClientConfig:
    """Connection settings shared by `AgentsClient` and `AsyncAgentsClient`.

    ``api_key`` defaults to ``$OPENAI_API_KEY``; without one no ``Authorization`` header is sent
    (fine for the emulator). It is held as a `toolbridge.http.Secret` and never shown.
    """

    def __init__(
        self, *, api_key: str | Secret | None = None, base_url: str | None = None,
        organization: str | None = None, project: str | None = None, timeout: float = 60.0,
        retry: RetryPolicy | None = None, race_delays: Sequence[float] = RACE_DELAYS,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.api_key: Secret | None = Secret(key) if isinstance(key, str) else key
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
                         ).rstrip("/")
        self.organization = organization
        self.project = project
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.race_delays = tuple(race_delays)
        self.extra_headers = dict(headers or {})

    def headers(self) -> dict[str, str]:
        """Headers of every request (the key is read from its Secret only here)."""
        out = {BETA_HEADER[0]: BETA_HEADER[1], "Accept": "application/json",
               "User-Agent": "toolbridge-openai-agents"}
        if self.api_key is not None:
            out["Authorization"] = f"Bearer {self.api_key.get()}"
        if self.organization:
            out["OpenAI-Organization"] = self.organization
        if self.project:
            out["OpenAI-Project"] = self.project
        out.update(self.extra_headers)
        return out

    def limits(self) -> httpx.Limits:
        """The requests' pool: connections kept for reuse, none capped."""
        return httpx.Limits(max_connections=None, max_keepalive_connections=64)

    def stream_limits(self) -> httpx.Limits:
        """The sync client's event-stream pool: one connection per live stream, uncapped,
        none kept (a closed stream's connection is not reused)."""
        return httpx.Limits(max_connections=None, max_keepalive_connections=0)

    def stream_timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout, read=None)

    def bearer(self) -> None:
        """No token: the key is a header of every request."""
        return None

    async def abearer(self) -> None:
        return None

    def request_for(self, call: Call[Any], token: None,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        """The request of ``call``, built by ``http`` (its own defaults apply)."""
        merged = self.headers()
        merged.update(call.headers or {})
        timeout = self.stream_timeout() if call.stream else httpx.Timeout(self.timeout)
        request: httpx.Request = http.build_request(
            call.method, self.base_url + call.path, json=call.body, params=call.params,
            headers=merged, timeout=timeout)
        return request

    def __repr__(self) -> str:
        return (f"ClientConfig(base_url={self.base_url!r}, api_key={self.api_key!r}, "
                f"organization={self.organization!r}, project={self.project!r})")


class Requests:
    """Every call of both clients (they send them); `config` is their endpoint."""

    config: ClientConfig

    @staticmethod
    def _session_call(method: str, path: str, what: str, *, body: Any = None,
                      params: Mapping[str, Any] | None = None) -> Call[dict[str, Any]]:
        return Call(method, path, lambda response: _answer(response, what), body=body,
                    params=params)

    def _retrieve_session(self, session_id: str) -> Call[dict[str, Any]]:
        return self._session_call("GET", f"/agents/sessions/{session_id}",
                                  f"retrieve session {session_id}")

    def _create_session(self, tools: Tools, input: Any, environment: Mapping[str, Any] | None,
                        agent: Mapping[str, Any] | None, model: str | None,
                        instructions: str | None, metadata: Mapping[str, str] | None,
                        agent_id: str | None) -> Call[dict[str, Any]]:
        body = self._create_body(tools, input, environment, agent, model, instructions,
                                 metadata, False, agent_id)
        return self._session_call("POST", "/agents/sessions", "create session", body=body)

    def _create_session_stream(
        self, tools: Tools, input: Any, environment: Mapping[str, Any] | None,
        agent: Mapping[str, Any] | None, model: str | None, instructions: str | None,
        metadata: Mapping[str, str] | None, key: str | None = None,
    ) -> Call[None]:
        """Not idempotent (it carries the first message): never re-sent once it may have
        arrived. ``key`` goes as its ``Idempotency-Key`` and in its metadata (`OPENING_KEY`),
        where `sent` finds the session when the reply that named it was lost."""
        if key:
            metadata = {**(metadata or {}), OPENING_KEY: key}
        body = self._create_body(tools, input, environment, agent, model, instructions,
                                 metadata, True)
        headers = {"Accept": "text/event-stream", **({"Idempotency-Key": key} if key else {})}
        return Call("POST", "/agents/sessions", _opened("create session"), body=body,
                    headers=headers, stream=True, idempotent=False, what="create session")

    def _update_tools(self, session_id: str, tools: Tools) -> Call[dict[str, Any]]:
        return self._session_call("POST", f"/agents/sessions/{session_id}",
                                  f"update session {session_id}",
                                  body={"agent": {"tools": render_tools(tools)}})

    def _send_events(self, session_id: str, events: Sequence[Mapping[str, Any]],
                     key: str | None) -> Call[None]:
        """One key for every retry; re-sent after the pending-call race (`race_delays`)."""
        what = f"send events to session {session_id}"
        sent = list(events)

        def read(response: httpx.Response) -> None:
            if is_race(response, sent):
                raise race_error(response, what)
            raise_for_backend(response, what)

        return Call("POST", f"/agents/sessions/{session_id}/events", read,
                    body={"events": sent},
                    headers={"Idempotency-Key": key or new_key(), "Accept": "*/*"},
                    resend=self.config.race_delays,
                    resend_if=lambda response: is_race(response, sent))

    def _list_sessions(self, metadata: Mapping[str, str] | None, after: str | None,
                       limit: int, order: str) -> Call[dict[str, Any]]:
        return self._session_call("GET", "/agents/sessions", "list sessions",
                                  params=page_params(after, limit, order, metadata))

    def _list_items(self, session_id: str, after: str | None, limit: int, order: str
                    ) -> Call[dict[str, Any]]:
        return self._session_call("GET", f"/agents/sessions/{session_id}/items",
                                  f"list items of session {session_id}",
                                  params=page_params(after, limit, order))

    @staticmethod
    def _stream_events(session_id: str) -> Call[None]:
        what = f"stream session {session_id}"
        return Call("GET", f"/agents/sessions/{session_id}/events", _opened(what),
                    params={"include_obfuscation": "false"},
                    headers={"Accept": "text/event-stream"}, stream=True, what=what)

    # ------------------------------------------------------------------ saved agents
    def _create_agent(self, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        return self._session_call("POST", "/agents", "create agent", body=dict(body))

    def _retrieve_agent(self, agent_id: str) -> Call[dict[str, Any]]:
        return self._session_call("GET", f"/agents/{agent_id}", f"retrieve agent {agent_id}")

    def _list_agents(self, after: str | None, limit: int, order: str) -> Call[dict[str, Any]]:
        return self._session_call("GET", "/agents", "list agents",
                                  params=page_params(after, limit, order))

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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.config!r}>"


def _answer(response: httpx.Response, what: str) -> dict[str, Any]:
    raise_for_backend(response, what)
    return session_body(response, what)


def _opened(what: str) -> Callable[[httpx.Response], None]:
    """Reads a stream's answer: raises for an error one (its events are read elsewhere)."""
    return lambda response: raise_for_backend(response, what)


def page_params(after: str | None, limit: int, order: str,
                metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The query of one page of a list (``metadata[key]=value`` filters)."""
    params: dict[str, Any] = {"limit": limit, "order": order}
    if after:
        params["after"] = after
    for key, value in (metadata or {}).items():
        params[f"metadata[{key}]"] = value
    return params


def events_of(body: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The events of a results body (``{"events": [...]}``, or the list itself)."""
    if isinstance(body, Mapping):
        return list(body.get("events", []))
    return list(body)


def render_tools(tools: Toolbox | Sequence[ToolDefinition] | Sequence[Mapping[str, Any]]
                 ) -> list[dict[str, Any]]:
    """``agent.tools`` from a toolbox, neutral definitions, or wire dicts (kept as they are)."""
    items = list(tools)
    if all(isinstance(t, ToolDefinition) for t in items):
        return tools_to_wire([t for t in items if isinstance(t, ToolDefinition)])
    return [dict(t) for t in items if isinstance(t, Mapping)]


def message_event(message: str | Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``agent.session.input.message`` for a text or a list of input messages."""
    if isinstance(message, str):
        messages: list[Any] = [{"role": "user",
                                "content": [{"type": "input_text", "text": message}]}]
    else:
        messages = [dict(m) for m in message]
    return {"type": "agent.session.input.message", "input": messages}


def new_key() -> str:
    return str(uuid.uuid4())


def is_race(response: httpx.Response, events: Iterable[Mapping[str, Any]]) -> bool:
    """The 400 ``Unknown pending tool call: <call_id>`` of a call just announced."""
    if response.status_code != 400:
        return False
    try:
        error = response.json().get("error", {})
        message = str(error.get("message", ""))
    except (ValueError, AttributeError):
        return False
    return any(message == RACE_MESSAGE + str(e.get("call_id")) for e in events
               if e.get("type") == "agent.session.input.tool_result")


def race_error(response: httpx.Response, what: str) -> PendingCallRaceError:
    body = response.json()
    return PendingCallRaceError(f"{what}: HTTP 400: {body['error']['message']}",
                                status=400, body=body)


def session_body(response: httpx.Response, what: str) -> dict[str, Any]:
    return json_object(response, DIALECT, what)


class EventDeduper:
    """Drops events whose ``event_id`` was seen among the last ``limit`` (SDK: 1,024)."""

    __slots__ = ("_seen", "limit")

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._seen: dict[str, None] = {}
        """The ids, oldest first (an ordered set)."""

    def accept(self, event: Mapping[str, Any]) -> bool:
        """True the first time an event id is seen (events without one always pass)."""
        event_id = event.get("event_id")
        if not isinstance(event_id, str):
            return True
        seen = self._seen
        if event_id in seen:
            return False
        if len(seen) >= self.limit:
            del seen[next(iter(seen))]
        seen[event_id] = None
        return True


class SSEParser:
    """Turns SSE lines into decoded ``data`` payloads (the ``event:`` name is not used)."""

    def __init__(self) -> None:
        self._frames = SSEDecoder()

    def feed(self, line: str) -> Any:
        """The decoded event when ``line`` ends one, `DONE` at ``[DONE]``, else ``None``."""
        frame = self._frames.feed(line)
        if frame is None:
            return None
        text = frame[1]
        if text.startswith("[DONE]"):
            return DONE
        try:
            return json.loads(text)
        except (ValueError, RecursionError):  # a 1,000-deep event is not an event we read
            raise WireFormatError(DIALECT, "<event>", "event data is not JSON",
                                  text[:2000]) from None


def resync_event(session: Mapping[str, Any], count: int) -> dict[str, Any]:
    """A session snapshot shaped like the lifecycle event of its status.

    Yielded after (re)connecting, so a consumer handles state it read and state it was sent
    the same way.
    """
    status = str(session.get("status", "idle"))
    return {"type": f"agent.session.{status}", "event_id": f"resync-{count}",
            "session": dict(session)}
