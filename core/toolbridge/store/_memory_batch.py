"""`MemoryStore`'s records: a call's entry, and a payload's calls claimed together."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ._base import StoreKey

Key = tuple[str, ...]
Turn = tuple[str, ...]
"""A key's first three parts: dialect, conversation, turn."""
Entry = tuple[str, str, float, str, Any, Any]
"""One call: ``(state, owner, started_at, tool, arguments, result)``; ``arguments`` makes its
fingerprint (JSON text, or the fingerprint once made), ``result`` is ``(success, output,
error, output_json)`` once completed."""


class Batch:
    """New calls of one turn claimed together (a payload's, usually): one record for all of
    them, stored once under their turn. Its members' results are set together when they
    complete together, in the order they were claimed (the usual case), else one by one."""

    __slots__ = ("_index", "arguments", "claimed", "decoded", "ids", "owner", "results",
                 "split", "tools", "turn")

    def __init__(self, owner: str, turn: Turn, ids: tuple[str, ...], tools: tuple[str, ...],
                 arguments: bytes, claimed: Sequence[StoreKey] | None) -> None:
        self.owner = owner
        self.turn = turn
        self.ids = ids
        """The members' call ids, in claim order."""
        self.tools = tools
        self.arguments = arguments
        """The members' arguments as one JSON list, taken at the claim."""
        self.claimed = claimed
        """The keys as `MemoryStore.claim_new` was given them, until the batch completes
        (what `MemoryStore.complete_claimed` compares its keys with)."""
        self.decoded: list[Any] | None = None
        self._index: dict[str, int] | None = None
        self.results: list[Any] | None = None
        """Per member, its kept result once completed (``None`` until one is)."""
        self.split = False
        """Whether a member became an entry of its own (`MemoryStore._entry`)."""

    def index(self, call_id: str) -> int | None:
        """A member's position (``None``: not a member)."""
        if self._index is None:
            self._index = dict(zip(self.ids, range(len(self.ids)), strict=True))
        return self._index.get(call_id)

    def result(self, index: int) -> Any:
        return None if self.results is None else self.results[index]

    def entry(self, index: int) -> Entry:
        """A member as a call of its own."""
        if self.decoded is None:
            self.decoded = json.loads(self.arguments)
        result = self.result(index)
        state = "claimed" if result is None else "completed"
        return (state, self.owner, 0.0, self.tools[index], self.decoded[index], result)


Stored = Entry | Batch
Held = Batch | dict[str, Stored]
"""What a turn holds: one batch (all of its members), or its calls by id."""
