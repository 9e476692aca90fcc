"""The durable result store: each call's state, started then completed, keyed per call.

A call is keyed by (dialect, conversation, turn, call id). `ResultStore.claim` marks it started
atomically, so two workers never both run it; `complete` stores its result, which answers every
later delivery of the same call. `MemoryStore` lives in the process; `SqliteStore` survives it
and is shared by the processes of one machine. `open_store` builds either from a URL.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ._owners import end_owner, new_owner, owner_alive
from ._sqlite_store import SqliteStore
from ._store_base import ResultStore, StoreClaim, StoredResult, StoreKey, _canonical, fingerprint
from ._store_base import State as State  # re-exported, like the helpers other stores use
from ._store_base import _digest as _digest
from ._store_base import _params as _params
from .errors import UsageError
from .model import ToolCall

__all__ = [
    "MemoryStore", "ResultStore", "SqliteStore", "StoreClaim", "StoreKey", "StoredResult",
    "end_owner", "new_owner", "open_store", "owner_alive",
]
_new_claim = tuple.__new__  # StoreClaim(...) without its Python-level __new__ (hot path)
_SCALARS = frozenset((str, int, float, bool, type(None)))


class MemoryStore(ResultStore):
    """Call states in this process's memory, the oldest completed ones dropped past a bound.

    Calls in flight and completed calls are kept apart, so a claim costs O(1) however many
    calls are in flight, and eviction drops the oldest completed call first. An entry is
    ``[state, fingerprint, owner, started_at, result]``; a call claimed with `claim_call`
    whose arguments are flat scalars keeps ``(name, copy of the arguments)`` instead of the
    fingerprint text, made into the text only when a re-delivery needs it.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._running: dict[StoreKey, list[Any]] = {}
        self._done: OrderedDict[StoreKey, list[Any]] = OrderedDict()

    def claim(self, key: StoreKey, fingerprint: str, tool: str) -> StoreClaim:
        with self._lock:
            entry = self._done.get(key) or self._running.get(key)
            if entry is None:
                owner = new_owner()
                self._running[key] = ["started", fingerprint, owner, time.time(), None]
                if len(self._running) + len(self._done) > self.max_entries:
                    self._evict()
                return _new_claim(StoreClaim, ("claimed", fingerprint, owner, 0.0, None))
            found = _snapshot(entry)
        return self._found(*found)

    def claim_call(self, key: StoreKey, call: ToolCall) -> StoreClaim:
        with self._lock:
            entry = self._done.get(key) or self._running.get(key)
            if entry is None:
                owner = new_owner()
                arguments = call.arguments
                if call.raw_arguments is not None:
                    content: Any = fingerprint(call)  # cheap: the text as sent
                else:
                    for value in arguments.values():
                        if type(value) not in _SCALARS:
                            content = fingerprint(call)
                            break
                    else:  # immutable values: a shallow copy keeps them as sent
                        content = (call.name, dict(arguments))
                self._running[key] = ["started", content, owner, time.time(), None]
                if len(self._running) + len(self._done) > self.max_entries:
                    self._evict()
                return _new_claim(StoreClaim, ("claimed", "", owner, 0.0, None))
            found = _snapshot(entry)
        return self._found(*found)

    def claim_calls(self, keys: Sequence[StoreKey], calls: Sequence[ToolCall]) -> list[StoreClaim]:
        """Every claim under one lock; the fresh ones share one owner."""
        claims: list[StoreClaim] = []
        owner = ""
        now = time.time()
        with self._lock:
            done, running = self._done, self._running
            for key, call in zip(keys, calls, strict=True):
                entry = done.get(key) or running.get(key)
                if entry is not None:
                    claims.append(self._found(*_snapshot(entry)))
                    continue
                if not owner:
                    owner = new_owner()
                if call.raw_arguments is not None:
                    content: Any = fingerprint(call)
                else:
                    for value in call.arguments.values():
                        if type(value) not in _SCALARS:
                            content = fingerprint(call)
                            break
                    else:
                        content = (call.name, dict(call.arguments))
                running[key] = ["started", content, owner, now, None]
                claims.append(_new_claim(StoreClaim, ("claimed", "", owner, 0.0, None)))
            if len(running) + len(done) > self.max_entries:
                self._evict()
        return claims

    def complete_many(self, done: Sequence[tuple[StoreKey, str, StoredResult]]) -> list[bool]:
        """Every completion under one lock."""
        answers: list[bool] = []
        with self._lock:
            running, completed = self._running, self._done
            for key, owner, result in done:
                entry = running.get(key)
                if entry is not None and entry[2] == owner:
                    del running[key]
                else:
                    entry = completed.get(key)
                    if entry is None or entry[2] != owner:
                        answers.append(False)
                        continue
                    del completed[key]
                entry[0], entry[4] = "completed", result
                completed[key] = entry
                answers.append(True)
        return answers

    def _evict(self) -> None:
        """Drop the oldest completed entries past the bound (calls in flight are kept)."""
        done = self._done
        excess = len(self._running) + len(done) - self.max_entries
        while excess > 0 and done:
            done.popitem(last=False)
            excess -= 1

    def take_over(self, key: StoreKey, previous_owner: str) -> str | None:
        with self._lock:
            entry = self._running.get(key)
            if entry is None or entry[2] != previous_owner:
                return None
            entry[2], entry[3] = new_owner(), time.time()
            return str(entry[2])

    def complete(self, key: StoreKey, owner: str, result: StoredResult) -> bool:
        with self._lock:
            entry = self._running.get(key)
            if entry is not None and entry[2] == owner:
                del self._running[key]
            else:
                entry = self._done.get(key)
                if entry is None or entry[2] != owner:
                    return False
            entry[0], entry[4] = "completed", result
            self._done[key] = entry
            self._done.move_to_end(key)
            if len(self._running) + len(self._done) > self.max_entries:
                self._evict()
            return True

    def release(self, key: StoreKey, owner: str) -> None:
        with self._lock:
            entry = self._running.get(key)
            if entry is not None and entry[2] == owner:
                del self._running[key]

    def get(self, key: StoreKey) -> StoreClaim | None:
        with self._lock:
            entry = self._done.get(key) or self._running.get(key)
            found = None if entry is None else _snapshot(entry)
        return None if found is None else self._found(*found)

    def __len__(self) -> int:
        return len(self._running) + len(self._done)

    def __repr__(self) -> str:
        return f"<MemoryStore entries={len(self)}>"


def _snapshot(entry: list[Any]) -> tuple[Any, ...]:
    """The entry's fields, its fingerprint made text (and kept) if it was deferred."""
    content = entry[1]
    if type(content) is tuple:
        name, arguments = content
        entry[1] = f"{name}\0{_canonical(arguments)}"
    return tuple(entry)


def open_store(url: str | ResultStore) -> ResultStore:
    """A store from a URL: ``memory://``, ``sqlite:///relative.db``, ``sqlite:////abs/path.db``,
    ``postgresql://user@host:port/db`` (or ``postgres://``; needs ``toolbridge[postgres]``).

    SQLite URLs take ``?timeout=<seconds>`` (busy timeout, default 5) and
    ``?synchronous=normal|full`` (default full); PostgreSQL URLs ``?table=name`` and libpq's
    options.
    """
    if isinstance(url, ResultStore):
        return url
    if not isinstance(url, str):
        raise UsageError(f"store must be a ResultStore or a URL, not {type(url).__name__}")
    parts = urlsplit(url)
    if parts.scheme == "memory":
        return MemoryStore()
    if parts.scheme == "sqlite":
        path = url[len("sqlite://"):].split("?", 1)[0]
        if not path.startswith("/") or len(path) < 2:
            raise UsageError(f"store URL {url!r} has no file path; use sqlite:///results.db "
                             "(relative) or sqlite:////abs/path/results.db")
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        unknown = set(query) - {"timeout", "synchronous"}
        if unknown:
            raise UsageError(f"store URL {url!r}: unknown option(s) {sorted(unknown)}; "
                             "known: timeout, synchronous")
        return SqliteStore(path[1:], timeout=float(query.get("timeout", 5.0)),
                           synchronous=query.get("synchronous", "full"))
    if parts.scheme in ("postgresql", "postgres"):
        from ._store_postgres import PostgresStore

        return PostgresStore(url)
    raise UsageError(f"unknown store URL {url!r}; use memory://, sqlite:///path.db or "
                     "postgresql://user@host:port/db")


