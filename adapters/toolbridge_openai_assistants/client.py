"""HTTP clients for Assistants runs on OpenAI and Azure OpenAI (sync and async, httpx); both
send the calls of `AssistantsCalls`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx

from toolbridge.http import Network, Sender

from ._async_client import AsyncAssistantsClient
from ._base import (
    OPENAI_BASE_URL,
    Endpoint,
    RunExpiredError,
    StreamEvent,
    StreamInterruptedError,
    expired_error,
)
from ._calls import AssistantsCalls

__all__ = [
    "OPENAI_BASE_URL",
    "AssistantsClient",
    "AsyncAssistantsClient",
    "RunExpiredError",
    "StreamEvent",
    "StreamInterruptedError",
    "expired_error",
]


class AssistantsClient(AssistantsCalls):
    """Blocking client. OpenAI: ``api_key`` (+ ``base_url``); Azure: ``azure_endpoint``,
    ``api_version`` and ``api_key`` or ``azure_ad_token_provider``. Network settings as
    `toolbridge.http.Network` (``proxy``, ``verify``, ``cert``, ``http2``, ``trust_env``), or
    a caller's own ``http_client`` (not closed here)."""

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Any) -> None:
        network = Network.take(options)
        super().__init__(**options)
        self._owns = http_client is None
        self._http = http_client or network.client(self.timeout)
        self._sender = Sender(Endpoint(self), self._http)

    def close(self) -> None:
        if self._owns:
            self._http.close()

    def __enter__(self) -> AssistantsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ resources
    def create_assistant(self, *, model: str, tools: Sequence[Mapping[str, Any]] = (),
                         instructions: str | None = None, name: str | None = None,
                         **fields: Any) -> dict[str, Any]:
        """``POST /assistants``; on Azure ``model`` is the deployment name."""
        return self._sender.send(self._create_assistant(model, tools, instructions, name,
                                                        fields))

    def create_thread(self, **fields: Any) -> dict[str, Any]:
        """``POST /threads``."""
        return self._sender.send(self._create_thread(fields))

    def create_message(self, thread_id: str, content: str, *, role: str = "user"
                       ) -> dict[str, Any]:
        """``POST /threads/{thread_id}/messages``."""
        return self._sender.send(self._create_message(thread_id, content, role))

    def list_messages(self, thread_id: str, *, run_id: str | None = None,
                      order: str = "desc", limit: int = 20, after: str | None = None
                      ) -> list[dict[str, Any]]:
        """``GET /threads/{thread_id}/messages`` (one page)."""
        return self._sender.send(self._list_messages(thread_id, run_id, order, limit, after))

    def retrieve_assistant(self, assistant_id: str) -> dict[str, Any]:
        """``GET /assistants/{assistant_id}``."""
        return self._sender.send(self._retrieve_assistant(assistant_id))

    def retrieve_thread(self, thread_id: str) -> dict[str, Any]:
        """``GET /threads/{thread_id}``."""
        return self._sender.send(self._retrieve_thread(thread_id))

    def list_deployments(self) -> dict[str, str]:
        """Foundry classic: ``GET {project}/deployments``, each model deployment's name and
        the model it serves (``modelName``)."""
        return self._sender.send(self._list_deployments())

    def iterate(self, path: str, what: str) -> Iterator[dict[str, Any]]:
        """Every object of a list endpoint (``/assistants``, ``/threads/{id}/messages``;
        ``/threads`` on Foundry classic only), oldest first, 100 per page."""
        return self._sender.iterate(self._iterate(path, what))

    def create_run(self, thread_id: str, assistant_id: str, **fields: Any) -> dict[str, Any]:
        """``POST /threads/{thread_id}/runs`` without streaming; returns the queued run."""
        return self._sender.send(self._create_run(thread_id, assistant_id, fields))

    def stream_run(self, thread_id: str, assistant_id: str, **fields: Any
                   ) -> Iterator[StreamEvent]:
        """``POST /threads/{thread_id}/runs`` with ``stream: true``: the run's events."""
        return self._sender.events(*self._stream_run(thread_id, assistant_id, fields))

    def retrieve_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """``GET /threads/{thread_id}/runs/{run_id}``."""
        return self._sender.send(self._retrieve_run(thread_id, run_id))

    def poll_run(self, thread_id: str, run_id: str, *, timeout: float | None = None
                 ) -> dict[str, Any]:
        """Read the run until it leaves queued / in_progress / cancelling.

        Waits the latest ``openai-poll-after-ms`` between reads (else `poll_interval`).
        """
        return self._sender.run(self._poll_run(thread_id, run_id, timeout))

    def submit_tool_outputs(self, thread_id: str, run_id: str, body: Mapping[str, Any]
                            ) -> dict[str, Any]:
        """``POST .../submit_tool_outputs`` with every output of the run; returns the run."""
        return self._sender.send(self._submit_tool_outputs(thread_id, run_id, body))

    def stream_submit_tool_outputs(self, thread_id: str, run_id: str,
                                   body: Mapping[str, Any]) -> Iterator[StreamEvent]:
        """``submit_tool_outputs`` with ``stream: true``: the continued run's events."""
        return self._sender.events(*self._stream_submit_tool_outputs(thread_id, run_id, body))

    def cancel_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """``POST .../cancel``."""
        return self._sender.send(self._cancel_run(thread_id, run_id))
