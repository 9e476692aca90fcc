"""One connection shared by the conversations that the per-conversation entry points
(`aconverse`, `aanswer_pending` and each dialect's wrappers of them) hold at once on the same event
loop with equal options and the same tools: one HTTP client and one rendering of the tools
for all of them, as a `Worker` has, closed when the last of them ends. A conversation holds
only references to what they share (not its own parsed options, key or tool list), and the
transcripts' ``tools`` entries share one rendering per dialect and tools (`shared_tools`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from ..model import ToolDefinition
from ..plugin import Connection, ServeCapability, Translations

__all__ = ["shared_connection", "shared_tools"]


@dataclass
class _Shared:
    connection: Connection
    key: tuple[Any, ...]
    tools: Sequence[ToolDefinition]
    """Kept so that the ids in the key stay theirs."""
    users: int = 0


_OPEN: dict[tuple[Any, ...], _Shared] = {}
_RENDERED: dict[tuple[str, tuple[int, ...]], tuple[Any, ...]] = {}
RENDERINGS_KEPT = 16
"""Distinct (dialect, tools) renderings `shared_tools` keeps, the oldest dropped first."""


def shared_tools(dialect: Translations, tools: Sequence[ToolDefinition]) -> tuple[str, Any]:
    """The names and wire definitions of ``tools`` on ``dialect``, rendered once for every
    transcript that lists them (shared: read them, do not modify them)."""
    key = (dialect.name, tuple(map(id, tools)))
    found = _RENDERED.get(key)
    if found is None:
        if len(_RENDERED) >= RENDERINGS_KEPT:
            del _RENDERED[next(iter(_RENDERED))]
        names = ", ".join(t.name for t in tools)
        # The tools are kept so that the ids in the key stay theirs.
        found = _RENDERED[key] = (names, dialect.render_tools(list(tools)).definitions,
                                  tuple(tools))
    return found[0], found[1]


@asynccontextmanager
async def shared_connection(serving: ServeCapability, options: Any,
                            tools: Sequence[ToolDefinition]) -> AsyncIterator[Connection]:
    """The open connection of ``serving`` for ``options`` and ``tools`` (parsed options
    that cannot be hashed, e.g. holding a mapping, get a connection of their own)."""
    parsed = serving.options.parse(options)
    try:
        key: tuple[Any, ...] | None = (asyncio.get_running_loop(), serving.dialect, parsed,
                                       tuple(map(id, tools)))
        hash(key)
    except TypeError:
        key = None
    if key is None:
        connection = serving.connect(parsed, tools)
        try:
            yield connection
        finally:
            await connection.aclose()
        return
    shared = _OPEN.get(key)
    if shared is None:
        shared = _OPEN[key] = _Shared(serving.connect(parsed, tools), key, tools)
    key, tools = shared.key, shared.tools  # this conversation keeps no copies of its own
    del parsed
    shared.users += 1
    try:
        yield shared.connection
    finally:
        shared.users -= 1
        if shared.users == 0 and _OPEN.get(key) is shared:
            del _OPEN[key]
            await shared.connection.aclose()
