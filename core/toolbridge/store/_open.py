"""`open_store`: a result store from a URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from .._redact import redact_url
from ..errors import UsageError
from ._base import ResultStore
from ._memory import MemoryStore
from ._sqlite import SqliteStore

__all__ = ["open_store"]


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
            raise UsageError(f"store URL {redact_url(url)!r} has no file path; use "
                             "sqlite:///results.db (relative) or sqlite:////abs/path/results.db")
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        unknown = set(query) - {"timeout", "synchronous"}
        if unknown:
            raise UsageError(f"store URL {redact_url(url)!r}: unknown option(s) {sorted(unknown)}; "
                             "known: timeout, synchronous")
        return SqliteStore(path[1:], timeout=float(query.get("timeout", 5.0)),
                           synchronous=query.get("synchronous", "full"))
    if parts.scheme in ("postgresql", "postgres"):
        from ._postgres import PostgresStore

        return PostgresStore(url)
    raise UsageError(f"unknown store URL {redact_url(url)!r}; use memory://, sqlite:///path.db or "
                     "postgresql://user@host:port/db")
