"""Chat Completions described once: the endpoint (`ChatConfig`) and the calls both clients send."""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from toolbridge import UsageError
from toolbridge.http import (
    Call,
    Flow,
    JsonEvents,
    RetryPolicy,
    Secret,
    assembled,
    json_object,
    raise_for_backend,
)

from .stream import ChunkAssembler
from .wire import DIALECT

__all__ = ["ChatCalls", "ChatConfig", "chunks_reader"]

TokenProvider = Callable[[], "str | Awaitable[str]"]
OnChunk = Callable[[dict[str, Any]], None] | None


class ChatConfig:
    """Endpoint, credentials and retries shared by both clients (see `toolbridge_openai_chat.
    client`); the `toolbridge.http.Endpoint` of their calls."""

    def __init__(self, *, base_url: str | None = None, api_key: str | Secret | None = None,
                 azure_endpoint: str | None = None, deployment: str | None = None,
                 api_version: str | None = None, token_provider: TokenProvider | None = None,
                 retry: RetryPolicy | None = None, timeout: float = 60.0,
                 headers: Mapping[str, str] | None = None) -> None:
        self.azure = azure_endpoint is not None
        if self.azure:
            if not (deployment and api_version):
                raise UsageError(f"{DIALECT}: Azure deployments need deployment=... and "
                                 "api_version=... (or use the v1 endpoint as base_url)")
            self.url = (f"{str(azure_endpoint).rstrip('/')}/openai/deployments/{deployment}"
                        "/chat/completions")
        else:
            root = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1")
            self.url = root.rstrip("/") + "/chat/completions"
        key = api_key if api_key is not None or self.azure else os.environ.get("OPENAI_API_KEY")
        self.api_key: Secret | None = Secret(key) if isinstance(key, str) else key
        if self.azure and (self.api_key is None) == (token_provider is None):
            raise UsageError(f"{DIALECT}: give Azure exactly one credential: api_key=... or "
                             "token_provider=...")
        self.api_version = api_version if self.azure else None
        self.token_provider = token_provider
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.extra_headers = dict(headers or {})

    def bearer(self) -> str | None:
        """The token provider's token (the sync client: a provider returning a str)."""
        if self.token_provider is None:
            return None
        token = self.token_provider()
        if not isinstance(token, str):
            if inspect.iscoroutine(token):
                token.close()
            raise UsageError(f"{DIALECT}: the sync client needs a token provider returning a "
                             "str; use AsyncChatClient with an async one")
        return token

    async def abearer(self) -> str | None:
        if self.token_provider is None:
            return None
        token = self.token_provider()
        return token if isinstance(token, str) else await token

    def headers(self, token: str | None) -> dict[str, str]:
        out = {"Content-Type": "application/json", "User-Agent": "toolbridge-openai-chat"}
        if token is not None:
            out["Authorization"] = f"Bearer {token}"
        elif self.api_key is not None:
            if self.azure:
                out["api-key"] = self.api_key.get()
            else:
                out["Authorization"] = f"Bearer {self.api_key.get()}"
        out.update(self.extra_headers)
        return out

    def request_for(self, call: Call[Any], token: str | None,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        headers = self.headers(token)
        headers["Accept"] = "text/event-stream" if call.stream else "application/json"
        params = {"api-version": self.api_version} if self.api_version else {}
        timeout = httpx.Timeout(self.timeout, read=None if call.stream else self.timeout)
        return httpx.Request(call.method, self.url + call.path, params=params, headers=headers,
                             content=json.dumps(call.body).encode(),
                             extensions={"timeout": timeout.as_dict()})

    def __repr__(self) -> str:
        return f"ChatConfig(url={self.url!r}, api_key={self.api_key!r})"


def _decode(response: httpx.Response) -> dict[str, Any]:
    raise_for_backend(response, f"{DIALECT}: create chat completion")
    return json_object(response, DIALECT)


def chunks_reader() -> JsonEvents:
    """A `toolbridge.http.Reader` of completion chunks; a drop ends them early, silently."""
    return JsonEvents(DIALECT, "<chunk>")



class ChatCalls:
    """The calls and flows of both clients (they send them; `config` says where)."""

    config: ChatConfig

    def _create(self, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", "", _decode, body={k: v for k, v in body.items() if k != "stream"})

    def _stream(self, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", "", _decode, body={**body, "stream": True}, stream=True,
                    what=DIALECT)

    def _stream_completion(self, on_chunk: OnChunk, body: Mapping[str, Any]
                           ) -> Flow[dict[str, Any]]:
        return (yield from assembled(self._stream(body), chunks_reader, ChunkAssembler,
                                     ChunkAssembler.completion, self.config.retry,
                                     f"{DIALECT}: the completion", on_chunk))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.config!r}>"
