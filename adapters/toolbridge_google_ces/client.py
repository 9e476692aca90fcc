"""HTTP clients for CES: ``runSession`` and tool resources (sync and async, httpx).

Both send the calls of `CesCalls` (where the retries are explained): ``runSession`` is retried
only on 429/503 and on errors raised before the request was sent (it is not idempotent).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import httpx

from toolbridge import Toolbox, ToolDefinition
from toolbridge.http import AsyncSender, Network, RetryPolicy, Secret, Sender

from . import wire
from ._calls import (
    DEFAULT_RETRY,
    DEFAULT_TIMEOUT,
    CesApiError,
    CesCalls,
    CesEndpoint,
    SyncReport,
    TokenProvider,
    _google_default_token,
)

__all__ = ["DEFAULT_RETRY", "DEFAULT_TIMEOUT", "AsyncCesClient", "CesApiError", "CesClient",
           "SyncReport", "TokenProvider", "_google_default_token"]


Given = TypeVar("Given")


def _own_client(http_client: Given | None, http: Given | None) -> Given | None:
    """The caller's client, given as ``http_client=`` or by the deprecated ``http=``."""
    if http is None:
        return http_client
    if http_client is not None:
        raise TypeError("give http_client=..., not http= as well (its deprecated name)")
    warnings.warn("CesClient(http=...) is deprecated: pass http_client=...",
                  DeprecationWarning, stacklevel=3)
    return http


class CesClient(CesCalls):
    """Blocking CES client. ``token``: a string, `toolbridge.http.Secret` or callable; ``None``
    uses Google's default credentials (extra ``google-auth``). Network settings as
    `toolbridge.http.Network` (``proxy``, ``verify``, ``cert``, ``http2``, ``trust_env``), or
    a caller's own ``http_client`` (``http`` is its deprecated name)."""

    def __init__(self, *, base_url: str | None = None,
                 token: str | Secret | TokenProvider | None = None,
                 universe_domain: str = wire.DEFAULT_UNIVERSE,
                 retry: RetryPolicy = DEFAULT_RETRY, timeout: float = DEFAULT_TIMEOUT,
                 http_client: httpx.Client | None = None,
                 http: httpx.Client | None = None, **network: Any) -> None:
        super().__init__(base_url=base_url, token=token, universe_domain=universe_domain,
                         retry=retry, timeout=timeout)
        given = _own_client(http_client, http)
        self._http = given or Network(**network).client(timeout)
        self._owns_http = given is None
        self._sender = Sender(CesEndpoint(self), self._http)

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> CesClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_session(self, session: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/{session}:runSession`` with ``body`` (a ``RunSessionRequest``); retried
        only on 429/503 and errors before the request was sent (it is not idempotent)."""
        return self._sender.send(self._run_session(session, body))

    def send_text(self, session: str, text: str) -> dict[str, Any]:
        """One user turn."""
        return self.run_session(session, {"inputs": [{"text": text}]})

    def create_tool(self, app: str, tool: Mapping[str, Any], tool_id: str) -> dict[str, Any]:
        """``POST /v1/{app}/tools?toolId=...``; returns the created ``Tool`` (or the stored
        one when it already exists identical to ``tool``; a 409 `CesApiError` naming both
        when it differs)."""
        return self._sender.run(self._create_or_match(app, tool, tool_id))

    def get_tool(self, name: str) -> dict[str, Any]:
        return self._sender.send(self._get_tool(name))

    def list_tools(self, app: str) -> list[dict[str, Any]]:
        """Every tool of ``app`` (all pages)."""
        return self._sender.run(self._list_tools(app))

    def update_tool(self, name: str, tool: Mapping[str, Any],
                    update_mask: Sequence[str] | None = None) -> dict[str, Any]:
        """``PATCH /v1/{tool.name}``; ``update_mask`` defaults to the fields given."""
        return self._sender.send(self._update_tool(name, tool, update_mask))

    def delete_tool(self, name: str) -> None:
        self._sender.send(self._delete_tool(name))

    def sync_tools(self, toolbox: Toolbox | Sequence[ToolDefinition], app: str, *,
                   policy: Any = "describe") -> SyncReport:
        """Create or update one client-function tool in ``app`` per toolbox tool."""
        return self._sender.run(self._sync_tools(toolbox, app, policy))


class AsyncCesClient(CesCalls):
    """Async form of `CesClient` (same methods, awaited)."""

    def __init__(self, *, base_url: str | None = None,
                 token: str | Secret | TokenProvider | None = None,
                 universe_domain: str = wire.DEFAULT_UNIVERSE,
                 retry: RetryPolicy = DEFAULT_RETRY, timeout: float = DEFAULT_TIMEOUT,
                 http_client: httpx.AsyncClient | None = None,
                 http: httpx.AsyncClient | None = None, **network: Any) -> None:
        super().__init__(base_url=base_url, token=token, universe_domain=universe_domain,
                         retry=retry, timeout=timeout)
        given = _own_client(http_client, http)
        self._http = given or Network(**network).async_client(timeout)
        self._owns_http = given is None
        self._sender = AsyncSender(CesEndpoint(self), self._http)

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncCesClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def run_session(self, session: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return await self._sender.send(self._run_session(session, body))

    async def send_text(self, session: str, text: str) -> dict[str, Any]:
        return await self.run_session(session, {"inputs": [{"text": text}]})

    async def create_tool(self, app: str, tool: Mapping[str, Any],
                          tool_id: str) -> dict[str, Any]:
        return await self._sender.run(self._create_or_match(app, tool, tool_id))

    async def get_tool(self, name: str) -> dict[str, Any]:
        return await self._sender.send(self._get_tool(name))

    async def list_tools(self, app: str) -> list[dict[str, Any]]:
        return await self._sender.run(self._list_tools(app))

    async def update_tool(self, name: str, tool: Mapping[str, Any],
                          update_mask: Sequence[str] | None = None) -> dict[str, Any]:
        return await self._sender.send(self._update_tool(name, tool, update_mask))

    async def delete_tool(self, name: str) -> None:
        await self._sender.send(self._delete_tool(name))

    async def sync_tools(self, toolbox: Toolbox | Sequence[ToolDefinition], app: str, *,
                         policy: Any = "describe") -> SyncReport:
        return await self._sender.run(self._sync_tools(toolbox, app, policy))
