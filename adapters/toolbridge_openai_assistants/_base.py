"""What both Assistants clients share: endpoints, credentials, errors, polling hints, SSE."""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx

from toolbridge import BackendError, UsageError
from toolbridge.http import (
    Call,
    RetryPolicy,
    Secret,
    SSEDecoder,
    raise_for_backend,
    transport_error,
)

from .wire import BETA_HEADER

__all__ = ["OPENAI_BASE_URL", "RunExpiredError", "StreamEvent", "StreamInterruptedError",
           "expired_error"]

log = logging.getLogger("toolbridge.openai_assistants")

OPENAI_BASE_URL = "https://api.openai.com/v1"
StreamEvent = tuple[str, Any]
"""``(event name, decoded data)`` of one SSE frame."""
TokenProvider = Callable[[], "str | Awaitable[str]"]


class RunExpiredError(BackendError):
    """The run expired (``status: "expired"``, or outputs refused because it had expired).

    Create a new run on the same thread to continue the conversation.
    """

    def __init__(self, message: str, *, thread_id: str, run_id: str,
                 expires_at: int | None = None, status: int | None = None,
                 body: Any = None) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.expires_at = expires_at
        super().__init__(message, status=status, body=body)


class StreamInterruptedError(BackendError):
    """An event stream broke off before its end; read the run again to learn its state."""


def expired_error(run: Mapping[str, Any], what: str = "") -> RunExpiredError:
    """The error for a run found in status ``expired``."""
    expires = run.get("expires_at")
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(expires)) if isinstance(
        expires, int) else "its expiry time"
    return RunExpiredError(
        f"openai-assistants: run {run.get('id')} on thread {run.get('thread_id')} expired at "
        f"{when}{what}; outputs can no longer be submitted. Start a new run on the thread.",
        thread_id=str(run.get("thread_id")), run_id=str(run.get("id")),
        expires_at=expires if isinstance(expires, int) else None, body=dict(run))


class _Base:
    """Endpoints, credentials, polling hints and expiry arithmetic shared by both clients."""

    def __init__(
        self, *, api_key: str | Secret | None = None, base_url: str | None = None,
        azure_endpoint: str | None = None, api_version: str | None = None,
        azure_ad_token_provider: TokenProvider | None = None,
        project_endpoint: str | None = None, credential: Any = None,
        retry: RetryPolicy | None = None, timeout: float = 60.0,
        poll_interval: float = 1.0, expiry_margin: float = 5.0,
    ) -> None:
        self.api_key = api_key if isinstance(api_key, Secret) or api_key is None else Secret(
            api_key)
        self.foundry = project_endpoint is not None
        """Foundry classic agents: the project endpoint, Entra tokens, ``api-version=v1``, no
        ``OpenAI-Beta`` header, no ``strict`` on functions."""
        if credential is not None:
            if azure_ad_token_provider is not None:
                raise UsageError("openai-assistants: give credential=... or "
                                 "azure_ad_token_provider=..., not both")
            azure_ad_token_provider = _token_provider(credential)
        self.azure = azure_endpoint is not None or self.foundry
        if self.foundry:
            if azure_endpoint is not None or base_url is not None:
                raise UsageError("openai-assistants: project_endpoint=... replaces "
                                 "azure_endpoint and base_url")
            if self.api_key is not None or azure_ad_token_provider is None:
                raise UsageError("openai-assistants: Foundry classic agents take an Entra "
                                 "token: credential=... (azure-identity) or "
                                 "azure_ad_token_provider=..., no api_key")
            if api_version not in (None, "v1"):
                raise UsageError("openai-assistants: Foundry classic agents use "
                                 "api_version='v1'")
            api_version = "v1"
            self.base_url = str(project_endpoint).rstrip("/")
        elif self.azure:
            if not api_version:
                raise UsageError("openai-assistants: Azure needs api_version=... (e.g. "
                                 "'2024-07-01-preview'; Assistants function calling needs "
                                 "2024-02-15-preview or later)")
            if (self.api_key is None) == (azure_ad_token_provider is None):
                raise UsageError("openai-assistants: give Azure exactly one credential: "
                                 "api_key=... or azure_ad_token_provider=...")
            self.base_url = str(azure_endpoint).rstrip("/") + "/openai"
        else:
            if self.api_key is None:
                raise UsageError("openai-assistants: api_key=... is required for OpenAI")
            if azure_ad_token_provider is not None:
                raise UsageError("openai-assistants: azure_ad_token_provider needs "
                                 "azure_endpoint=...")
            self.base_url = (base_url or OPENAI_BASE_URL).rstrip("/")
        self.api_version = api_version if self.azure else None
        self.token_provider = azure_ad_token_provider
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.poll_interval = poll_interval
        """Seconds between polls when the server sends no ``openai-poll-after-ms``."""
        self.expiry_margin = expiry_margin
        """Seconds before ``expires_at`` after which no handler is started."""
        self.poll_after: float | None = None
        """The last ``openai-poll-after-ms`` hint, in seconds (updated on every response)."""

    def __repr__(self) -> str:
        kind = "foundry" if self.foundry else "azure" if self.azure else "openai"
        return f"<{type(self).__name__} {kind} {self.base_url}>"

    # ------------------------------------------------------------------ requests
    def _headers(self, token: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if not self.foundry:
            headers[BETA_HEADER[0]] = BETA_HEADER[1]
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        elif self.api_key is not None:
            if self.azure:
                headers["api-key"] = self.api_key.get()
            else:
                headers["Authorization"] = f"Bearer {self.api_key.get()}"
        return headers

    def _decode(self, response: httpx.Response, what: str, run_ids: tuple[str, str] | None
                ) -> Any:
        self._note_poll_hint(response)
        if response.status_code == 400 and run_ids is not None:
            text = response.text
            if "do not accept tool outputs" in text and "expired" in text:
                raise RunExpiredError(
                    f"openai-assistants: {what}: run {run_ids[1]} on thread {run_ids[0]} has "
                    "expired and no longer accepts tool outputs. Start a new run.",
                    thread_id=run_ids[0], run_id=run_ids[1], status=400,
                    body=_json_or_text(response))
        raise_for_backend(response, f"openai-assistants: {what}")
        return response.json()

    def _note_poll_hint(self, response: httpx.Response) -> None:
        hint = response.headers.get("openai-poll-after-ms")
        if hint:
            with contextlib.suppress(ValueError):
                self.poll_after = max(float(hint), 0.0) / 1000

    def poll_delay(self) -> float:
        """Seconds to wait before the next poll: the latest server hint, else `poll_interval`."""
        return self.poll_after if self.poll_after is not None else self.poll_interval

    # ------------------------------------------------------------------ expiry
    def seconds_left(self, run: Mapping[str, Any]) -> float | None:
        """Seconds until the run's ``expires_at`` (negative when past); ``None`` if unknown."""
        expires = run.get("expires_at")
        return float(expires) - time.time() if isinstance(expires, (int, float)) else None

    def can_finish(self, run: Mapping[str, Any], estimate: float | None) -> bool:
        """Whether work taking ``estimate`` seconds ends ``expiry_margin`` before expiry."""
        left = self.seconds_left(run)
        return left is None or (estimate or 0.0) + self.expiry_margin <= left

    # ------------------------------------------------------------------ paths and bodies
    @staticmethod
    def _run_path(thread_id: str, run_id: str, tail: str = "") -> str:
        return f"/threads/{thread_id}/runs/{run_id}{tail}"

    def _assistant_body(self, model: str, tools: Sequence[Mapping[str, Any]],
                        instructions: str | None, name: str | None,
                        fields: Mapping[str, Any]) -> dict[str, Any]:
        if self.foundry:  # FunctionDefinition there has name, description, parameters
            tools = [_without_strict(t) for t in tools]
        body: dict[str, Any] = {"model": model, "tools": list(tools), **fields}
        if instructions is not None:
            body["instructions"] = instructions
        if name is not None:
            body["name"] = name
        return body


class Endpoint:
    """Where an Assistants client's calls go and how they are signed (a
    `toolbridge.http.Endpoint`): its base URL, credential and API version."""

    __slots__ = ("client",)

    def __init__(self, client: _Base) -> None:
        self.client = client

    @property
    def retry(self) -> RetryPolicy:
        return self.client.retry

    def bearer(self) -> str | None:
        """The token provider's token (the sync client: a provider returning a str)."""
        provider = self.client.token_provider
        if provider is None:
            return None
        token = provider()
        if not isinstance(token, str):
            if inspect.iscoroutine(token):
                token.close()
            raise UsageError("openai-assistants: the sync client needs a token provider "
                             "returning a str (not an awaitable)")
        return token

    async def abearer(self) -> str | None:
        provider = self.client.token_provider
        if provider is None:
            return None
        token = provider()
        if not isinstance(token, str):
            token = await token
        return token

    def request_for(self, call: Call[Any], token: str | None,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        client = self.client
        params: dict[str, Any] = {k: v for k, v in (call.params or {}).items()
                                  if v is not None}
        if client.api_version:
            params["api-version"] = client.api_version
        headers = client._headers(token)
        if call.stream:
            headers["Accept"] = "text/event-stream"
        content = None if call.body is None else json.dumps(call.body).encode()
        log.debug("%s %s", call.method, call.path)
        return httpx.Request(call.method, client.base_url + call.path, params=params,
                             headers=headers, content=content)


FOUNDRY_SCOPE = "https://ai.azure.com/.default"


def _token_provider(credential: Any) -> TokenProvider:
    """An azure-core ``TokenCredential`` (sync or async) as a token provider."""

    def sync() -> str:
        return str(credential.get_token(FOUNDRY_SCOPE).token)

    async def asynchronous() -> str:
        return str((await credential.get_token(FOUNDRY_SCOPE)).token)

    return asynchronous if inspect.iscoroutinefunction(credential.get_token) else sync


def _without_strict(tool: Mapping[str, Any]) -> dict[str, Any]:
    function = tool.get("function")
    if tool.get("type") != "function" or not isinstance(function, Mapping):
        return dict(tool)
    return {**tool, "function": {k: v for k, v in function.items() if k != "strict"}}


def _json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text[:2000]


class _SSE:
    """Incremental SSE parser: feed lines, get ``(event, data)`` frames; ``done`` at [DONE]."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.frames = SSEDecoder()
        self.done = False

    @property
    def finished(self) -> bool:
        return self.done

    def ended(self, broke: Exception | None) -> None:
        raise self.interrupted(broke)

    def feed(self, line: str) -> StreamEvent | None:
        frame = self.frames.feed(line)
        if frame is None:
            return None
        name, raw = frame
        if raw.startswith("[DONE]"):
            self.done = True
            return None
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise BackendError(f"openai-assistants: {self.what}: event {name!r} is not "
                               f"JSON: {exc}") from None
        if name == "error":
            message = data.get("message") if isinstance(data, dict) else data
            raise BackendError(f"openai-assistants: {self.what}: error event: {message}",
                               body=data)
        return name, data

    def interrupted(self, broke: Exception | None) -> StreamInterruptedError:
        """The error of a stream that ended before [DONE] (``broke``: the transport error that
        cut it; raise this outside its ``except`` so that it is not chained to ours)."""
        if broke is not None:
            where = f"openai-assistants: {self.what}: stream broke off"
            return StreamInterruptedError(str(transport_error(where, broke)))
        return StreamInterruptedError(f"openai-assistants: {self.what}: stream ended "
                                      "without [DONE]")
