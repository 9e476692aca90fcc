"""HTTP clients for the Responses API (httpx): `ResponsesClient` (sync), `AsyncResponsesClient`.

Creates and continues responses (plain, streamed, background), reads, polls, cancels and
re-attaches to them, and manages Conversations and (on a Foundry project) agent versions.
`stream_response` gathers a stream into its response and recovers a dropped one: a background
response is re-attached with ``starting_after``, a foreground one is read until it ends. A
create is never re-sent after it may have reached the server (a retried create can start a
second response); reads are retried like every other client's. Both clients send the calls of
`Requests`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge.http import Network, Sender

from ._async_client import AsyncResponsesClient
from ._config import ClientConfig
from ._gather import StreamGatherer
from ._requests import OnEvent, Requests, ResponseStreamError, events_reader

__all__ = ["AsyncResponsesClient", "ResponseStreamError", "ResponsesClient", "StreamGatherer"]


class ResponsesClient(Requests):
    """Blocking client; options as `ClientConfig` (``base_url``/``api_key``,
    ``azure_endpoint``, ``project_endpoint`` + ``credential``, ``agent``, ``retry``, ...) and
    the network's (`toolbridge.http.Network`: ``proxy``, ``verify``, ``cert``, ``http2``,
    ``trust_env``), or a caller's own ``http_client``."""

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Any) -> None:
        network = Network.take(options)
        self.config = ClientConfig(**options)
        self._owns = http_client is None
        self._http = http_client or network.client(self.config.timeout)
        self._sender = Sender(self.config, self._http)

    # ------------------------------------------------------------------ responses
    def create(self, **body: Any) -> dict[str, Any]:
        """``POST /responses`` (``background=True`` returns it queued); the request body's
        fields as keywords, e.g. ``model``, ``input``, ``tools``, plus what `Toolbox.handle`
        returned to continue one."""
        return self._sender.send(self._create(body))

    def retrieve(self, response_id: str) -> dict[str, Any]:
        """``GET /responses/{id}``."""
        return self._sender.send(self._retrieve(response_id))

    def poll(self, response_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        """Read the response until it is no longer ``queued`` or ``in_progress``."""
        return self._sender.run(self._poll(response_id, timeout))

    def cancel(self, response_id: str) -> dict[str, Any]:
        """``POST /responses/{id}/cancel`` (background responses only)."""
        return self._sender.send(self._cancel(response_id))

    def events(self, request: httpx.Request, *, idempotent: bool) -> Iterator[dict[str, Any]]:
        """The decoded events of one stream request; ends quietly when the stream drops."""
        return self._sender.events(self._given(request, idempotent), events_reader(), request)

    def stream(self, **body: Any) -> Iterator[dict[str, Any]]:
        """``POST /responses`` with ``stream: true``: its events (no recovery; see
        `stream_response`)."""
        return self._sender.events(self._stream(body), events_reader())

    def attach(self, response_id: str, *, starting_after: int | None = None
               ) -> Iterator[dict[str, Any]]:
        """Re-attach to a background response's stream: ``GET /responses/{id}?stream=true&
        starting_after=N`` (the events after sequence number N)."""
        return self._sender.events(self._attach(response_id, starting_after), events_reader())

    def stream_response(self, *, on_event: OnEvent = None, **body: Any) -> dict[str, Any]:
        """Create a streamed response and return it finished, recovering a dropped stream.

        ``on_event`` sees every new event. A dropped background stream is re-attached after
        the last event taken (up to ``retry.max_attempts`` times); a dropped foreground one,
        or a background one out of attempts, is read until it ends. A drop before
        ``response.created`` raises `ResponseStreamError`: the response id is unknown.
        """
        return self._sender.run(self._stream_response(on_event, body))

    # ------------------------------------------------------------------ conversations
    def create_conversation(self, items: Sequence[Mapping[str, Any]] = (), *,
                            metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``POST /conversations``; more than 20 items are added in further requests."""
        return self._sender.run(self._create_conversation(items, metadata))

    def retrieve_conversation(self, conversation_id: str) -> dict[str, Any]:
        """``GET /conversations/{id}``."""
        return self._sender.send(self._retrieve_conversation(conversation_id))

    def delete_conversation(self, conversation_id: str) -> None:
        """``DELETE /conversations/{id}``."""
        self._sender.send(self._delete_conversation(conversation_id))

    def add_items(self, conversation_id: str, items: Sequence[Mapping[str, Any]]
                  ) -> list[dict[str, Any]]:
        """``POST /conversations/{id}/items`` (20 per request): the items as stored."""
        return self._sender.run(self._add_items(conversation_id, items))

    def list_items(self, conversation_id: str, *, after: str | None = None, limit: int = 20,
                   order: str = "asc") -> dict[str, Any]:
        """One page of ``GET /conversations/{id}/items``."""
        return self._sender.send(self._list_items(conversation_id, after, limit, order))

    def all_items(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every item of the conversation, oldest first (all pages)."""
        return self._sender.run(self._all_items(conversation_id))

    # ------------------------------------------------------------------ Foundry agents
    def create_agent_version(self, name: str, *, definition: Mapping[str, Any],
                             **fields: Any) -> dict[str, Any]:
        """``POST {project}/agents/{name}/versions?api-version=v1`` (a saved prompt agent)."""
        return self._sender.send(self._create_agent_version(name, definition, fields))

    def list_agent_versions(self, name: str) -> list[dict[str, Any]]:
        """``GET {project}/agents/{name}/versions``: every version (none for an unknown
        agent), oldest first."""
        return self._sender.run(self._list_agent_versions(name))

    def list_deployments(self) -> dict[str, str]:
        """``GET {project}/deployments?api-version=v1``: each model deployment's name and
        the model it serves (``modelName``), following ``nextLink`` pages."""
        return self._sender.run(self._list_deployments())

    def close(self) -> None:
        if self._owns:
            self._http.close()

    def __enter__(self) -> ResponsesClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
