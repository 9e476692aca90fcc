"""`SqliteRecords`: records in a ``toolbridge_records`` table of a `SqliteStore`'s file."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ._records import Records, check_value

if TYPE_CHECKING:
    import sqlite3

__all__ = ["SqliteRecords"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS toolbridge_records (
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID
"""


def _busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's "database is locked/busy" (the same test as `SqliteStore`'s,
    kept here so this module does not import the store's)."""
    import sqlite3

    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class SqliteRecords(Records):
    """Records in the SQLite file at ``path`` (WAL mode, like its store); each change is one
    ``BEGIN IMMEDIATE`` transaction, durable on return with ``synchronous="full"``."""

    durable = True

    def __init__(self, path: str, *, timeout: float = 5.0, synchronous: str = "FULL") -> None:
        self.path = path
        self.timeout = timeout
        self.synchronous = synchronous.upper()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():  # never share one over fork
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

    def _run(self, work: Callable[[sqlite3.Connection], T], *, write: bool) -> T:
        """``work(conn)`` (in a write transaction if ``write``), again while the file is busy."""
        deadline = time.monotonic() + self.timeout
        delay = 0.001
        with self._lock:
            while True:
                conn = self._connection()
                try:
                    if not write:
                        return work(conn)
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        result = work(conn)
                        conn.execute("COMMIT")
                    except BaseException:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        raise
                    return result
                except Exception as exc:
                    if not _busy(exc) or time.monotonic() + delay > deadline:
                        raise
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.05)

    def get(self, namespace: str, key: str) -> str | None:
        row = self._run(lambda c: c.execute(
            "SELECT value FROM toolbridge_records WHERE namespace = ? AND key = ?",
            (namespace, key)).fetchone(), write=False)
        return None if row is None else str(row[0])

    def put(self, namespace: str, key: str, value: str) -> None:
        check_value(value)
        self._run(lambda c: c.execute(
            "INSERT INTO toolbridge_records (namespace, key, value, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (namespace, key) DO UPDATE SET "
            "value = excluded.value, updated_at = excluded.updated_at",
            (namespace, key, value, time.time())), write=True)

    def delete(self, namespace: str, key: str) -> bool:
        return self._run(lambda c: c.execute(
            "DELETE FROM toolbridge_records WHERE namespace = ? AND key = ?",
            (namespace, key)).rowcount, write=True) > 0

    def list(self, namespace: str, prefix: str = "") -> dict[str, str]:
        rows = self._run(lambda c: c.execute(
            "SELECT key, value FROM toolbridge_records WHERE namespace = ? AND "
            "substr(key, 1, ?) = ? ORDER BY key", (namespace, len(prefix), prefix)).fetchall(),
            write=False)
        return {str(k): str(v) for k, v in rows}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        return f"<SqliteRecords {self.path!r}>"
