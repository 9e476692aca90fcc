"""Saved agents (``POST /agents``, ``GET /agents/{id}``, ``GET /agents``) for both clients."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import httpx

from ._client_common import page_params, session_body

__all__ = ["AsyncSavedAgents", "SavedAgents"]


class _Builds(Protocol):
    def _build(self, method: str, path: str, *, json: Any = None,
               params: Mapping[str, Any] | None = None) -> httpx.Request: ...


class _Sends(_Builds, Protocol):
    def _send(self, request: httpx.Request, what: str) -> httpx.Response: ...


class _AsyncSends(_Builds, Protocol):
    async def _send(self, request: httpx.Request, what: str) -> httpx.Response: ...


class SavedAgents:
    """The blocking client's saved-agent calls."""

    def create_agent(self: _Sends, **body: Any) -> dict[str, Any]:
        """``POST /agents``: a saved agent (``model`` required; ``name``, ``instructions``,
        ``tools`` in wire form, ``metadata``, ``reasoning``, ``text``)."""
        return session_body(self._send(self._build("POST", "/agents", json=body),
                                       "create agent"), "create agent")

    def retrieve_agent(self: _Sends, agent_id: str) -> dict[str, Any]:
        """``GET /agents/{agent_id}``."""
        what = f"retrieve agent {agent_id}"
        return session_body(self._send(self._build("GET", f"/agents/{agent_id}"), what), what)

    def list_agents(self: _Sends, *, after: str | None = None, limit: int = 20,
                    order: str = "desc") -> dict[str, Any]:
        """One page of saved agents (the API filters nothing): ``{"data", "has_more"}``."""
        return session_body(self._send(self._build(
            "GET", "/agents", params=page_params(after, limit, order)), "list agents"),
            "list agents")


class AsyncSavedAgents:
    """The async client's saved-agent calls (as `SavedAgents`, awaited)."""

    async def create_agent(self: _AsyncSends, **body: Any) -> dict[str, Any]:
        return session_body(await self._send(self._build("POST", "/agents", json=body),
                                             "create agent"), "create agent")

    async def retrieve_agent(self: _AsyncSends, agent_id: str) -> dict[str, Any]:
        what = f"retrieve agent {agent_id}"
        return session_body(await self._send(self._build("GET", f"/agents/{agent_id}"),
                                             what), what)

    async def list_agents(self: _AsyncSends, *, after: str | None = None, limit: int = 20,
                          order: str = "desc") -> dict[str, Any]:
        return session_body(await self._send(self._build(
            "GET", "/agents", params=page_params(after, limit, order)), "list agents"),
            "list agents")
