"""``generateContent`` described once: the endpoint (`GeminiConfig`) and the calls both
clients send."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

import httpx

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

from .wire import API_VERSION, DEFAULT_BASE_URL, DIALECT

__all__ = ["GeminiCalls", "GeminiConfig", "ResponseAssembler", "chunks_reader"]

OnChunk = Callable[[dict[str, Any]], None] | None


class GeminiConfig:
    """Endpoint, key and retries shared by both clients; the `toolbridge.http.Endpoint` of
    their calls. The key goes in the ``x-goog-api-key`` header (never in the URL)."""

    def __init__(self, *, base_url: str | None = None, api_key: str | Secret | None = None,
                 api_version: str = API_VERSION, retry: RetryPolicy | None = None,
                 timeout: float = 120.0, headers: Mapping[str, str] | None = None) -> None:
        root = base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or DEFAULT_BASE_URL
        self.url = f"{root.rstrip('/')}/{api_version}"
        # google-genai's order: GOOGLE_API_KEY wins when both are set.
        key = api_key if api_key is not None else (
            os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"))
        self.api_key: Secret | None = Secret(key) if isinstance(key, str) else key
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.extra_headers = dict(headers or {})

    def bearer(self) -> None:
        return None

    async def abearer(self) -> None:
        return None

    def request_for(self, call: Call[Any], token: Any,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        headers = {"Content-Type": "application/json", "User-Agent": "toolbridge-gemini"}
        if self.api_key is not None:
            headers["x-goog-api-key"] = self.api_key.get()
        headers["Accept"] = "text/event-stream" if call.stream else "application/json"
        headers.update(self.extra_headers)
        params = {"alt": "sse"} if call.stream else {}
        timeout = httpx.Timeout(self.timeout, read=None if call.stream else self.timeout)
        return httpx.Request(call.method, self.url + call.path, params=params, headers=headers,
                             content=json.dumps(call.body).encode(),
                             extensions={"timeout": timeout.as_dict()})

    def __repr__(self) -> str:
        return f"GeminiConfig(url={self.url!r}, api_key={self.api_key!r})"


def _decode(response: httpx.Response) -> dict[str, Any]:
    raise_for_backend(response, f"{DIALECT}: generate content")
    return json_object(response, DIALECT)


def chunks_reader() -> JsonEvents:
    """A `toolbridge.http.Reader` of ``streamGenerateContent?alt=sse`` chunks (each a
    ``GenerateContentResponse``); a drop ends them early, silently."""
    return JsonEvents(DIALECT, "<chunk>")


class ResponseAssembler:
    """Chunks of one streamed response → the ``GenerateContentResponse`` they make: the
    first candidate's parts in order (text pieces joined), its last ``finishReason``."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.head: dict[str, Any] = {}
        self.finish: str | None = None
        self.role = "model"

    def feed(self, chunk: Mapping[str, Any]) -> None:
        for key in ("responseId", "modelVersion", "usageMetadata", "promptFeedback"):
            if key in chunk:
                self.head[key] = chunk[key]
        candidates = chunk.get("candidates") or [{}]
        candidate = candidates[0] if isinstance(candidates[0], Mapping) else {}
        content = candidate.get("content") or {}
        self.role = content.get("role", self.role)
        for part in content.get("parts") or ():
            last = self.parts[-1] if self.parts else None
            if last is not None and set(part) == {"text"} and set(last) == {"text"}:
                last["text"] += part["text"]
            else:
                self.parts.append(dict(part))
        if candidate.get("finishReason"):
            self.finish = candidate["finishReason"]

    @property
    def finished(self) -> bool:
        return self.finish is not None

    def response(self) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": self.role, "parts": self.parts},
                                     "index": 0}
        if self.finish:
            candidate["finishReason"] = self.finish
        return {"candidates": [candidate], **self.head}



def _model_path(model: str, method: str) -> str:
    name = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
    return f"/{quote(name, safe='/')}:{method}"


class GeminiCalls:
    """The calls and flows of both clients (they send them; `config` says where)."""

    config: GeminiConfig

    def _generate(self, model: str, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", _model_path(model, "generateContent"), _decode, body=dict(body))

    def _stream(self, model: str, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", _model_path(model, "streamGenerateContent"), _decode,
                    body=dict(body), stream=True, what=DIALECT)

    def _stream_response(self, model: str, on_chunk: OnChunk, body: Mapping[str, Any]
                         ) -> Flow[dict[str, Any]]:
        return (yield from assembled(self._stream(model, body), chunks_reader,
                                     ResponseAssembler, ResponseAssembler.response,
                                     self.config.retry, f"{DIALECT}: the response", on_chunk))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.config!r}>"
