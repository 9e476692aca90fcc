"""`MemoryStore`: call states in this process's memory."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from ._base import (
    Owned,
    ResultStore,
    StoreCall,
    StoreClaim,
    StoreCompletion,
    StoredResult,
    StoreKey,
    fingerprint,
)
from ._owners import new_owner, owner_alive

__all__ = ["MemoryStore"]

_new_tuple = tuple.__new__  # StoreClaim(...) without its Python __new__
_SCALARS = frozenset((str, int, float, bool, type(None)))
Turn = tuple[str, str, str]
"""(dialect, conversation, turn): the calls of one turn share a table."""
Entry = tuple[str, Any, str, float, "StoredResult | None"]
"""One call: ``(state, content, owner, started_at, result)``; ``content`` is its fingerprint,
or ``(tool, arguments)`` that make it (see `MemoryStore`)."""


class MemoryStore(ResultStore):
    """Call states in this process's memory, the oldest completed ones dropped past a bound.

    Entries live in one table per turn, keyed by call id; a queue holds the completed ones in
    completion order, so eviction drops the oldest completed calls first, never a call in
    flight. A call whose arguments are flat scalars keeps ``(tool, copy of the arguments)``
    instead of its fingerprint text, made into the text only when a re-delivery needs it.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._turns: dict[Turn, dict[str, Entry]] = {}
        self._size = 0
        self._completed: deque[tuple[Turn, str, float]] = deque()

    def claim(self, calls: Sequence[StoreCall]) -> list[StoreClaim]:
        owner = new_owner()
        ours: StoreClaim = _new_tuple(StoreClaim, ("claimed", owner, 0.0, None))
        answers: list[StoreClaim] = []
        turns, turn, table = self._turns, ("", "", ""), None
        with self._lock:
            for key, tool, arguments in calls:
                if table is None or key[2] != turn[2] or key[1] != turn[1] or key[0] != turn[0]:
                    turn = (key[0], key[1], key[2])  # a payload's calls mostly share one turn
                    table = turns.get(turn)
                    if table is None:
                        table = turns[turn] = {}
                call_id = key[3]
                entry = table.get(call_id)
                if entry is None:
                    table[call_id] = ("claimed", _content(tool, arguments), owner, 0.0, None)
                    self._size += 1
                    answers.append(ours)
                    continue
                stored = entry[1]
                if type(stored) is tuple:
                    stored = fingerprint(*stored)
                    entry = (entry[0], stored, *entry[2:])
                    table[call_id] = entry
                if stored != fingerprint(tool, arguments):
                    answers.append(StoreClaim("reused"))
                elif entry[0] == "completed":
                    answers.append(StoreClaim("completed", entry[2], entry[3], entry[4]))
                elif owner_alive(entry[2]):
                    answers.append(StoreClaim("running", entry[2], entry[3]))
                else:  # its worker is gone: ours now, as it was (claimed, or started)
                    table[call_id] = (entry[0], stored, owner, entry[3], None)
                    answers.append(StoreClaim("claimed", owner, entry[3]))
            if self._size > self.max_entries:
                self._evict()
        return answers

    def write(self, *, started: Sequence[Owned] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[Owned] = ()) -> list[bool]:
        now = time.time()
        applied: list[bool] = []
        turns = self._turns
        with self._lock:
            for key, owner in started:
                table = turns.get((key[0], key[1], key[2]))
                entry = None if table is None else table.get(key[3])
                if entry is not None and entry[2] == owner and entry[0] == "claimed":
                    table[key[3]] = ("started", entry[1], owner, now, None)  # type: ignore[index]
            for key, owner, result, _ in completed:
                turn = (key[0], key[1], key[2])
                table = turns.get(turn)
                entry = None if table is None else table.get(key[3])
                if entry is None or entry[2] != owner or entry[0] == "completed":
                    applied.append(False)
                    continue
                table[key[3]] = ("completed", entry[1], owner, entry[3], result)  # type: ignore[index]
                self._completed.append((turn, key[3], now))
                applied.append(True)
            for key, owner in released:
                turn = (key[0], key[1], key[2])
                table = turns.get(turn)
                entry = None if table is None else table.get(key[3])
                if entry is not None and entry[2] == owner and entry[0] != "completed":
                    self._drop(turn, key[3])
            if self._size > self.max_entries:
                self._evict()
        return applied

    def lookup(self, keys: Sequence[StoreKey]) -> list[StoreClaim | None]:
        with self._lock:
            found = [self._turns.get((k[0], k[1], k[2]), {}).get(k[3]) for k in keys]
        return [None if e is None else self._seen(e[0], e[2], e[3], e[4]) for e in found]

    def prune(self, older_than: float) -> int:
        cutoff, dropped = time.time() - older_than, 0
        with self._lock:
            completed = self._completed
            while completed and completed[0][2] < cutoff:
                dropped += self._drop_completed(*completed.popleft()[:2])
        return dropped

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"<MemoryStore entries={len(self)}>"

    # ---------------------------------------------------------------- internals
    def _drop(self, turn: Turn, call_id: str) -> None:
        table = self._turns[turn]
        del table[call_id]
        self._size -= 1
        if not table:
            del self._turns[turn]

    def _drop_completed(self, turn: Turn, call_id: str) -> int:
        entry = self._turns.get(turn, {}).get(call_id)
        if entry is None or entry[0] != "completed":
            return 0
        self._drop(turn, call_id)
        return 1

    def _evict(self) -> None:
        """Drop the oldest completed entries past the bound (calls in flight are kept)."""
        completed = self._completed
        while self._size > self.max_entries and completed:
            self._drop_completed(*completed.popleft()[:2])


def _content(tool: str, arguments: Any) -> Any:
    """What a claim keeps of the call: its fingerprint, or what makes it (see `MemoryStore`)."""
    for value in arguments.values():
        if type(value) not in _SCALARS:  # nested: fix its text now (a handler may change it)
            return fingerprint(tool, arguments)
    return (tool, dict(arguments))  # immutable values: a shallow copy keeps them as sent
