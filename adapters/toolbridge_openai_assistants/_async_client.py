"""`AsyncAssistantsClient`: the async form of `AssistantsClient` (same methods, awaited)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge.http import AsyncSender, Network

from ._base import Endpoint, StreamEvent
from ._calls import AssistantsCalls

__all__ = ["AsyncAssistantsClient"]


class AsyncAssistantsClient(AssistantsCalls):
    """Async form of `AssistantsClient` (same methods, awaited; streams are async iterators)."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None, **options: Any) -> None:
        network = Network.take(options)
        super().__init__(**options)
        self._owns = http_client is None
        self._http = http_client or network.async_client(self.timeout)
        self._sender = AsyncSender(Endpoint(self), self._http)

    async def aclose(self) -> None:
        if self._owns:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncAssistantsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ resources
    async def create_assistant(self, *, model: str, tools: Sequence[Mapping[str, Any]] = (),
                               instructions: str | None = None, name: str | None = None,
                               **fields: Any) -> dict[str, Any]:
        """``POST /assistants``; on Azure ``model`` is the deployment name."""
        return await self._sender.send(self._create_assistant(model, tools, instructions,
                                                              name, fields))

    async def create_thread(self, **fields: Any) -> dict[str, Any]:
        """``POST /threads``."""
        return await self._sender.send(self._create_thread(fields))

    async def create_message(self, thread_id: str, content: str, *, role: str = "user"
                             ) -> dict[str, Any]:
        """``POST /threads/{thread_id}/messages``."""
        return await self._sender.send(self._create_message(thread_id, content, role))

    async def list_messages(self, thread_id: str, *, run_id: str | None = None,
                            order: str = "desc", limit: int = 20, after: str | None = None
                            ) -> list[dict[str, Any]]:
        """``GET /threads/{thread_id}/messages`` (one page)."""
        return await self._sender.send(self._list_messages(thread_id, run_id, order, limit,
                                                           after))

    async def retrieve_assistant(self, assistant_id: str) -> dict[str, Any]:
        """``GET /assistants/{assistant_id}``."""
        return await self._sender.send(self._retrieve_assistant(assistant_id))

    async def retrieve_thread(self, thread_id: str) -> dict[str, Any]:
        """``GET /threads/{thread_id}``."""
        return await self._sender.send(self._retrieve_thread(thread_id))

    async def list_deployments(self) -> dict[str, str]:
        """Foundry classic: ``GET {project}/deployments``, each model deployment's name and
        the model it serves (``modelName``)."""
        return await self._sender.send(self._list_deployments())

    def iterate(self, path: str, what: str) -> AsyncIterator[dict[str, Any]]:
        """Every object of a list endpoint, oldest first, 100 per page (see the sync form)."""
        return self._sender.iterate(self._iterate(path, what))

    async def create_run(self, thread_id: str, assistant_id: str, **fields: Any
                         ) -> dict[str, Any]:
        """``POST /threads/{thread_id}/runs`` without streaming; returns the queued run."""
        return await self._sender.send(self._create_run(thread_id, assistant_id, fields))

    def stream_run(self, thread_id: str, assistant_id: str, **fields: Any
                   ) -> AsyncIterator[StreamEvent]:
        """``POST /threads/{thread_id}/runs`` with ``stream: true``: the run's events."""
        return self._sender.events(*self._stream_run(thread_id, assistant_id, fields))

    async def retrieve_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """``GET /threads/{thread_id}/runs/{run_id}``."""
        return await self._sender.send(self._retrieve_run(thread_id, run_id))

    async def poll_run(self, thread_id: str, run_id: str, *, timeout: float | None = None
                       ) -> dict[str, Any]:
        """Read the run until it leaves queued / in_progress / cancelling (see the sync form)."""
        return await self._sender.run(self._poll_run(thread_id, run_id, timeout))

    async def submit_tool_outputs(self, thread_id: str, run_id: str, body: Mapping[str, Any]
                                  ) -> dict[str, Any]:
        """``POST .../submit_tool_outputs`` with every output of the run; returns the run."""
        return await self._sender.send(self._submit_tool_outputs(thread_id, run_id, body))

    def stream_submit_tool_outputs(self, thread_id: str, run_id: str,
                                   body: Mapping[str, Any]) -> AsyncIterator[StreamEvent]:
        """``submit_tool_outputs`` with ``stream: true``: the continued run's events."""
        return self._sender.events(*self._stream_submit_tool_outputs(thread_id, run_id, body))

    async def cancel_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """``POST .../cancel``."""
        return await self._sender.send(self._cancel_run(thread_id, run_id))
