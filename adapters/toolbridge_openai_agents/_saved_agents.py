"""Saved agents (``POST /agents``, ``GET /agents/{id}``, ``GET /agents``) for both clients."""

from __future__ import annotations

from typing import Any

from toolbridge.http import AsyncSender, Sender

from ._client_common import Requests

__all__ = ["AsyncSavedAgents", "SavedAgents"]


class SavedAgents(Requests):
    """The blocking client's saved-agent calls."""

    _sender: Sender

    def create_agent(self, **body: Any) -> dict[str, Any]:
        """``POST /agents``: a saved agent (``model`` required; ``name``, ``instructions``,
        ``tools`` in wire form, ``metadata``, ``reasoning``, ``text``)."""
        return self._sender.send(self._create_agent(body))

    def retrieve_agent(self, agent_id: str) -> dict[str, Any]:
        """``GET /agents/{agent_id}``."""
        return self._sender.send(self._retrieve_agent(agent_id))

    def list_agents(self, *, after: str | None = None, limit: int = 20,
                    order: str = "desc") -> dict[str, Any]:
        """One page of saved agents (the API filters nothing): ``{"data", "has_more"}``."""
        return self._sender.send(self._list_agents(after, limit, order))


class AsyncSavedAgents(Requests):
    """The async client's saved-agent calls (as `SavedAgents`, awaited)."""

    _sender: AsyncSender

    async def create_agent(self, **body: Any) -> dict[str, Any]:
        return await self._sender.send(self._create_agent(body))

    async def retrieve_agent(self, agent_id: str) -> dict[str, Any]:
        return await self._sender.send(self._retrieve_agent(agent_id))

    async def list_agents(self, *, after: str | None = None, limit: int = 20,
                          order: str = "desc") -> dict[str, Any]:
        return await self._sender.send(self._list_agents(after, limit, order))
