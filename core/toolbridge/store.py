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
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ._owners import end_owner, new_owner, owner_alive
from ._sqlite_store import SqliteStore
from ._store_base import ResultStore, StoreClaim, StoredResult, StoreKey
from ._store_base import State as State  # re-exported, like the helpers other stores use
from ._store_base import _digest as _digest
from ._store_base import _params as _params
from .errors import UsageError

__all__ = [
    "MemoryStore", "ResultStore", "SqliteStore", "StoreClaim", "StoreKey", "StoredResult",
    "end_owner", "new_owner", "open_store", "owner_alive",
]
_new_claim = tuple.__new__  # StoreClaim(...) without its Python-level __new__ (hot path)


class MemoryStore(ResultStore):
    """Call states in this process's memory, the oldest completed ones dropped past a bound."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[StoreKey, list[Any]] = OrderedDict()

    def claim(self, key: StoreKey, fingerprint: str, tool: str) -> StoreClaim:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                owner = new_owner()
                self._entries[key] = ["started", fingerprint, owner, time.time(), None]
                if len(self._entries) > self.max_entries:
                    self._evict()
                return _new_claim(StoreClaim, ("claimed", fingerprint, owner, 0.0, None))
            found = tuple(entry)
        return self._found(*found)

    def _evict(self) -> None:
        """Drop the oldest completed entries past the bound (calls in flight are kept).

        Stops at the first completed entry past the excess, so a claim costs O(1) however
        large the store (copying every key on each claim made a full store crawl).
        """
        excess = len(self._entries) - self.max_entries
        doomed: list[StoreKey] = []
        for key, entry in self._entries.items():
            if len(doomed) >= excess:
                break
            if entry[0] == "completed":
                doomed.append(key)
        for key in doomed:
            del self._entries[key]

    def take_over(self, key: StoreKey, previous_owner: str) -> str | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != "started" or entry[2] != previous_owner:
                return None
            entry[2], entry[3] = new_owner(), time.time()
            return str(entry[2])

    def complete(self, key: StoreKey, owner: str, result: StoredResult) -> bool:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[2] != owner:
                return False
            entry[0], entry[4] = "completed", result
            self._entries.move_to_end(key)
            return True

    def release(self, key: StoreKey, owner: str) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] == "started" and entry[2] == owner:
                del self._entries[key]

    def get(self, key: StoreKey) -> StoreClaim | None:
        with self._lock:
            entry = self._entries.get(key)
            found = None if entry is None else tuple(entry)
        return None if found is None else self._found(*found)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<MemoryStore entries={len(self._entries)}>"


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


