"""The PostgreSQL result store: one table shared by the workers of several machines.

Same table and semantics as `SqliteStore`; liveness cannot come from pids across machines, so
each claim is also a session-level advisory lock held on this store's lock connection for as
long as the call runs. A call ``started`` in the table whose lock is free belongs to a worker
that is gone (PostgreSQL drops a session's locks when its connection closes, which a dead
process's connection does): ``abandoned``. Lock held: ``running``.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import UsageError
from ._base import ResultStore, StoreClaim, StoredResult, StoreKey, _digest
from ._owners import end_owner, new_owner, owner_alive
from ._records import Records

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresStore"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_KEY = "dialect = %s AND conversation = %s AND turn = %s AND call_id = %s"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
    dialect      TEXT NOT NULL,
    conversation TEXT NOT NULL,
    turn         TEXT NOT NULL,
    call_id      TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('started', 'completed')),
    tool         TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    owner        TEXT NOT NULL,
    started_at   DOUBLE PRECISION NOT NULL,
    completed_at DOUBLE PRECISION,
    result       TEXT,
    PRIMARY KEY (dialect, conversation, turn, call_id)
)"""
_LOCKED = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND classid = %s::bigint::oid AND objid = %s::bigint::oid AND objsubid = 1)"
)
_STORES: weakref.WeakSet[PostgresStore] = weakref.WeakSet()
_INHERITED: list[Any] = []  # a parent's connections, kept (never used, never closed) in a child


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise UsageError("PostgresStore needs psycopg 3: pip install 'toolbridge[postgres]'"
                         ) from exc
    return psycopg


class PostgresStore(ResultStore):
    """Call states in a PostgreSQL table, shared by workers on any number of machines.

    ``url`` is a libpq URL (``postgresql://user:password@host:port/db``); its ``table``
    option (or the ``table`` argument) names the table, ``schema.table`` allowed, created if
    missing. Each instance holds two connections: one for statements, one for the advisory
    locks of the calls it runs (so it must reach the server directly or through a
    session-pooling proxy, not a transaction-pooling one).
    """

    durable = True
    blocking = True

    def __init__(self, url: str, *, table: str | None = None,
                 connect_timeout: float = 10.0) -> None:
        _import_psycopg()
        parts = urlsplit(url)
        if parts.scheme not in ("postgresql", "postgres"):
            raise UsageError(f"not a PostgreSQL URL: {_redact(url)!r}")
        query = parse_qsl(parts.query, keep_blank_values=True)
        table = table or next((v for k, v in query if k == "table"), "toolbridge_calls")
        names = table.split(".")
        if len(names) > 2 or not all(_NAME.fullmatch(n) for n in names):
            raise UsageError(f"table name {table!r} must be 'name' or 'schema.name' "
                             "(letters, digits, underscores)")
        self.table = table
        self._table = ".".join(f'"{n}"' for n in names)
        rest = [(k, v) for k, v in query if k != "table"]
        self._conninfo = urlunsplit(parts._replace(query=urlencode(rest)))
        self._connect_options: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in dict(rest):
            self._connect_options["connect_timeout"] = max(1, round(connect_timeout))
        if "application_name" not in dict(rest):
            self._connect_options["application_name"] = "toolbridge"
        self.url = _redact(urlunsplit(parts._replace(query=urlencode(rest))))
        self._reset()
        _STORES.add(self)
        with self._lock:
            self._connection()

    def _reset(self) -> None:
        self._lock = threading.Lock()  # guards the statement connection
        self._guard = threading.Lock()  # guards the lock connection and `_held`
        self._conn: psycopg.Connection[Any] | None = None
        self._lock_conn: psycopg.Connection[Any] | None = None
        self._held: dict[int, str] = {}  # lock id -> the owner holding it in this instance
        self._records: Records | None = getattr(self, "_records", None)

    def _after_fork(self) -> None:
        """In a forked child: the parent's sessions and locks are not ours; open our own."""
        _INHERITED.extend(c for c in (self._conn, self._lock_conn) if c is not None)
        self._reset()

    # ------------------------------------------------------------------------ connections
    def _connect(self) -> psycopg.Connection[Any]:
        conn: psycopg.Connection[Any] = _import_psycopg().connect(
            self._conninfo, **self._connect_options)
        return conn

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            conn = self._connect()
            with conn.transaction():  # concurrent CREATE IF NOT EXISTS can collide: serialize
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_id("schema", self.table),))
                conn.execute(_SCHEMA.format(table=self._table))
            self._conn = conn
        return self._conn

    def _run(self, sql: str, params: tuple[Any, ...]) -> Any:
        with self._lock:
            return self._connection().execute(sql.replace("{table}", self._table), params)

    def _locker(self) -> psycopg.Connection[Any]:
        """The lock connection (call with ``_guard`` held); a new one forgets the lost locks."""
        if self._lock_conn is None or self._lock_conn.closed:
            self._held.clear()
            conn = self._connect()
            # the server then notices a vanished host in about a minute, not the OS's hours
            conn.execute("SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; "
                         "SET tcp_keepalives_count = 3")
            self._lock_conn = conn
        return self._lock_conn

    def _acquire(self, lock_id: int, owner: str) -> bool:
        """Take the call's lock for ``owner``; ``False`` when another worker holds it."""
        with self._guard:
            holder = self._held.get(lock_id)
            if holder is not None:
                if owner_alive(holder):  # a call of this instance, in flight
                    return False
                self._unlock_held(lock_id)  # its run ended without completing (cancelled)
            got = self._locker().execute("SELECT pg_try_advisory_lock(%s)", (lock_id,))
            row = got.fetchone()
            if row is None or not row[0]:
                return False
            self._held[lock_id] = owner
            return True

    def _release_lock(self, lock_id: int, owner: str) -> None:
        with self._guard:
            if self._held.get(lock_id) == owner:
                self._unlock_held(lock_id)

    def _unlock_held(self, lock_id: int) -> None:
        del self._held[lock_id]
        if self._lock_conn is not None and not self._lock_conn.closed:
            self._lock_conn.execute("SELECT pg_advisory_unlock(%s)", (lock_id,))

    # ------------------------------------------------------------------------ the store
    def claim(self, key: StoreKey, fingerprint: str, tool: str) -> StoreClaim:
        digest = _digest(fingerprint)  # the column keeps a digest; callers see their text
        lock_id = _lock_id(self.table, *key)
        while True:
            owner = new_owner()
            try:
                got = self._acquire(lock_id, owner)
                row = None
                if got:
                    inserted = self._run(
                        "INSERT INTO {table} (dialect, conversation, turn, call_id, state, "
                        "tool, fingerprint, owner, started_at) VALUES (%s, %s, %s, %s, "
                        "'started', %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        (*key, tool, digest, owner, time.time()),
                    ).rowcount
                    if inserted == 1:
                        return StoreClaim("claimed", fingerprint, owner)
                    row = self._row(key)  # read while holding the lock: its owner is gone
                else:
                    row = self._row(key)
            except BaseException:
                self._release_lock(lock_id, owner)
                end_owner(owner)
                raise
            self._release_lock(lock_id, owner)
            end_owner(owner)
            if row is None and got:
                continue  # released between the two statements: try again
            if row is None:  # another worker is claiming it this moment
                return StoreClaim("running", fingerprint)
            found = _claim(row, alive=not got)
            return found._replace(fingerprint=fingerprint) if found.fingerprint == digest else found

    def take_over(self, key: StoreKey, previous_owner: str) -> str | None:
        lock_id = _lock_id(self.table, *key)
        owner = new_owner()
        changed = 0
        try:
            if self._acquire(lock_id, owner):
                changed = self._run(
                    f"UPDATE {{table}} SET owner = %s, started_at = %s WHERE {_KEY} "
                    "AND state = 'started' AND owner = %s",
                    (owner, time.time(), *key, previous_owner),
                ).rowcount
        finally:
            if changed != 1:
                self._release_lock(lock_id, owner)
                end_owner(owner)
        return owner if changed == 1 else None

    def complete(self, key: StoreKey, owner: str, result: StoredResult) -> bool:
        try:
            changed = self._run(
                "UPDATE {table} SET state = 'completed', result = %s, completed_at = %s "
                f"WHERE {_KEY} AND owner = %s",
                (result.to_json(), time.time(), *key, owner),
            ).rowcount
        finally:
            self._release_lock(_lock_id(self.table, *key), owner)
        return bool(changed == 1)

    def release(self, key: StoreKey, owner: str) -> None:
        try:
            self._run(f"DELETE FROM {{table}} WHERE {_KEY} AND state = 'started' "
                      "AND owner = %s", (*key, owner))
        finally:
            self._release_lock(_lock_id(self.table, *key), owner)

    def get(self, key: StoreKey) -> StoreClaim | None:
        row = self._row(key)
        if row is None or row[0] == "completed":
            return None if row is None else _claim(row, alive=False)
        lock_id = _lock_id(self.table, *key)
        with self._guard:
            holder = self._held.get(lock_id)
        if holder is not None:
            return _claim(row, alive=owner_alive(holder))
        high, low = (lock_id & 0xFFFF_FFFF_FFFF_FFFF) >> 32, lock_id & 0xFFFF_FFFF
        locked = self._run(_LOCKED, (high, low)).fetchone()
        return _claim(row, alive=bool(locked and locked[0]))

    def _row(self, key: StoreKey) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._run(
            f"SELECT state, fingerprint, owner, started_at, result FROM {{table}} WHERE {_KEY}",
            tuple(key),
        ).fetchone()
        return row

    def prune(self, older_than: float) -> int:
        """Delete completed calls finished more than ``older_than`` seconds ago; the count."""
        return int(self._run(
            "DELETE FROM {table} WHERE state = 'completed' AND completed_at < %s",
            (time.time() - older_than,),
        ).rowcount)

    def records(self) -> Records:
        """Records in a ``toolbridge_records`` table beside this store's (same schema)."""
        if self._records is None:
            from ._records_postgres import PostgresRecords

            schema = self.table.split(".")[0] + "." if "." in self.table else ""
            name = f"{schema}toolbridge_records"
            quoted = ".".join(f'"{n}"' for n in name.split("."))
            self._records = PostgresRecords(self._connect, quoted, _lock_id("schema", name))
        return self._records

    def close(self) -> None:
        """Close both connections; calls still held become abandoned to other workers."""
        if self._records is not None:
            self._records.close()
        with self._lock, self._guard:
            for conn in (self._conn, self._lock_conn):
                if conn is not None:
                    conn.close()
            self._conn = self._lock_conn = None
            self._held.clear()

    def __repr__(self) -> str:
        return f"<PostgresStore {self.url} table={self.table}>"


def _claim(row: tuple[Any, ...], alive: bool) -> StoreClaim:
    state, fingerprint, owner, started_at, result = row
    if state == "completed":
        stored = StoredResult.from_json(result) if result is not None else None
        return StoreClaim("completed", fingerprint, owner, started_at, stored)
    return StoreClaim("running" if alive else "abandoned", fingerprint, owner, started_at)


def _lock_id(*parts: str) -> int:
    """A stable signed 64-bit advisory lock id for a table's call."""
    digest = hashlib.blake2b("\0".join(parts).encode(), digest_size=8,
                             person=b"toolbridge-lock").digest()
    return int.from_bytes(digest, "big", signed=True)


def _redact(url: str) -> str:
    """``url`` without its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def _forget_connections_in_child() -> None:
    for store in list(_STORES):
        store._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_connections_in_child)
