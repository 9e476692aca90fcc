"""What both Responses clients share: request building, decoding, SSE frames."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from toolbridge import BackendError, WireFormatError
from toolbridge.http import SSEDecoder, raise_for_backend

from ._config import ClientConfig
from .wire import DIALECT, MAX_ITEMS_PER_CREATE

__all__ = ["ResponseStreamError", "Requests", "chunks", "decode", "sse_events"]


class ResponseStreamError(BackendError):
    """A stream broke off where nothing can recover it (before ``response.created``)."""


def decode(response: httpx.Response, what: str) -> Any:
    raise_for_backend(response, f"{DIALECT}: {what}")
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        raise WireFormatError(DIALECT, "<body>", f"{what}: answer is not JSON",
                              response.text[:2000]) from None


class _Frames:
    """SSE lines to decoded events; ``[DONE]`` ends the stream."""

    def __init__(self) -> None:
        self.decoder = SSEDecoder()
        self.finished = False

    def feed(self, line: str) -> Any:
        frame = self.decoder.feed(line)
        if frame is None:
            return None
        if frame[1].startswith("[DONE]"):
            self.finished = True
            return None
        try:
            return json.loads(frame[1])
        except ValueError:
            raise WireFormatError(DIALECT, "<event>", "event data is not JSON",
                                  frame[1][:2000]) from None


def sse_events(lines: Iterable[str]) -> Iterable[Any]:
    """Decoded events of SSE ``lines`` (sync); stops at ``[DONE]``."""
    frames = _Frames()
    for line in lines:
        event = frames.feed(line)
        if event is not None:
            yield event
        if frames.finished:
            return


def chunks(items: list[Any]) -> list[list[Any]]:
    """``items`` in requests of at most `MAX_ITEMS_PER_CREATE`."""
    return [items[i:i + MAX_ITEMS_PER_CREATE] for i in range(0, len(items),
                                                             MAX_ITEMS_PER_CREATE)] or [[]]


class Requests:
    """Builds every request; the sync and async clients send them."""

    config: ClientConfig

    def _url(self, path: str, project: bool = False) -> str:
        if project:
            if self.config.project_endpoint is None:
                raise BackendError(f"{DIALECT}: agent versions live on a Foundry project; "
                                   "construct the client with project_endpoint=...")
            return self.config.project_endpoint + path
        return self.config.base_url + path

    def _request(self, method: str, path: str, token: str | None, *, body: Any = None,
                 query: Mapping[str, Any] | None = None, stream: bool = False,
                 project: bool = False) -> httpx.Request:
        params = {k: v for k, v in (query or {}).items() if v is not None}
        if project:
            params["api-version"] = "v1"
        headers = self.config.headers(token)
        if stream:
            headers["Accept"] = "text/event-stream"
        timeout = httpx.Timeout(self.config.timeout, read=None if stream else
                                self.config.timeout)
        return httpx.Request(method, self._url(path, project), params=params, headers=headers,
                             content=None if body is None else json.dumps(body).encode(),
                             extensions={"timeout": timeout.as_dict()})

    def _create_body(self, fields: Mapping[str, Any], stream: bool) -> dict[str, Any]:
        body = dict(fields)
        if self.config.agent is not None and "agent_reference" not in body:
            body["agent_reference"] = self.config.agent
        if stream:
            body["stream"] = True
        else:
            body.pop("stream", None)
        return body

    @staticmethod
    def _attach_query(starting_after: int | None) -> dict[str, Any]:
        return {"stream": "true", "starting_after": starting_after}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.config!r}>"
