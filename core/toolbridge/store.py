"""The durable result store: each call's state, started then completed, keyed per call.

A call is keyed by (dialect, conversation, turn, call id). `ResultStore.claim` marks it started
atomically, so two workers never both run it; `complete` stores its result, which answers every
later delivery of the same call. `MemoryStore` lives in the process; `SqliteStore` survives it
and is shared by the processes of one machine. `open_store` builds either from a URL.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from ._memory_store import MemoryStore
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


