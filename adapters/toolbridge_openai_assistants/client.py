"""HTTP client for Assistants runs on OpenAI and Azure OpenAI (sync and async, httpx)."""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge import BackendError, UsageError
from toolbridge.http import send_with_retries

from ._async_client import AsyncAssistantsClient
from ._base import (
    _SSE,
    OPENAI_BASE_URL,
    RunExpiredError,
    StreamEvent,
    StreamInterruptedError,
    _Base,
    expired_error,
)
from .wire import ACTIVE_STATUSES

__all__ = [
    "OPENAI_BASE_URL",
    "AssistantsClient",
    "AsyncAssistantsClient",
    "RunExpiredError",
    "StreamEvent",
    "StreamInterruptedError",
    "expired_error",
]

log = logging.getLogger("toolbridge.openai_assistants")


class AssistantsClient(_Base):
    """Blocking client. OpenAI: ``api_key`` (+ ``base_url``); Azure: ``azure_endpoint``,
    ``api_version`` and ``api_key`` or ``azure_ad_token_provider``."""

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Any) -> None:
        super().__init__(**options)
        self._http = http_client or httpx.Client(timeout=self.timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> AssistantsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _token(self) -> str | None:
        if self.token_provider is None:
            return None
        token = self.token_provider()
        if not isinstance(token, str):
            if inspect.iscoroutine(token):
                token.close()
            raise UsageError("openai-assistants: the sync client needs a token provider "
                             "returning a str (not an awaitable)")
        return token

    def _call(self, method: str, path: str, what: str, body: Any = None,
              query: Mapping[str, Any] | None = None,
              run_ids: tuple[str, str] | None = None) -> Any:
        request = self._build(method, path, self._token(), body, query)
        log.debug("%s %s", method, path)
        return self._decode(send_with_retries(self._http, request, self.retry), what, run_ids)

    def _stream(self, path: str, body: dict[str, Any], what: str,
                run_ids: tuple[str, str] | None = None) -> Iterator[StreamEvent]:
        request = self._build("POST", path, self._token(), {**body, "stream": True}, stream=True)
        response = send_with_retries(self._http, request, self.retry, stream=True,
                                     what=f"openai-assistants: {what}")
        try:
            if not response.is_success:
                response.read()
                self._decode(response, what, run_ids)
            parser = _SSE(what)
            broke: Exception | None = None
            try:
                for line in response.iter_lines():
                    frame = parser.feed(line)
                    if frame is not None:
                        yield frame
                    if parser.done:
                        return
            except httpx.TransportError as exc:
                broke = exc
            raise parser.interrupted(broke)
        finally:
            response.close()

    # ------------------------------------------------------------------ resources
    def create_assistant(self, *, model: str, tools: Sequence[Mapping[str, Any]] = (),
                         instructions: str | None = None, name: str | None = None,
                         **fields: Any) -> dict[str, Any]:
        """``POST /assistants``; on Azure ``model`` is the deployment name."""
        body = self._assistant_body(model, tools, instructions, name, fields)
        result: dict[str, Any] = self._call("POST", "/assistants", "create assistant", body)
        return result

    def create_thread(self, **fields: Any) -> dict[str, Any]:
        """``POST /threads``."""
        result: dict[str, Any] = self._call("POST", "/threads", "create thread", fields)
        return result

    def create_message(self, thread_id: str, content: str, *, role: str = "user"
                       ) -> dict[str, Any]:
        """``POST /threads/{thread_id}/messages``."""
        result: dict[str, Any] = self._call(
            "POST", f"/threads/{thread_id}/messages", "create message",
            {"role": role, "content": content})
        return result

    def list_messages(self, thread_id: str, *, run_id: str | None = None,
                      order: str = "desc", limit: int = 20, after: str | None = None
                      ) -> list[dict[str, Any]]:
        """``GET /threads/{thread_id}/messages`` (one page)."""
        page = self._call("GET", f"/threads/{thread_id}/messages", "list messages",
                          query={"run_id": run_id, "order": order, "limit": limit,
                                 "after": after})
        return list(page.get("data", []))

    def retrieve_assistant(self, assistant_id: str) -> dict[str, Any]:
        """``GET /assistants/{assistant_id}``."""
        result: dict[str, Any] = self._call("GET", f"/assistants/{assistant_id}",
                                            "retrieve assistant")
        return result

    def retrieve_thread(self, thread_id: str) -> dict[str, Any]:
        """``GET /threads/{thread_id}``."""
        result: dict[str, Any] = self._call("GET", f"/threads/{thread_id}", "retrieve thread")
        return result

    def list_deployments(self) -> dict[str, str]:
        """Foundry classic: ``GET {project}/deployments``, each model deployment's name and
        the model it serves (``modelName``)."""
        if not self.foundry:
            raise UsageError("openai-assistants: only a Foundry project lists its deployments "
                             "(project_endpoint=...)")
        page = self._call("GET", "/deployments", "list deployments")
        return {str(d["name"]): str(d.get("modelName") or "") for d in page.get("value") or []
                if d.get("type", "ModelDeployment") == "ModelDeployment"}

    def iterate(self, path: str, what: str) -> Iterator[dict[str, Any]]:
        """Every object of a list endpoint (``/assistants``, ``/threads/{id}/messages``;
        ``/threads`` on Foundry classic only), oldest first, 100 per page."""
        after = None
        while True:
            page = self._call("GET", path, what,
                              query={"order": "asc", "limit": 100, "after": after})
            data = list(page.get("data") or [])
            yield from data
            if not page.get("has_more") or not data:
                return
            after = data[-1]["id"]

    def create_run(self, thread_id: str, assistant_id: str, **fields: Any) -> dict[str, Any]:
        """``POST /threads/{thread_id}/runs`` without streaming; returns the queued run."""
        result: dict[str, Any] = self._call(
            "POST", f"/threads/{thread_id}/runs", "create run",
            {"assistant_id": assistant_id, **fields})
        return result

    def stream_run(self, thread_id: str, assistant_id: str, **fields: Any
                   ) -> Iterator[StreamEvent]:
        """``POST /threads/{thread_id}/runs`` with ``stream: true``: the run's events."""
        return self._stream(f"/threads/{thread_id}/runs",
                            {"assistant_id": assistant_id, **fields}, "create run (stream)")

    def retrieve_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """``GET /threads/{thread_id}/runs/{run_id}``."""
        result: dict[str, Any] = self._call("GET", self._run_path(thread_id, run_id),
                                            "retrieve run")
        return result

    def poll_run(self, thread_id: str, run_id: str, *, timeout: float | None = None
                 ) -> dict[str, Any]:
        """Read the run until it leaves queued / in_progress / cancelling.

        Waits the latest ``openai-poll-after-ms`` between reads (else `poll_interval`).
        """
        started = time.monotonic()
        while True:
            run = self.retrieve_run(thread_id, run_id)
            if run.get("status") not in ACTIVE_STATUSES:
                return run
            if timeout is not None and time.monotonic() - started > timeout:
                raise BackendError(f"openai-assistants: run {run_id} still "
                                   f"{run.get('status')} after {timeout:g} s", body=run)
            time.sleep(self.poll_delay())

    def submit_tool_outputs(self, thread_id: str, run_id: str, body: Mapping[str, Any]
                            ) -> dict[str, Any]:
        """``POST .../submit_tool_outputs`` with every output of the run; returns the run."""
        result: dict[str, Any] = self._call(
            "POST", self._run_path(thread_id, run_id, "/submit_tool_outputs"),
            "submit tool outputs", dict(body), run_ids=(thread_id, run_id))
        return result

    def stream_submit_tool_outputs(self, thread_id: str, run_id: str,
                                   body: Mapping[str, Any]) -> Iterator[StreamEvent]:
        """``submit_tool_outputs`` with ``stream: true``: the continued run's events."""
        return self._stream(self._run_path(thread_id, run_id, "/submit_tool_outputs"),
                            dict(body), "submit tool outputs (stream)", (thread_id, run_id))

    def cancel_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """``POST .../cancel``."""
        result: dict[str, Any] = self._call(
            "POST", self._run_path(thread_id, run_id, "/cancel"), "cancel run")
        return result
