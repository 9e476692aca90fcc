"""`MemoryStore`: call states in this process's memory."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from pydantic_core import to_json

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
Entry = tuple[str, Any, str, float, Any]
"""One call: ``(state, content, owner, started_at, result)``; ``content`` is its fingerprint,
or what makes it (see `_content`); ``result`` is ``(success, output, error, output_json)``.

Plain tuples of text and numbers only, where it can be: the garbage collector stops tracking
them, so a full store costs a full collection little (a key is kept as a plain tuple, not a
`StoreKey`, and a JSON output as its text, decoded again on a replay)."""


class MemoryStore(ResultStore):
    """Call states in this process's memory, the oldest completed ones dropped past a bound.

    Entries are keyed by `StoreKey`; a queue holds the completed ones in completion order, so
    eviction drops the oldest completed calls first, never a call in flight. A call keeps
    what makes its fingerprint (see `_content`), made into the fingerprint only when a
    re-delivery needs it.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._calls: dict[tuple[str, ...], Entry] = {}
        self._completed: deque[tuple[str, ...]] = deque()
        self._completed_at: deque[float] = deque()  # when each of `_completed` completed

    def claim(self, calls: Sequence[StoreCall]) -> list[StoreClaim]:
        owner = new_owner()
        ours: StoreClaim = _new_tuple(StoreClaim, ("claimed", owner, 0.0, None))
        answers: list[StoreClaim] = []
        stored = self._calls
        with self._lock:
            for key, tool, arguments in calls:
                entry = stored.get(key)
                if entry is None:
                    stored[tuple(key)] = ("claimed", _content(tool, arguments), owner, 0.0, None)
                    answers.append(ours)
                    continue
                content = entry[1]
                if type(content) is tuple:  # made into the fingerprint on first need
                    content = _fingerprint(*content)
                    entry = (entry[0], content, *entry[2:])
                    stored[key] = entry
                if content != fingerprint(tool, arguments):
                    answers.append(StoreClaim("reused"))
                elif entry[0] == "completed":
                    answers.append(StoreClaim("completed", entry[2], entry[3],
                                              _result(entry[4])))
                elif owner_alive(entry[2]):
                    answers.append(StoreClaim("running", entry[2], entry[3]))
                else:  # its worker is gone: ours now, as it was (claimed, or started)
                    stored[key] = (entry[0], content, owner, entry[3], None)
                    answers.append(StoreClaim("claimed", owner, entry[3]))
            if len(stored) > self.max_entries:
                self._evict()
        return answers

    def write(self, *, started: Sequence[Owned] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[Owned] = ()) -> list[bool]:
        now = time.time()
        applied: list[bool] = []
        stored = self._calls
        with self._lock:
            for key, owner in started:
                entry = stored.get(key)
                if entry is not None and entry[2] == owner and entry[0] == "claimed":
                    stored[key] = ("started", entry[1], owner, now, None)
            finished = self._completed
            for key, owner, result, output_json in completed:
                entry = stored.get(key)
                if entry is None or entry[2] != owner or entry[0] == "completed":
                    applied.append(False)
                    continue
                kept = (result[0], None if output_json is not None else result[1], result[2],
                        output_json)
                plain = tuple(key)
                stored[plain] = ("completed", entry[1], owner, entry[3], kept)
                finished.append(plain)
                applied.append(True)
            if completed:
                self._completed_at.extend([now] * (len(finished) - len(self._completed_at)))
            for key, owner in released:
                entry = stored.get(key)
                if entry is not None and entry[2] == owner and entry[0] != "completed":
                    del stored[key]
            if len(stored) > self.max_entries:
                self._evict()
        return applied

    def lookup(self, keys: Sequence[StoreKey]) -> list[StoreClaim | None]:
        with self._lock:
            found = [self._calls.get(key) for key in keys]
        return [None if e is None else self._seen(e[0], e[2], e[3], _result(e[4]))
                for e in found]

    def prune(self, older_than: float) -> int:
        cutoff, dropped = time.time() - older_than, 0
        with self._lock:
            completed, times = self._completed, self._completed_at
            while completed and times[0] < cutoff:
                times.popleft()
                dropped += self._drop_completed(completed.popleft())
        return dropped

    def __len__(self) -> int:
        return len(self._calls)

    def __repr__(self) -> str:
        return f"<MemoryStore entries={len(self)}>"

    def _drop_completed(self, key: tuple[str, ...]) -> int:
        entry = self._calls.get(key)
        if entry is None or entry[0] != "completed":
            return 0
        del self._calls[key]
        return 1

    def _evict(self) -> None:
        """Drop the oldest completed entries past the bound (calls in flight are kept)."""
        completed, times, stored = self._completed, self._completed_at, self._calls
        while len(stored) > self.max_entries and completed:
            key = completed.popleft()
            times.popleft()
            entry = stored.get(key)
            if entry is not None and entry[0] == "completed":
                del stored[key]


def _content(tool: str, arguments: Any) -> tuple[str, bytes]:
    """What a claim keeps of the call to make its fingerprint on a re-delivery: its tool, and
    its arguments as JSON now (a handler may change them later), in any key order."""
    return (tool, to_json(arguments))


def _fingerprint(tool: str, arguments: bytes) -> str:
    return fingerprint(tool, json.loads(arguments))


def _result(kept: Any) -> StoredResult | None:
    if kept is None:
        return None
    success, output, error, output_json = kept
    if output_json is not None:
        output = json.loads(output_json)
    return _new_tuple(StoredResult, (success, output, error))
