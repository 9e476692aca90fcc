"""`PostgresRecords`: records in a ``toolbridge_records`` table of a `PostgresStore`'s database."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._records import Records, check_value

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresRecords"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (namespace, key)
)"""
_INHERITED: list[Any] = []  # a parent's connection, kept (never used, never closed) in a child


class PostgresRecords(Records):
    """Records in ``table`` (quoted, maybe schema-qualified) of the database ``connect``
    reaches; one autocommit connection of its own, so every change is durable on return."""

    durable = True

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], table: str,
                 lock_id: int) -> None:
        self._connect = connect
        self.table = table
        self._lock_id = lock_id
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._pid = 0

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is not None and self._pid != os.getpid():
            _INHERITED.append(self._conn)  # the parent's session is not ours to use or close
            self._conn = None
        if self._conn is None or self._conn.closed:
            conn = self._connect()
            with conn.transaction():  # concurrent CREATE IF NOT EXISTS can collide: serialize
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_id,))
                conn.execute(_SCHEMA.format(table=self.table))
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _run(self, sql: str, params: tuple[Any, ...]) -> Any:
        with self._lock:
            return self._connection().execute(sql.format(table=self.table), params)

    def get(self, namespace: str, key: str) -> str | None:
        row = self._run("SELECT value FROM {table} WHERE namespace = %s AND key = %s",
                        (namespace, key)).fetchone()
        return None if row is None else str(row[0])

    def put(self, namespace: str, key: str, value: str) -> None:
        check_value(value)
        self._run("INSERT INTO {table} (namespace, key, value, updated_at) VALUES "
                  "(%s, %s, %s, %s) ON CONFLICT (namespace, key) DO UPDATE SET "
                  "value = excluded.value, updated_at = excluded.updated_at",
                  (namespace, key, value, time.time()))

    def delete(self, namespace: str, key: str) -> bool:
        return bool(self._run("DELETE FROM {table} WHERE namespace = %s AND key = %s",
                              (namespace, key)).rowcount)

    def list(self, namespace: str, prefix: str = "") -> dict[str, str]:
        rows = self._run("SELECT key, value FROM {table} WHERE namespace = %s AND "
                         "left(key, %s) = %s ORDER BY key",
                         (namespace, len(prefix), prefix)).fetchall()
        return {str(k): str(v) for k, v in rows}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __repr__(self) -> str:
        return f"<PostgresRecords {self.table}>"
