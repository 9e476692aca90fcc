"""The Messages API described once: the endpoint (`MessagesConfig`) and the calls both
clients send."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from toolbridge.http import (
    Call,
    Flow,
    RetryPolicy,
    Secret,
    assembled,
    json_object,
    raise_for_backend,
)

from .stream import MessageAssembler, MessageEvents
from .wire import API_VERSION, DIALECT

__all__ = ["MessagesCalls", "MessagesConfig", "OnEvent", "default_retry"]

OnEvent = Callable[[dict[str, Any]], None] | None
OVERLOADED = 529
"""Anthropic's "overloaded_error" status: retried like a 503."""


def default_retry() -> RetryPolicy:
    """The shared retry policy, also retrying 529 (overloaded)."""
    return RetryPolicy(retry_statuses=RetryPolicy().retry_statuses | {OVERLOADED})


class MessagesConfig:
    """Endpoint, credentials and retries shared by both clients; the
    `toolbridge.http.Endpoint` of their calls.

    ``api_key`` (default ``$ANTHROPIC_API_KEY``) goes in ``x-api-key``; ``auth_token``
    (default ``$ANTHROPIC_AUTH_TOKEN``) as a bearer token instead; ``base_url`` defaults to
    ``$ANTHROPIC_BASE_URL`` or ``https://api.anthropic.com``. ``betas`` become the
    ``anthropic-beta`` header.
    """

    def __init__(self, *, base_url: str | None = None, api_key: str | Secret | None = None,
                 auth_token: str | Secret | None = None, retry: RetryPolicy | None = None,
                 timeout: float = 600.0, betas: tuple[str, ...] = (),
                 headers: Mapping[str, str] | None = None) -> None:
        root = base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
        self.url = root.rstrip("/") + "/v1/messages"
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        token = auth_token if auth_token is not None or key is not None else os.environ.get(
            "ANTHROPIC_AUTH_TOKEN")
        self.api_key: Secret | None = Secret(key) if isinstance(key, str) else key
        self.auth_token: Secret | None = Secret(token) if isinstance(token, str) else token
        self.retry = retry or default_retry()
        self.timeout = timeout
        self.betas = tuple(betas)
        self.extra_headers = dict(headers or {})

    def bearer(self) -> None:
        return None

    async def abearer(self) -> None:
        return None

    def headers(self) -> dict[str, str]:
        out = {"Content-Type": "application/json", "User-Agent": "toolbridge-anthropic-messages",
               "anthropic-version": API_VERSION}
        if self.api_key is not None:
            out["x-api-key"] = self.api_key.get()
        elif self.auth_token is not None:
            out["Authorization"] = f"Bearer {self.auth_token.get()}"
        if self.betas:
            out["anthropic-beta"] = ",".join(self.betas)
        out.update(self.extra_headers)
        return out

    def request_for(self, call: Call[Any], token: Any,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        headers = self.headers()
        headers["Accept"] = "text/event-stream" if call.stream else "application/json"
        timeout = httpx.Timeout(self.timeout, read=None if call.stream else self.timeout)
        return httpx.Request(call.method, self.url + call.path, headers=headers,
                             content=json.dumps(call.body).encode(),
                             extensions={"timeout": timeout.as_dict()})

    def __repr__(self) -> str:
        credential = self.api_key if self.api_key is not None else self.auth_token
        return f"MessagesConfig(url={self.url!r}, credential={credential!r})"


def _decode(response: httpx.Response) -> dict[str, Any]:
    raise_for_backend(response, f"{DIALECT}: create message")
    return json_object(response, DIALECT)



class MessagesCalls:
    """The calls and flows of both clients (they send them; `config` says where)."""

    config: MessagesConfig

    def _create(self, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", "", _decode, body={k: v for k, v in body.items() if k != "stream"})

    def _stream(self, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", "", _decode, body={**body, "stream": True}, stream=True,
                    what=DIALECT)

    def _stream_message(self, on_event: OnEvent, body: Mapping[str, Any]
                        ) -> Flow[dict[str, Any]]:
        return (yield from assembled(self._stream(body), MessageEvents, MessageAssembler,
                                     MessageAssembler.message, self.config.retry,
                                     f"{DIALECT}: the message", on_event))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.config!r}>"
