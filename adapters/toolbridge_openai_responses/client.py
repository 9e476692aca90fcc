"""HTTP clients for the Responses API (httpx): `ResponsesClient` (sync), `AsyncResponsesClient`.

Creates and continues responses (plain, streamed, background), reads, polls, cancels and
re-attaches to them, and manages Conversations and (on a Foundry project) agent versions.
`stream_response` gathers a stream into its response and recovers a dropped one: a background
response is re-attached with ``starting_after``, a foreground one is read until it ends. A
create is never re-sent after it may have reached the server (a retried create can start a
second response); reads are retried like every other client's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge import BackendError
from toolbridge.http import send_with_retries

from ._async_client import AsyncResponsesClient
from ._config import ClientConfig
from ._gather import StreamGatherer
from ._requests import Requests, ResponseStreamError, chunks, decode, sse_events
from .wire import ACTIVE_STATUSES, DIALECT

__all__ = ["AsyncResponsesClient", "ResponseStreamError", "ResponsesClient", "StreamGatherer"]

OnEvent = Callable[[dict[str, Any]], None] | None
_BROKEN = (httpx.TransportError, httpx.StreamError)


class ResponsesClient(Requests):
    """Blocking client; options as `ClientConfig` (``base_url``/``api_key``,
    ``azure_endpoint``, ``project_endpoint`` + ``credential``, ``agent``, ``retry``, ...)."""

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Any) -> None:
        self.config = ClientConfig(**options)
        self._owns = http_client is None
        self._http = http_client or httpx.Client(timeout=self.config.timeout)

    def _send(self, method: str, path: str, what: str, *, idempotent: bool = True,
              **parts: Any) -> Any:
        request = self._request(method, path, self.config.bearer(), **parts)
        return decode(send_with_retries(self._http, request, self.config.retry,
                                        idempotent=idempotent), what)

    # ------------------------------------------------------------------ responses
    def create(self, **body: Any) -> dict[str, Any]:
        """``POST /responses`` (``background=True`` returns it queued); the request body's
        fields as keywords, e.g. ``model``, ``input``, ``tools``, plus what `Toolbox.handle`
        returned to continue one."""
        result: dict[str, Any] = self._send("POST", "/responses", "create response",
                                            idempotent=False,
                                            body=self._create_body(body, False))
        return result

    def retrieve(self, response_id: str) -> dict[str, Any]:
        """``GET /responses/{id}``."""
        result: dict[str, Any] = self._send("GET", f"/responses/{response_id}",
                                            f"retrieve response {response_id}")
        return result

    def poll(self, response_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        """Read the response until it is no longer ``queued`` or ``in_progress``."""
        started = time.monotonic()
        while True:
            response = self.retrieve(response_id)
            if response.get("status") not in ACTIVE_STATUSES:
                return response
            if timeout is not None and time.monotonic() - started > timeout:
                raise BackendError(f"{DIALECT}: response {response_id} still "
                                   f"{response.get('status')} after {timeout:g} s",
                                   body=response)
            time.sleep(self.config.poll_interval)

    def cancel(self, response_id: str) -> dict[str, Any]:
        """``POST /responses/{id}/cancel`` (background responses only)."""
        result: dict[str, Any] = self._send("POST", f"/responses/{response_id}/cancel",
                                            f"cancel response {response_id}")
        return result

    def events(self, request: httpx.Request, *, idempotent: bool) -> Iterator[dict[str, Any]]:
        """The decoded events of one stream request; ends quietly when the stream drops."""
        where = f"{DIALECT}: {request.method} {request.url.path}"
        response = send_with_retries(self._http, request, self.config.retry, stream=True,
                                     idempotent=idempotent, what=where)
        try:
            if not response.is_success:
                response.read()
                decode(response, f"stream {request.url.path}")
            try:
                yield from sse_events(response.iter_lines())
            except _BROKEN:
                return
        finally:
            response.close()

    def stream(self, **body: Any) -> Iterator[dict[str, Any]]:
        """``POST /responses`` with ``stream: true``: its events (no recovery; see
        `stream_response`)."""
        request = self._request("POST", "/responses", self.config.bearer(),
                                body=self._create_body(body, True), stream=True)
        return self.events(request, idempotent=False)

    def attach(self, response_id: str, *, starting_after: int | None = None
               ) -> Iterator[dict[str, Any]]:
        """Re-attach to a background response's stream: ``GET /responses/{id}?stream=true&
        starting_after=N`` (the events after sequence number N)."""
        request = self._request("GET", f"/responses/{response_id}", self.config.bearer(),
                                query=self._attach_query(starting_after), stream=True)
        return self.events(request, idempotent=True)

    def stream_response(self, *, on_event: OnEvent = None, **body: Any) -> dict[str, Any]:
        """Create a streamed response and return it finished, recovering a dropped stream.

        ``on_event`` sees every new event. A dropped background stream is re-attached after
        the last event taken (up to ``retry.max_attempts`` times); a dropped foreground one,
        or a background one out of attempts, is read until it ends. A drop before
        ``response.created`` raises `ResponseStreamError`: the response id is unknown.
        """
        gatherer = StreamGatherer()
        self._gather(self.stream(**body), gatherer, on_event)
        attempt = 0
        while not gatherer.done:
            if gatherer.response_id is None:
                raise ResponseStreamError(f"{DIALECT}: the stream broke off before "
                                          "response.created; the response id is unknown")
            attempt += 1
            if not gatherer.background or attempt >= self.config.retry.max_attempts:
                return self.poll(gatherer.response_id)
            time.sleep(self.config.retry.delay(attempt, None))
            self._gather(self.attach(gatherer.response_id,
                                     starting_after=gatherer.last_sequence), gatherer, on_event)
        return gatherer.result()

    @staticmethod
    def _gather(events: Iterator[dict[str, Any]], gatherer: StreamGatherer,
                on_event: OnEvent) -> None:
        for event in events:
            if gatherer.feed(event) and on_event is not None:
                on_event(event)
            if gatherer.done:
                return

    # ------------------------------------------------------------------ conversations
    def create_conversation(self, items: Sequence[Mapping[str, Any]] = (), *,
                            metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``POST /conversations``; more than 20 items are added in further requests."""
        first, *rest = chunks([dict(i) for i in items])
        body: dict[str, Any] = {"items": first}
        if metadata is not None:
            body["metadata"] = dict(metadata)
        conversation: dict[str, Any] = self._send("POST", "/conversations",
                                                  "create conversation", idempotent=False,
                                                  body=body)
        for part in rest:
            self.add_items(conversation["id"], part)
        return conversation

    def retrieve_conversation(self, conversation_id: str) -> dict[str, Any]:
        """``GET /conversations/{id}``."""
        result: dict[str, Any] = self._send("GET", f"/conversations/{conversation_id}",
                                            f"retrieve conversation {conversation_id}")
        return result

    def delete_conversation(self, conversation_id: str) -> None:
        """``DELETE /conversations/{id}``."""
        self._send("DELETE", f"/conversations/{conversation_id}",
                   f"delete conversation {conversation_id}")

    def add_items(self, conversation_id: str, items: Sequence[Mapping[str, Any]]
                  ) -> list[dict[str, Any]]:
        """``POST /conversations/{id}/items`` (20 per request): the items as stored."""
        added: list[dict[str, Any]] = []
        for part in chunks([dict(i) for i in items]):
            page = self._send("POST", f"/conversations/{conversation_id}/items",
                              f"add items to {conversation_id}", idempotent=False,
                              body={"items": part})
            added += page.get("data", [])
        return added

    def list_items(self, conversation_id: str, *, after: str | None = None, limit: int = 20,
                   order: str = "asc") -> dict[str, Any]:
        """One page of ``GET /conversations/{id}/items``."""
        result: dict[str, Any] = self._send(
            "GET", f"/conversations/{conversation_id}/items",
            f"list items of {conversation_id}",
            query={"after": after, "limit": limit, "order": order})
        return result

    def all_items(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every item of the conversation, oldest first (all pages)."""
        items: list[dict[str, Any]] = []
        after = None
        while True:
            page = self.list_items(conversation_id, after=after, limit=100)
            items += page.get("data", [])
            if not page.get("has_more") or not page.get("last_id"):
                return items
            after = page["last_id"]

    # ------------------------------------------------------------------ Foundry agents
    def create_agent_version(self, name: str, *, definition: Mapping[str, Any],
                             **fields: Any) -> dict[str, Any]:
        """``POST {project}/agents/{name}/versions?api-version=v1`` (a saved prompt agent)."""
        result: dict[str, Any] = self._send(
            "POST", f"/agents/{name}/versions", f"create agent version of {name}",
            idempotent=False, body={"definition": dict(definition), **fields}, project=True)
        return result

    def list_agent_versions(self, name: str) -> list[dict[str, Any]]:
        """``GET {project}/agents/{name}/versions``: every version (none for an unknown
        agent), oldest first."""
        versions: list[dict[str, Any]] = []
        after = None
        while True:
            try:
                page = self._send("GET", f"/agents/{name}/versions",
                                  f"list agent versions of {name}", project=True,
                                  query={"after": after, "limit": 100, "order": "asc"})
            except BackendError as exc:
                if exc.status == 404:
                    return versions
                raise
            data = page.get("data") or []
            versions += data
            if not page.get("has_more") or not data:
                return versions
            after = data[-1]["id"]

    def list_deployments(self) -> dict[str, str]:
        """``GET {project}/deployments?api-version=v1``: each model deployment's name and
        the model it serves (``modelName``), following ``nextLink`` pages."""
        found: dict[str, str] = {}
        request = self._request("GET", "/deployments", self.config.bearer(), project=True)
        while True:
            page = decode(send_with_retries(self._http, request, self.config.retry),
                          "list deployments")
            for deployment in page.get("value") or []:
                if deployment.get("type", "ModelDeployment") == "ModelDeployment":
                    found[str(deployment["name"])] = str(deployment.get("modelName") or "")
            link = page.get("nextLink")
            if not link:
                return found
            request = httpx.Request("GET", str(link),
                                    headers=self.config.headers(self.config.bearer()))

    def close(self) -> None:
        if self._owns:
            self._http.close()

    def __enter__(self) -> ResponsesClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
