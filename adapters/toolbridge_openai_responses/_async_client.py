"""`AsyncResponsesClient`: the async form of `ResponsesClient` (same methods, awaited)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import httpx

from toolbridge import BackendError, WireFormatError
from toolbridge.http import SSEDecoder, asend_with_retries, exclusive_transport

from ._config import ClientConfig
from ._gather import StreamGatherer
from ._requests import Requests, ResponseStreamError, chunks, decode
from .wire import ACTIVE_STATUSES, DIALECT

__all__ = ["AsyncResponsesClient"]

OnEvent = Callable[[dict[str, Any]], None] | None
_BROKEN = (httpx.TransportError, httpx.StreamError)


class AsyncResponsesClient(Requests):
    """Async client; see `ResponsesClient` for the options and the recovery rules. An async
    ``credential`` (``azure.identity.aio``) or awaitable ``token_provider`` works here."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None, **options: Any) -> None:
        self.config = ClientConfig(**options)
        self._owns = http_client is None
        # A connection per request in flight: httpx's pool makes the concurrent requests of a
        # worker's many conversations race for one connection.
        self._http = http_client or httpx.AsyncClient(
            timeout=self.config.timeout, transport=exclusive_transport())

    async def _send(self, method: str, path: str, what: str, *, idempotent: bool = True,
                    **parts: Any) -> Any:
        request = self._request(method, path, await self.config.abearer(), **parts)
        return decode(await asend_with_retries(self._http, request, self.config.retry,
                                               idempotent=idempotent), what)

    # ------------------------------------------------------------------ responses
    async def create(self, **body: Any) -> dict[str, Any]:
        """``POST /responses``."""
        result: dict[str, Any] = await self._send("POST", "/responses", "create response",
                                                  idempotent=False,
                                                  body=self._create_body(body, False))
        return result

    async def retrieve(self, response_id: str) -> dict[str, Any]:
        """``GET /responses/{id}``."""
        result: dict[str, Any] = await self._send("GET", f"/responses/{response_id}",
                                                  f"retrieve response {response_id}")
        return result

    async def poll(self, response_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        """Read the response until it is no longer ``queued`` or ``in_progress``."""
        started = time.monotonic()
        while True:
            response = await self.retrieve(response_id)
            if response.get("status") not in ACTIVE_STATUSES:
                return response
            if timeout is not None and time.monotonic() - started > timeout:
                raise BackendError(f"{DIALECT}: response {response_id} still "
                                   f"{response.get('status')} after {timeout:g} s",
                                   body=response)
            await asyncio.sleep(self.config.poll_interval)

    async def cancel(self, response_id: str) -> dict[str, Any]:
        """``POST /responses/{id}/cancel``."""
        result: dict[str, Any] = await self._send("POST", f"/responses/{response_id}/cancel",
                                                  f"cancel response {response_id}")
        return result

    async def events(self, request: httpx.Request, *, idempotent: bool
                     ) -> AsyncIterator[dict[str, Any]]:
        """The decoded events of one stream request; ends quietly when the stream drops."""
        where = f"{DIALECT}: {request.method} {request.url.path}"
        response = await asend_with_retries(self._http, request, self.config.retry, stream=True,
                                            idempotent=idempotent, what=where)
        try:
            if not response.is_success:
                await response.aread()
                decode(response, f"stream {request.url.path}")
            frames = SSEDecoder()
            try:
                async for line in response.aiter_lines():
                    frame = frames.feed(line)
                    if frame is None:
                        continue
                    if frame[1].startswith("[DONE]"):
                        return
                    try:
                        yield json.loads(frame[1])
                    except ValueError:
                        raise WireFormatError(DIALECT, "<event>", "event data is not JSON",
                                              frame[1][:2000]) from None
            except _BROKEN:
                return
        finally:
            await response.aclose()

    async def stream(self, **body: Any) -> AsyncIterator[dict[str, Any]]:
        """``POST /responses`` with ``stream: true``: its events."""
        request = self._request("POST", "/responses", await self.config.abearer(),
                                body=self._create_body(body, True), stream=True)
        async for event in self.events(request, idempotent=False):
            yield event

    async def attach(self, response_id: str, *, starting_after: int | None = None
                     ) -> AsyncIterator[dict[str, Any]]:
        """Re-attach to a background response's stream after sequence number N."""
        request = self._request("GET", f"/responses/{response_id}",
                                await self.config.abearer(),
                                query=self._attach_query(starting_after), stream=True)
        async for event in self.events(request, idempotent=True):
            yield event

    async def stream_response(self, *, on_event: OnEvent = None, **body: Any
                              ) -> dict[str, Any]:
        """See `ResponsesClient.stream_response`."""
        gatherer = StreamGatherer()
        await self._gather(self.stream(**body), gatherer, on_event)
        attempt = 0
        while not gatherer.done:
            if gatherer.response_id is None:
                raise ResponseStreamError(f"{DIALECT}: the stream broke off before "
                                          "response.created; the response id is unknown")
            attempt += 1
            if not gatherer.background or attempt >= self.config.retry.max_attempts:
                return await self.poll(gatherer.response_id)
            await asyncio.sleep(self.config.retry.delay(attempt, None))
            await self._gather(self.attach(gatherer.response_id,
                                           starting_after=gatherer.last_sequence),
                               gatherer, on_event)
        return gatherer.result()

    @staticmethod
    async def _gather(events: AsyncIterator[dict[str, Any]], gatherer: StreamGatherer,
                      on_event: OnEvent) -> None:
        async for event in events:
            if gatherer.feed(event) and on_event is not None:
                on_event(event)
            if gatherer.done:
                break
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()

    # ------------------------------------------------------------------ conversations
    async def create_conversation(self, items: Sequence[Mapping[str, Any]] = (), *,
                                  metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``POST /conversations``; more than 20 items are added in further requests."""
        first, *rest = chunks([dict(i) for i in items])
        body: dict[str, Any] = {"items": first}
        if metadata is not None:
            body["metadata"] = dict(metadata)
        conversation: dict[str, Any] = await self._send(
            "POST", "/conversations", "create conversation", idempotent=False, body=body)
        for part in rest:
            await self.add_items(conversation["id"], part)
        return conversation

    async def retrieve_conversation(self, conversation_id: str) -> dict[str, Any]:
        """``GET /conversations/{id}``."""
        result: dict[str, Any] = await self._send("GET", f"/conversations/{conversation_id}",
                                                  f"retrieve conversation {conversation_id}")
        return result

    async def add_items(self, conversation_id: str, items: Sequence[Mapping[str, Any]]
                        ) -> list[dict[str, Any]]:
        """``POST /conversations/{id}/items`` (20 per request): the items as stored."""
        added: list[dict[str, Any]] = []
        for part in chunks([dict(i) for i in items]):
            page = await self._send("POST", f"/conversations/{conversation_id}/items",
                                    f"add items to {conversation_id}", idempotent=False,
                                    body={"items": part})
            added += page.get("data", [])
        return added

    async def list_items(self, conversation_id: str, *, after: str | None = None,
                         limit: int = 20, order: str = "asc") -> dict[str, Any]:
        """One page of ``GET /conversations/{id}/items``."""
        result: dict[str, Any] = await self._send(
            "GET", f"/conversations/{conversation_id}/items",
            f"list items of {conversation_id}",
            query={"after": after, "limit": limit, "order": order})
        return result

    async def all_items(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every item of the conversation, oldest first (all pages)."""
        items: list[dict[str, Any]] = []
        after = None
        while True:
            page = await self.list_items(conversation_id, after=after, limit=100)
            items += page.get("data", [])
            if not page.get("has_more") or not page.get("last_id"):
                return items
            after = page["last_id"]

    async def create_agent_version(self, name: str, *, definition: Mapping[str, Any],
                                   **fields: Any) -> dict[str, Any]:
        """``POST {project}/agents/{name}/versions?api-version=v1``."""
        result: dict[str, Any] = await self._send(
            "POST", f"/agents/{name}/versions", f"create agent version of {name}",
            idempotent=False, body={"definition": dict(definition), **fields}, project=True)
        return result

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncResponsesClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
