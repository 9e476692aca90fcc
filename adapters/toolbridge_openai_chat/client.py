"""HTTP clients for Chat Completions on any OpenAI-compatible server (httpx): `ChatClient`
(sync) and `AsyncChatClient`.

OpenAI, vLLM, Ollama, LiteLLM: ``base_url`` (``.../v1``) and ``api_key``. Azure OpenAI:
``azure_endpoint`` + ``deployment`` + ``api_version`` (``/openai/deployments/{name}/chat/
completions?api-version=...``, ``api-key`` or an Entra ``token_provider``), or its v1 form as
a plain ``base_url`` (``https://RES.openai.azure.com/openai/v1``). Chat is stateless: a
dropped stream is sent again (the model runs again; nothing was answered yet), bounded by
``retry.max_attempts``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any

import httpx

from toolbridge import BackendError, UsageError, WireFormatError
from toolbridge.http import (
    RetryPolicy,
    Secret,
    SSEDecoder,
    asend_with_retries,
    exclusive_transport,
    raise_for_backend,
    send_with_retries,
)

from .stream import ChunkAssembler
from .wire import DIALECT

__all__ = ["AsyncChatClient", "ChatClient", "ChatConfig"]

TokenProvider = Callable[[], "str | Awaitable[str]"]
_BROKEN = (httpx.TransportError, httpx.StreamError)


class ChatConfig:
    """Endpoint, credentials and retries shared by both clients (see the module docstring)."""

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

    def request(self, body: Mapping[str, Any], token: str | None, stream: bool
                ) -> httpx.Request:
        fields = {**body, "stream": True} if stream else {
            k: v for k, v in body.items() if k != "stream"}
        headers = self.headers(token)
        headers["Accept"] = "text/event-stream" if stream else "application/json"
        params = {"api-version": self.api_version} if self.api_version else {}
        timeout = httpx.Timeout(self.timeout, read=None if stream else self.timeout)
        return httpx.Request("POST", self.url, params=params, headers=headers,
                             content=json.dumps(fields).encode(),
                             extensions={"timeout": timeout.as_dict()})

    def __repr__(self) -> str:
        return f"ChatConfig(url={self.url!r}, api_key={self.api_key!r})"


def _decode(response: httpx.Response) -> dict[str, Any]:
    raise_for_backend(response, f"{DIALECT}: create chat completion")
    try:
        data = response.json()
    except ValueError:
        raise WireFormatError(DIALECT, "<body>", "answer is not JSON",
                              response.text[:2000]) from None
    if not isinstance(data, dict):
        raise WireFormatError(DIALECT, "<body>", "expected an object", data)
    return data


def _chunk(frame: tuple[str, str]) -> Any:
    try:
        return json.loads(frame[1])
    except ValueError:
        raise WireFormatError(DIALECT, "<chunk>", "chunk data is not JSON",
                              frame[1][:2000]) from None


class ChatClient:
    """Blocking client; options as `ChatConfig`."""

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Any) -> None:
        self.config = ChatConfig(**options)
        self._owns = http_client is None
        self._http = http_client or httpx.Client(timeout=self.config.timeout)

    def _token(self) -> str | None:
        if self.config.token_provider is None:
            return None
        token = self.config.token_provider()
        if not isinstance(token, str):
            if inspect.iscoroutine(token):
                token.close()
            raise UsageError(f"{DIALECT}: the sync client needs a token provider returning a "
                             "str; use AsyncChatClient with an async one")
        return token

    def create(self, **body: Any) -> dict[str, Any]:
        """``POST /chat/completions``: ``model``, ``messages``, ``tools``, ... as keywords."""
        request = self.config.request(body, self._token(), False)
        return _decode(send_with_retries(self._http, request, self.config.retry))

    def stream(self, **body: Any) -> Iterator[dict[str, Any]]:
        """``stream: true``: the chunks as they arrive (a drop ends them early, silently)."""
        request = self.config.request(body, self._token(), True)
        response = send_with_retries(self._http, request, self.config.retry, stream=True,
                                    what=DIALECT)
        try:
            if not response.is_success:
                response.read()
                _decode(response)
            frames = SSEDecoder()
            try:
                for line in response.iter_lines():
                    frame = frames.feed(line)
                    if frame is not None:
                        if frame[1].startswith("[DONE]"):
                            return
                        yield _chunk(frame)
            except _BROKEN:
                return
        finally:
            response.close()

    def stream_completion(self, *, on_chunk: Callable[[dict[str, Any]], None] | None = None,
                          **body: Any) -> dict[str, Any]:
        """Stream and assemble one completion; a stream that drops before every choice has
        its ``finish_reason`` is sent again (``retry.max_attempts`` in all)."""
        for attempt in range(1, self.config.retry.max_attempts + 1):
            assembler = ChunkAssembler()
            for chunk in self.stream(**body):
                assembler.feed(chunk)
                if on_chunk is not None:
                    on_chunk(chunk)
            if assembler.finished:
                return assembler.completion()
            time.sleep(self.config.retry.delay(attempt, None))
        raise BackendError(f"{DIALECT}: the stream broke off {self.config.retry.max_attempts} "
                           "times before the completion finished")

    def close(self) -> None:
        if self._owns:
            self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ChatClient {self.config!r}>"


class AsyncChatClient:
    """Async form of `ChatClient` (same methods, awaited; `stream` is an async iterator)."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None, **options: Any) -> None:
        self.config = ChatConfig(**options)
        self._owns = http_client is None
        # A connection per request in flight: httpx's pool makes the concurrent requests of a
        # worker's many conversations race for one connection.
        self._http = http_client or httpx.AsyncClient(
            timeout=self.config.timeout, transport=exclusive_transport())

    async def _token(self) -> str | None:
        if self.config.token_provider is None:
            return None
        token = self.config.token_provider()
        return token if isinstance(token, str) else await token

    async def create(self, **body: Any) -> dict[str, Any]:
        """``POST /chat/completions``."""
        request = self.config.request(body, await self._token(), False)
        return _decode(await asend_with_retries(self._http, request, self.config.retry))

    async def stream(self, **body: Any) -> AsyncIterator[dict[str, Any]]:
        """``stream: true``: the chunks as they arrive."""
        request = self.config.request(body, await self._token(), True)
        response = await asend_with_retries(self._http, request, self.config.retry, stream=True,
                                           what=DIALECT)
        try:
            if not response.is_success:
                await response.aread()
                _decode(response)
            frames = SSEDecoder()
            try:
                async for line in response.aiter_lines():
                    frame = frames.feed(line)
                    if frame is not None:
                        if frame[1].startswith("[DONE]"):
                            return
                        yield _chunk(frame)
            except _BROKEN:
                return
        finally:
            await response.aclose()

    async def stream_completion(
            self, *, on_chunk: Callable[[dict[str, Any]], None] | None = None,
            **body: Any) -> dict[str, Any]:
        """See `ChatClient.stream_completion`."""
        for attempt in range(1, self.config.retry.max_attempts + 1):
            assembler = ChunkAssembler()
            async for chunk in self.stream(**body):
                assembler.feed(chunk)
                if on_chunk is not None:
                    on_chunk(chunk)
            if assembler.finished:
                return assembler.completion()
            await asyncio.sleep(self.config.retry.delay(attempt, None))
        raise BackendError(f"{DIALECT}: the stream broke off {self.config.retry.max_attempts} "
                           "times before the completion finished")

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<AsyncChatClient {self.config!r}>"
