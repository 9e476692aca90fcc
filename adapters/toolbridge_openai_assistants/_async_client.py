"""`AsyncAssistantsClient`: the async form of `AssistantsClient` (same methods, awaited)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge import BackendError
from toolbridge.http import asend_with_retries, exclusive_transport

from ._base import _SSE, StreamEvent, _Base
from .wire import ACTIVE_STATUSES

__all__ = ["AsyncAssistantsClient"]

log = logging.getLogger("toolbridge.openai_assistants")


class AsyncAssistantsClient(_Base):
    """Async form of `AssistantsClient` (same methods, awaited; streams are async iterators)."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None, **options: Any) -> None:
        super().__init__(**options)
        # A connection per request in flight: httpx's pool makes concurrent requests (of a
        # worker's many runs) race for one connection.
        self._http = http_client or httpx.AsyncClient(
            timeout=self.timeout, transport=exclusive_transport())

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncAssistantsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _token(self) -> str | None:
        if self.token_provider is None:
            return None
        token = self.token_provider()
        if not isinstance(token, str):
            token = await token
        return token

    async def _call(self, method: str, path: str, what: str, body: Any = None,
                    query: Mapping[str, Any] | None = None,
                    run_ids: tuple[str, str] | None = None) -> Any:
        request = self._build(method, path, await self._token(), body, query)
        log.debug("%s %s", method, path)
        response = await asend_with_retries(self._http, request, self.retry)
        return self._decode(response, what, run_ids)

    async def _stream(self, path: str, body: dict[str, Any], what: str,
                      run_ids: tuple[str, str] | None = None) -> AsyncIterator[StreamEvent]:
        request = self._build("POST", path, await self._token(), {**body, "stream": True},
                              stream=True)
        response = await asend_with_retries(self._http, request, self.retry, stream=True,
                                            what=f"openai-assistants: {what}")
        try:
            if not response.is_success:
                await response.aread()
                self._decode(response, what, run_ids)
            parser = _SSE(what)
            broke: Exception | None = None
            try:
                async for line in response.aiter_lines():
                    frame = parser.feed(line)
                    if frame is not None:
                        yield frame
                    if parser.done:
                        return
            except httpx.TransportError as exc:
                broke = exc
            raise parser.interrupted(broke)
        finally:
            await response.aclose()

    # ------------------------------------------------------------------ resources
    async def create_assistant(self, *, model: str, tools: Sequence[Mapping[str, Any]] = (),
                               instructions: str | None = None, name: str | None = None,
                               **fields: Any) -> dict[str, Any]:
        """``POST /assistants``; on Azure ``model`` is the deployment name."""
        body = self._assistant_body(model, tools, instructions, name, fields)
        result: dict[str, Any] = await self._call("POST", "/assistants", "create assistant",
                                                  body)
        return result

    async def create_thread(self, **fields: Any) -> dict[str, Any]:
        """``POST /threads``."""
        result: dict[str, Any] = await self._call("POST", "/threads", "create thread", fields)
        return result

    async def create_message(self, thread_id: str, content: str, *, role: str = "user"
                             ) -> dict[str, Any]:
        """``POST /threads/{thread_id}/messages``."""
        result: dict[str, Any] = await self._call(
            "POST", f"/threads/{thread_id}/messages", "create message",
            {"role": role, "content": content})
        return result

    async def list_messages(self, thread_id: str, *, run_id: str | None = None,
                            order: str = "desc", limit: int = 20) -> list[dict[str, Any]]:
        """``GET /threads/{thread_id}/messages`` (one page)."""
        page = await self._call("GET", f"/threads/{thread_id}/messages", "list messages",
                                query={"run_id": run_id, "order": order, "limit": limit})
        return list(page.get("data", []))

    async def create_run(self, thread_id: str, assistant_id: str, **fields: Any
                         ) -> dict[str, Any]:
        """``POST /threads/{thread_id}/runs`` without streaming; returns the queued run."""
        result: dict[str, Any] = await self._call(
            "POST", f"/threads/{thread_id}/runs", "create run",
            {"assistant_id": assistant_id, **fields})
        return result

    def stream_run(self, thread_id: str, assistant_id: str, **fields: Any
                   ) -> AsyncIterator[StreamEvent]:
        """``POST /threads/{thread_id}/runs`` with ``stream: true``: the run's events."""
        return self._stream(f"/threads/{thread_id}/runs",
                            {"assistant_id": assistant_id, **fields}, "create run (stream)")

    async def retrieve_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """``GET /threads/{thread_id}/runs/{run_id}``."""
        result: dict[str, Any] = await self._call("GET", self._run_path(thread_id, run_id),
                                                  "retrieve run")
        return result

    async def poll_run(self, thread_id: str, run_id: str, *, timeout: float | None = None
                       ) -> dict[str, Any]:
        """Read the run until it leaves queued / in_progress / cancelling (see the sync form)."""
        started = time.monotonic()
        while True:
            run = await self.retrieve_run(thread_id, run_id)
            if run.get("status") not in ACTIVE_STATUSES:
                return run
            if timeout is not None and time.monotonic() - started > timeout:
                raise BackendError(f"openai-assistants: run {run_id} still "
                                   f"{run.get('status')} after {timeout:g} s", body=run)
            await asyncio.sleep(self.poll_delay())

    async def submit_tool_outputs(self, thread_id: str, run_id: str, body: Mapping[str, Any]
                                  ) -> dict[str, Any]:
        """``POST .../submit_tool_outputs`` with every output of the run; returns the run."""
        result: dict[str, Any] = await self._call(
            "POST", self._run_path(thread_id, run_id, "/submit_tool_outputs"),
            "submit tool outputs", dict(body), run_ids=(thread_id, run_id))
        return result

    def stream_submit_tool_outputs(self, thread_id: str, run_id: str,
                                   body: Mapping[str, Any]) -> AsyncIterator[StreamEvent]:
        """``submit_tool_outputs`` with ``stream: true``: the continued run's events."""
        return self._stream(self._run_path(thread_id, run_id, "/submit_tool_outputs"),
                            dict(body), "submit tool outputs (stream)", (thread_id, run_id))

    async def cancel_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """``POST .../cancel``."""
        result: dict[str, Any] = await self._call(
            "POST", self._run_path(thread_id, run_id, "/cancel"), "cancel run")
        return result
