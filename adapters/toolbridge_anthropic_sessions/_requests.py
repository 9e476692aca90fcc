"""What the sync and async clients share: their endpoint (`ClientConfig`) and every call."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from toolbridge import Toolbox, ToolDefinition
from toolbridge.http import (
    Call,
    Flow,
    JsonEvents,
    RetryPolicy,
    Secret,
    json_object,
    raise_for_backend,
)

from .translate import render_tools
from .wire import BETA, DIALECT, VERSION

__all__ = ["DEFAULT_BASE_URL", "ClientConfig", "Requests", "Tools", "message_event",
           "wire_tools"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
Tools = Any  # a Toolbox, ToolDefinitions, or wire dicts


def wire_tools(tools: Tools) -> list[dict[str, Any]]:
    """An agent's ``tools`` from a `Toolbox`, neutral definitions or wire dicts."""
    items = list(tools) if isinstance(tools, Toolbox) else list(tools or ())
    if items and all(isinstance(t, ToolDefinition) for t in items):
        return render_tools(items).definitions
    return [dict(t) for t in items]


def message_event(message: str | Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A ``user.message`` event of text (or of content blocks)."""
    content = [{"type": "text", "text": message}] if isinstance(message, str) else [
        dict(b) for b in message]
    return {"type": "user.message", "content": content}


class ClientConfig:
    """Connection settings of both clients. ``api_key`` defaults to ``$ANTHROPIC_API_KEY`` and
    goes as ``x-api-key`` (held as a `toolbridge.http.Secret`, never shown)."""

    def __init__(self, *, api_key: str | Secret | None = None, base_url: str | None = None,
                 timeout: float = 60.0, retry: RetryPolicy | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        self.api_key: Secret | None = Secret(key) if isinstance(key, str) else key
        root = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL)
        root = root.rstrip("/")
        self.base_url = root[:-3] if root.endswith("/v1") else root
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.extra_headers = dict(headers or {})

    def headers(self) -> dict[str, str]:
        """Headers of every request (the key is read from its Secret only here)."""
        out = {"anthropic-version": VERSION, "anthropic-beta": BETA,
               "Accept": "application/json", "User-Agent": "toolbridge-anthropic-sessions"}
        if self.api_key is not None:
            out["x-api-key"] = self.api_key.get()
        out.update(self.extra_headers)
        return out

    def bearer(self) -> None:
        """No token: the key is a header of every request."""
        return None

    async def abearer(self) -> None:
        return None

    def request_for(self, call: Call[Any], token: None,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        merged = self.headers()
        merged.update(call.headers or {})
        timeout = httpx.Timeout(self.timeout, read=None) if call.stream else httpx.Timeout(
            self.timeout)
        request: httpx.Request = http.build_request(
            call.method, self.base_url + call.path, json=call.body, params=call.params,
            headers=merged, timeout=timeout)
        return request

    def __repr__(self) -> str:
        return f"ClientConfig(base_url={self.base_url!r}, api_key={self.api_key!r})"


def _answer(what: str) -> Any:
    def read(response: httpx.Response) -> dict[str, Any]:
        raise_for_backend(response, what)
        return json_object(response, DIALECT, what)
    return read


class Requests:
    """Every call of both clients (they send them); `config` is their endpoint."""

    config: ClientConfig

    @staticmethod
    def _call(method: str, path: str, what: str, *, body: Any = None,
              params: Mapping[str, Any] | None = None, idempotent: bool = True
              ) -> Call[dict[str, Any]]:
        return Call(method, path, _answer(what), body=body, params=params,
                    idempotent=idempotent, what=what)

    def _create_agent(self, name: str, model: str, tools: Tools, system: str | None
                      ) -> Call[dict[str, Any]]:
        body: dict[str, Any] = {"name": name, "model": model, "tools": wire_tools(tools)}
        if system is not None:
            body["system"] = system
        return self._call("POST", "/v1/agents", "create agent", body=body, idempotent=False)

    def _create_environment(self, name: str) -> Call[dict[str, Any]]:
        return self._call("POST", "/v1/environments", "create environment",
                          body={"name": name, "config": {"type": "cloud"}}, idempotent=False)

    def _create_session(self, agent_id: str, environment_id: str,
                        metadata: Mapping[str, str] | None, title: str | None
                        ) -> Call[dict[str, Any]]:
        body: dict[str, Any] = {"agent": agent_id, "environment_id": environment_id}
        if metadata:
            body["metadata"] = dict(metadata)
        if title is not None:
            body["title"] = title
        return self._call("POST", "/v1/sessions", "create session", body=body,
                          idempotent=False)

    def _retrieve_session(self, session_id: str) -> Call[dict[str, Any]]:
        return self._call("GET", f"/v1/sessions/{session_id}", f"retrieve session {session_id}")

    def _list_events(self, session_id: str, page: str | None, limit: int, order: str
                     ) -> Call[dict[str, Any]]:
        params: dict[str, Any] = {"limit": limit, "order": order}
        if page:
            params["page"] = page
        return self._call("GET", f"/v1/sessions/{session_id}/events",
                          f"list events of session {session_id}", params=params)

    def _all_events(self, session_id: str) -> Flow[list[dict[str, Any]]]:
        """Every event of the session, oldest first (page after page)."""
        events: list[dict[str, Any]] = []
        page: str | None = None
        while True:
            answer = yield self._list_events(session_id, page, 1000, "asc")
            events += [e for e in answer.get("data") or [] if isinstance(e, dict)]
            page = answer.get("next_page")
            if not page:
                return events

    def _send_events(self, session_id: str, events: Sequence[Mapping[str, Any]], *,
                     idempotent: bool) -> Call[dict[str, Any]]:
        """``idempotent`` false for a user message: never sent twice."""
        return self._call("POST", f"/v1/sessions/{session_id}/events",
                          f"send events to session {session_id}",
                          body={"events": [dict(e) for e in events]}, idempotent=idempotent)

    @staticmethod
    def _stream(session_id: str) -> tuple[Call[None], JsonEvents]:
        what = f"stream session {session_id}"
        call: Call[None] = Call("GET", f"/v1/sessions/{session_id}/events/stream",
                                lambda response: raise_for_backend(response, what),
                                headers={"Accept": "text/event-stream"}, stream=True,
                                what=what)
        return call, JsonEvents(DIALECT)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.config!r}>"
