"""`SqliteStore`: call states in an SQLite file, shared by the processes of one machine."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import UsageError
from ._base import ResultStore, StoreClaim, StoredResult, StoreKey, _digest, _params
from ._owners import end_owner, new_owner
from ._records import Records

if TYPE_CHECKING:  # imported on first use: keeps `import toolbridge` light
    import sqlite3

__all__ = ["SqliteStore"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS toolbridge_calls (
    dialect      TEXT NOT NULL,
    conversation TEXT NOT NULL,
    turn         TEXT NOT NULL,
    call_id      TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('started', 'completed')),
    tool         TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    owner        TEXT NOT NULL,
    started_at   REAL NOT NULL,
    completed_at REAL,
    result       TEXT,
    PRIMARY KEY (dialect, conversation, turn, call_id)
) WITHOUT ROWID
"""
_KEY = "dialect = ? AND conversation = ? AND turn = ? AND call_id = ?"
_SELECT = f"SELECT state, fingerprint, owner, started_at, result FROM toolbridge_calls WHERE {_KEY}"
_INSERT = (
    "INSERT INTO toolbridge_calls (dialect, conversation, turn, call_id, state, tool, "
    "fingerprint, owner, started_at) VALUES (?, ?, ?, ?, 'started', ?, ?, ?, ?) "
    "ON CONFLICT DO NOTHING"
)
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6


def _busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's "database is locked/busy" (worth retrying)."""
    import sqlite3

    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class SqliteStore(ResultStore):
    """Call states in an SQLite file (WAL mode), shared safely by the processes of one machine.

    Every change is one ``BEGIN IMMEDIATE`` transaction: it takes the write lock up front, so
    a busy database makes it wait (up to ``timeout`` seconds, SQLite's busy timeout) instead
    of failing when a read would have to become a write. A "database is locked" that still
    gets through is retried with backoff until ``timeout`` has passed. The claim inserts with
    ``ON CONFLICT DO NOTHING``, so exactly one worker wins a call. ``synchronous="full"``
    (default) makes each state change survive a power loss; ``"normal"`` only a process crash,
    but is faster.
    """

    durable = True
    blocking = True

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0,
                 synchronous: str = "full") -> None:
        if synchronous.lower() not in ("full", "normal"):
            raise UsageError(f"synchronous must be 'full' or 'normal', not {synchronous!r}")
        self.path = os.fspath(path)
        self.timeout = timeout
        self.synchronous = synchronous.upper()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._records: Records | None = None
        with self._lock:
            self._retry(self._connection)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():  # never share a connection over fork
            import sqlite3

            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                   check_same_thread=False)
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(f"PRAGMA synchronous = {self.synchronous}")
                conn.execute(_SCHEMA)
            except BaseException:
                conn.close()
                raise
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _retry(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, again after a busy/locked error, with backoff, until ``timeout``."""
        deadline = time.monotonic() + self.timeout
        delay = 0.001
        while True:
            try:
                return attempt()
            except Exception as exc:
                if not _busy(exc) or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.05)

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(conn)`` in one ``BEGIN IMMEDIATE`` transaction, retried while busy."""

        def attempt() -> T:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except BaseException:
                try:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                except Exception:  # the connection is gone: nothing to roll back
                    pass
                raise
            return result

        with self._lock:
            return self._retry(attempt)

    def _change(self, sql: str, params: tuple[Any, ...]) -> int:
        """Rows changed by one statement, in its own write transaction."""
        return self._write(lambda conn: int(conn.execute(sql, params).rowcount))

    def claim(self, key: StoreKey, fingerprint: str, tool: str) -> StoreClaim:
        digest = _digest(fingerprint)  # the column keeps a digest; callers see their text
        owner = new_owner()
        params = _params(key)

        def work(conn: sqlite3.Connection) -> Any:
            if conn.execute(_INSERT, (*params, tool, digest, owner, time.time())).rowcount == 1:
                return None
            return conn.execute(_SELECT, params).fetchone()  # same transaction: still there

        try:
            row = self._write(work)
        except BaseException:
            end_owner(owner)
            raise
        if row is None:
            return StoreClaim("claimed", fingerprint, owner)
        end_owner(owner)
        found = self._from_row(row)
        return found._replace(fingerprint=fingerprint) if found.fingerprint == digest else found

    def take_over(self, key: StoreKey, previous_owner: str) -> str | None:
        owner = new_owner()
        try:
            changed = self._change(
                f"UPDATE toolbridge_calls SET owner = ?, started_at = ? WHERE {_KEY} "
                "AND state = 'started' AND owner = ?",
                (owner, time.time(), *_params(key), previous_owner))
        except BaseException:
            end_owner(owner)
            raise
        if changed != 1:
            end_owner(owner)
            return None
        return owner

    def complete(self, key: StoreKey, owner: str, result: StoredResult) -> bool:
        return self._change(
            "UPDATE toolbridge_calls SET state = 'completed', result = ?, completed_at = ? "
            f"WHERE {_KEY} AND owner = ?",
            (result.to_json(), time.time(), *_params(key), owner)) == 1

    def release(self, key: StoreKey, owner: str) -> None:
        self._change(f"DELETE FROM toolbridge_calls WHERE {_KEY} AND state = 'started' "
                     "AND owner = ?", (*_params(key), owner))

    def get(self, key: StoreKey) -> StoreClaim | None:
        params = _params(key)

        def attempt() -> Any:
            return self._connection().execute(_SELECT, params).fetchone()

        with self._lock:
            row = self._retry(attempt)
        return None if row is None else self._from_row(row)

    def _from_row(self, row: tuple[Any, ...]) -> StoreClaim:
        state, fingerprint, owner, started_at, result = row
        stored = StoredResult.from_json(result) if result is not None else None
        return self._found(state, fingerprint, owner, started_at, stored)

    def prune(self, older_than: float) -> int:
        """Delete completed calls finished more than ``older_than`` seconds ago; the count."""
        return self._change(
            "DELETE FROM toolbridge_calls WHERE state = 'completed' AND completed_at < ?",
            (time.time() - older_than,))

    def records(self) -> Records:
        """Records in a ``toolbridge_records`` table of this store's file."""
        if self._records is None:
            from ._records_sqlite import SqliteRecords

            self._records = SqliteRecords(self.path, timeout=self.timeout,
                                          synchronous=self.synchronous)
        return self._records

    def close(self) -> None:
        if self._records is not None:
            self._records.close()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        return f"<SqliteStore {self.path!r}>"
