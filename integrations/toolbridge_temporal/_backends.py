"""The connections and backends a worker keeps between the activities of a conversation.

A conversation activity builds the `Backend` of its conversation from the connection (one per
dialect and options, shared by the worker's conversations) and the cursor the workflow holds
(`Backend.checkpoint`, restored with `Backend.restore`). The backend it used is kept under a
new token, which the activity returns: the next activity of that conversation reuses it only
when it brings that token back (no other activity touched the conversation since), so a kept
Agents event stream or the last Chat message list is never stale. After a failure the backend
is dropped, and the next activity rebuilds it from the workflow's cursor.
"""

from __future__ import annotations

import json
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolbridge.plugin import Backend, Connection, capabilities, get_dialect

if TYPE_CHECKING:
    from toolbridge import Toolbox

__all__ = ["Backends"]


class Backends:
    """A worker's connections, and its recently used backends (at most ``keep``)."""

    def __init__(self, toolbox: Toolbox, *, keep: int = 1024,
                 local: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.toolbox = toolbox
        self.keep = keep
        self.local = {get_dialect(name).name: dict(given) for name, given in (local or {}).items()}
        """The worker's own options per dialect (credentials), over the workflow's."""
        self._connections: dict[str, Connection] = {}
        self._kept: OrderedDict[str, Backend] = OrderedDict()

    def connection(self, dialect: str, options: Mapping[str, Any]) -> Connection:
        """The worker's connection for ``dialect`` with ``options`` (opened on first use)."""
        key = json.dumps([dialect, options], sort_keys=True, default=str)
        found = self._connections.get(key)
        if found is None:
            d = get_dialect(dialect)
            merged = {**options, **self.local.get(d.name, {})}
            found = capabilities().serving(d.name).connect(merged, list(self.toolbox))
            self._connections[key] = found
        return found

    def take(self, token: str, dialect: str, options: Mapping[str, Any],
             conversation: str | None, cursor: Mapping[str, Any]) -> tuple[Backend, bool]:
        """The backend to use: the kept one ``token`` names (``True``), or one rebuilt from
        ``cursor`` (``False``)."""
        kept = self._kept.pop(token, None) if token else None
        if kept is not None:
            return kept, True
        backend = self.connection(dialect, options).backend(conversation or None)
        if cursor:
            backend.restore(cursor)
        return backend, False

    async def keep_for_next(self, backend: Backend) -> str:
        """Keep ``backend`` for the next activity; the token that names it."""
        token = uuid.uuid4().hex
        self._kept[token] = backend
        while len(self._kept) > self.keep:
            _, oldest = self._kept.popitem(last=False)
            await oldest.aclose()
        return token

    async def aclose(self) -> None:
        """Close every kept backend and connection."""
        kept, self._kept = list(self._kept.values()), OrderedDict()
        for backend in kept:
            await backend.aclose()
        connections, self._connections = list(self._connections.values()), {}
        for connection in connections:
            await connection.aclose()
