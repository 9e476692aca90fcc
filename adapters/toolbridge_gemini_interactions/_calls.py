"""The Interactions API described once: the endpoint (`InteractionsConfig`) and the calls and
flows both clients send."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any

import httpx

from toolbridge import BackendError, UsageError
from toolbridge.http import (
    Call,
    Drain,
    Flow,
    JsonEvents,
    RetryPolicy,
    Secret,
    json_object,
    raise_for_backend,
)

from .wire import API_VERSION, DEFAULT_BASE_URL, DIALECT

__all__ = ["CREATE_REFUSED", "InteractionCalls", "InteractionsConfig", "StreamGatherer"]

CREATE_REFUSED = frozenset({429, 503})
"""The answers after which a create (not idempotent) is sent again: the Gemini API is a gRPC
service behind its HTTP/JSON front, and ``RESOURCE_EXHAUSTED`` (429) and ``UNAVAILABLE`` (503)
say the request was not processed (as for CES's ``runSession``)."""


class InteractionsConfig:
    """Endpoint, key and retries shared by both clients; the `toolbridge.http.Endpoint` of
    their calls. The key goes in ``x-goog-api-key`` (or ``?key=`` with ``key_in_query``)."""

    def __init__(self, *, base_url: str | None = None, api_key: str | Secret | None = None,
                 key_in_query: bool = False, api_version: str = API_VERSION,
                 retry: RetryPolicy | None = None, timeout: float = 60.0,
                 headers: Mapping[str, str] | None = None) -> None:
        root = base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or DEFAULT_BASE_URL
        self.url = f"{root.rstrip('/')}/{api_version}"
        # google-genai's order: GOOGLE_API_KEY wins when both are set.
        key = api_key if api_key is not None else (
            os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"))
        if key is None:
            raise UsageError(f"{DIALECT}: no API key: pass api_key=..., or export "
                             "GEMINI_API_KEY (or GOOGLE_API_KEY)")
        self.api_key: Secret = Secret(key) if isinstance(key, str) else key
        self.key_in_query = key_in_query
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.extra_headers = dict(headers or {})

    def bearer(self) -> None:
        return None

    async def abearer(self) -> None:
        return None

    def request_for(self, call: Call[Any], token: Any,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        headers = {"Content-Type": "application/json", "User-Agent": "toolbridge-gemini",
                   "Accept": "text/event-stream" if call.stream else "application/json",
                   **self.extra_headers}
        params = dict(call.params or {})
        if self.key_in_query:
            params["key"] = self.api_key.get()
        else:
            headers["x-goog-api-key"] = self.api_key.get()
        timeout = httpx.Timeout(self.timeout, read=None if call.stream else self.timeout)
        content = json.dumps(call.body).encode() if call.body is not None else None
        return httpx.Request(call.method, self.url + call.path, params=params, headers=headers,
                             content=content, extensions={"timeout": timeout.as_dict()})

    def __repr__(self) -> str:
        return f"InteractionsConfig(url={self.url!r}, api_key={self.api_key!r})"


def _decoder(what: str) -> Any:
    def decode(response: httpx.Response) -> dict[str, Any]:
        raise_for_backend(response, f"{DIALECT}: {what}")
        return json_object(response, DIALECT, what)

    return decode


class StreamGatherer:
    """Builds the interaction from its stream's events: the id from ``interaction.created``,
    the steps from ``step.start`` (and text deltas), the end from ``interaction.completed``."""

    def __init__(self) -> None:
        self.interaction: dict[str, Any] = {}
        self.steps: dict[int, dict[str, Any]] = {}
        self.done = False

    def feed(self, event: Mapping[str, Any]) -> bool:
        """Take one event; ``True`` when it was new (a duplicated event is skipped)."""
        kind = event.get("event_type")
        if kind == "interaction.created" and isinstance(event.get("interaction"), Mapping):
            self.interaction = dict(event["interaction"])
        elif kind == "step.start" and isinstance(event.get("index"), int):
            if event["index"] in self.steps:
                return False
            self.steps[event["index"]] = dict(event.get("step") or {})
        elif kind == "step.delta" and isinstance(event.get("index"), int):
            delta, step = event.get("delta") or {}, self.steps.get(event["index"])
            if step is not None and delta.get("type") == "text":
                content = step.setdefault("content", [])
                if not content:
                    content.append({"type": "text", "text": ""})
                content[-1]["text"] += str(delta.get("text", ""))
        elif kind == "interaction.status_update" and event.get("status"):
            self.interaction["status"] = event["status"]
        elif kind == "interaction.completed" and isinstance(event.get("interaction"), Mapping):
            self.interaction = dict(event["interaction"])
            self.done = True
        elif kind == "error":
            error = event.get("error") or {}
            raise BackendError(f"{DIALECT}: the stream reported an error: "
                               f"{error.get('message', error)}", body=dict(event))
        return True

    @property
    def interaction_id(self) -> str | None:
        value = self.interaction.get("id")
        return value if isinstance(value, str) and value else None

    def result(self) -> dict[str, Any]:
        """The interaction (its steps from the events when the last event had none)."""
        gathered = dict(self.interaction)
        if "steps" not in gathered:
            gathered["steps"] = [self.steps[i] for i in sorted(self.steps)]
        return gathered


def _gathering(gatherer: StreamGatherer) -> Any:
    def take(event: dict[str, Any]) -> bool:
        gatherer.feed(event)
        return gatherer.done

    return take


class InteractionCalls:
    """The calls and flows of both clients (they send them; `config` says where)."""

    config: InteractionsConfig

    def _create_retry(self) -> RetryPolicy:
        """The endpoint's policy, sending a create again only after `CREATE_REFUSED`."""
        policy = self.config.retry
        return dataclasses.replace(policy, refused_statuses=CREATE_REFUSED)

    def _create(self, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        # Not idempotent: a create sent twice makes two interactions.
        return Call("POST", "/interactions", _decoder("create interaction"),
                    body={k: v for k, v in body.items() if k != "stream"}, idempotent=False,
                    retry=self._create_retry())

    @staticmethod
    def _get(interaction_id: str) -> Call[dict[str, Any]]:
        return Call("GET", f"/interactions/{interaction_id}",
                    _decoder(f"get interaction {interaction_id}"))

    @staticmethod
    def _cancel(interaction_id: str) -> Call[dict[str, Any]]:
        return Call("POST", f"/interactions/{interaction_id}/cancel",
                    _decoder(f"cancel interaction {interaction_id}"))

    def _stream(self, body: Mapping[str, Any]) -> Call[None]:
        return Call("POST", "/interactions", _decoder("create interaction"),
                    body={**body, "stream": True}, stream=True, idempotent=False,
                    retry=self._create_retry(), what=f"{DIALECT}: create interaction (stream)")

    def _stream_interaction(self, body: Mapping[str, Any]) -> Flow[dict[str, Any]]:
        """Stream a create and gather it; a stream that broke off after the interaction's id
        arrived is read back with a ``GET`` (never created again)."""
        gatherer = StreamGatherer()
        yield Drain(self._stream(body), JsonEvents(DIALECT, "<event>"), _gathering(gatherer))
        if gatherer.done:
            return gatherer.result()
        if gatherer.interaction_id is None:
            raise BackendError(f"{DIALECT}: the stream broke off before the interaction was "
                               "created; whether it was is unknown")
        interaction: dict[str, Any] = yield self._get(gatherer.interaction_id)
        return interaction

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.config!r}>"
