"""The PostgreSQL result store: one table shared by the workers of several machines.

Same table, states and batches as `SqliteStore`; liveness cannot come from pids across
machines, so each call a worker holds is also a session-level advisory lock on this store's
lock connection, taken before the claim's transaction and dropped when the call is completed
or released. A call held in the table whose lock is free belongs to a worker that is gone
(PostgreSQL drops a session's locks when its connection closes, which a dead process's
connection does): ``abandoned``. Lock held: ``running`` (`toolbridge.store._postgres_locks`).
"""

from __future__ import annotations

import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .._redact import redact_text, redact_url
from ..errors import BackendError, UsageError
from ._base import (
    Owned,
    ResultStore,
    StoreCall,
    StoreClaim,
    StoreCompletion,
    StoredResult,
    StoreKey,
    fingerprint_digest,
)
from ._owners import end_owner, new_owner, owner_alive
from ._postgres_locks import LOCKED, AdvisoryLocks, lock_halves
from ._postgres_locks import lock_id as _lock_id
from ._postgres_schema import prepare
from ._records import Records

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresStore"]

T = TypeVar("T")
_new_tuple = tuple.__new__  # StoreClaim(...) without its Python __new__

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_KEY = "dialect = %s AND conversation = %s AND turn = %s AND call_id = %s"
_ROW = "state, fingerprint, owner, started_at, result, approval, decision"
_STORES: weakref.WeakSet[PostgresStore] = weakref.WeakSet()
_INHERITED: list[Any] = []  # a parent's connections, kept (never used, never closed) in a child
_COMMAND_OK = 1  # psycopg.pq.ExecStatus.COMMAND_OK, without importing psycopg here


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
            raise UsageError(f"not a PostgreSQL URL: {redact_url(url)!r}")
        query = parse_qsl(parts.query, keep_blank_values=True)
        table = table or next((v for k, v in query if k == "table"), "toolbridge_calls")
        names = table.split(".")
        if len(names) > 2 or not all(_NAME.fullmatch(n) for n in names):
            raise UsageError(f"table name {table!r} must be 'name' or 'schema.name' "
                             "(letters, digits, underscores)")
        self.table = table
        self._names = names
        self._table = ".".join(f'"{n}"' for n in names)
        rest = [(k, v) for k, v in query if k != "table"]
        self._conninfo = urlunsplit(parts._replace(query=urlencode(rest)))
        self._connect_options: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in dict(rest):
            self._connect_options["connect_timeout"] = max(1, round(connect_timeout))
        if "application_name" not in dict(rest):
            self._connect_options["application_name"] = "toolbridge"
        self.url = redact_url(urlunsplit(parts._replace(query=urlencode(rest))))
        self._insert_new = (  # the calls not stored yet, in one statement (rowcount: how many)
            f"INSERT INTO {self._table} (dialect, conversation, turn, call_id, state, tool, "
            "fingerprint, owner, claimed_at) SELECT d, c, t, i, 'claimed', tool, fp, %s, %s "
            "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
            "%s::text[]) AS u(d, c, t, i, tool, fp) ON CONFLICT DO NOTHING")
        self._reset()
        _STORES.add(self)
        with self._lock:
            self._connection()

    def _reset(self) -> None:
        self._lock = threading.Lock()  # guards the statement connection
        self._conn: psycopg.Connection[Any] | None = None
        self._locks = AdvisoryLocks(self._connect)
        self._records: Records | None = getattr(self, "_records", None)

    def _after_fork(self) -> None:
        """In a forked child: the parent's sessions and locks are not ours; open our own."""
        _INHERITED.extend(c for c in (self._conn, self._locks.connection) if c is not None)
        self._reset()

    # ------------------------------------------------------------------------ connections
    def _connect(self) -> psycopg.Connection[Any]:
        """A new connection; `BackendError` (the server's message, nothing else) when the
        server cannot be reached or refuses us."""
        driver = _import_psycopg()
        try:
            conn: psycopg.Connection[Any] = driver.connect(self._conninfo,
                                                           **self._connect_options)
        except driver.Error as exc:
            # Raised outside this block, so the driver's error (whose connection state holds
            # the password) is not chained to ours as __context__.
            message = " ".join(redact_text(str(exc)).split()) or type(exc).__name__
        else:
            return conn
        raise BackendError(f"PostgreSQL store {self.url}: cannot connect: {message}")

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            conn = self._connect()
            try:
                prepare(conn, self._names, _lock_id("schema", self.table))
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _in_transaction(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``work(conn)`` in one transaction on this store's statement connection. For code
        that keeps more tables in the same database."""
        with self._lock:
            conn = self._connection()
            _command(conn, b"BEGIN")
            try:
                done = work(conn)
            except BaseException:
                _roll_back(conn)
                raise
            _command(conn, b"COMMIT")
            return done

    def _run(self, sql: str, params: tuple[Any, ...]) -> Any:
        with self._lock:
            return self._connection().execute(sql.replace("{table}", self._table), params)

    # ------------------------------------------------------------------------ the store
    def claim(self, calls: Sequence[StoreCall]) -> list[StoreClaim]:
        owner = new_owner()
        digests = [fingerprint_digest(call[1], call[2]) for call in calls]
        locked = [(_lock_id(self.table, *call[0]), owner) for call in calls]
        try:
            got = self._locks.acquire([lock for lock, _ in locked], owner)
            answers = self._in_transaction(
                lambda conn: self._claim(conn, calls, digests, got, owner))
        except BaseException:
            self._locks.release(locked)
            end_owner(owner)
            raise
        if not all(a[0] == "claimed" for a in answers):
            self._locks.release([k for k, a in zip(locked, answers, strict=True)
                                 if a[0] != "claimed"])
            if not any(a[0] == "claimed" for a in answers):
                end_owner(owner)
        return answers

    def _claim(self, conn: psycopg.Connection[Any], calls: Sequence[StoreCall],
               digests: list[str], got: list[bool], owner: str) -> list[StoreClaim]:
        """The claim's work in its transaction. With every call's lock taken (the usual
        case) the new calls are inserted first: if that was all, nothing is read."""
        now = time.time()
        ours: StoreClaim = _new_tuple(StoreClaim, ("claimed", owner, 0.0, None, None, None))
        if calls and all(got) and not any(c.approval for c in calls):
            columns = [list(column) for column in zip(*[(*c[0], c[1]) for c in calls],
                                                      strict=True)]
            if conn.execute(self._insert_new, (owner, now, *columns, digests)
                            ).rowcount == len(calls):
                return [ours] * len(calls)
        found = self._rows(conn, [c[0] for c in calls])  # what this claim inserted: `owner`
        answers: list[StoreClaim] = []
        inserts: list[tuple[Any, ...]] = []
        for call, text, locked in zip(calls, digests, got, strict=True):
            row = found.get(call.key)
            if row is None:
                if locked:
                    waits = call.approval is not None
                    inserts.append((*call.key, "awaiting" if waits else "claimed", call.tool,
                                    text, "" if waits else owner, now, call.approval))
                    answers.append(StoreClaim("awaiting", request=call.approval) if waits
                                   else ours)
                else:  # another worker is claiming it this moment
                    answers.append(StoreClaim("running"))
                continue
            state, stored, holder, started_at, result, request, decision = row
            if holder == owner:
                answers.append(ours)
            elif stored is not None and stored != text:  # NULL: migrated from schema 0
                answers.append(StoreClaim("reused"))
            elif state == "completed":
                answers.append(StoreClaim("completed", holder, started_at or 0.0,
                                          _result(result)))
            elif not locked:
                answers.append(StoreClaim("running", holder, started_at or 0.0))
            elif state == "awaiting" and decision is None:
                answers.append(StoreClaim("awaiting", request=request))
            else:  # its worker is gone (its lock was free), or decided: ours now, as it was
                conn.execute(f"UPDATE {self._table} SET owner = %s, state = CASE WHEN state = "
                             f"'awaiting' THEN 'claimed' ELSE state END WHERE {_KEY}",
                             (owner, *call.key))
                answers.append(StoreClaim("claimed", owner, started_at or 0.0, None, request,
                                          decision))
        if inserts:
            with conn.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {self._table} (dialect, conversation, turn, call_id, state, "
                    "tool, fingerprint, owner, claimed_at, approval) VALUES (%s, %s, %s, %s, "
                    "%s, %s, %s, %s, %s, %s)", inserts)
        return answers

    def _rows(self, conn: psycopg.Connection[Any], keys: list[StoreKey]
              ) -> dict[StoreKey, tuple[Any, ...]]:
        turns: dict[tuple[str, str, str], list[str]] = {}
        for key in keys:
            turns.setdefault((key[0], key[1], key[2]), []).append(key[3])
        found: dict[StoreKey, tuple[Any, ...]] = {}
        for turn, ids in turns.items():
            for call_id, *row in conn.execute(
                    f"SELECT call_id, {_ROW} FROM {self._table} WHERE dialect = %s AND "
                    "conversation = %s AND turn = %s AND call_id = ANY(%s)", (*turn, ids)):
                found[StoreKey(*turn, call_id)] = tuple(row)
        return found

    def write(self, *, started: Sequence[Owned] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[Owned] = ()) -> list[bool]:
        now = time.time()
        rows = [(result.to_json(output_json), now, *key, owner)
                for key, owner, result, output_json in completed]
        table = self._table

        def work(conn: psycopg.Connection[Any]) -> list[bool]:
            with conn.cursor() as cursor:
                if started:
                    cursor.executemany(
                        f"UPDATE {table} SET state = 'started', started_at = %s WHERE {_KEY} "
                        "AND owner = %s AND state = 'claimed'",
                        [(now, *key, owner) for key, owner in started])
                applied = [True] * len(rows)
                if rows:
                    cursor.executemany(
                        f"UPDATE {table} SET state = 'completed', result = %s, "
                        f"completed_at = %s WHERE {_KEY} AND owner = %s AND "
                        "state != 'completed'", rows)
                    if cursor.rowcount != len(rows):
                        applied = [self._holds_result(conn, c) for c in completed]
                if released:  # a decided call never run awaits its claim again
                    freed = [(*key, owner) for key, owner in released]
                    cursor.executemany(
                        f"DELETE FROM {table} WHERE {_KEY} AND owner = %s AND "
                        "state != 'completed' AND decision IS NULL", freed)
                    cursor.executemany(
                        f"UPDATE {table} SET state = 'awaiting', owner = '' WHERE {_KEY} AND "
                        "owner = %s AND state != 'completed' AND decision IS NOT NULL", freed)
            return applied

        try:
            return self._in_transaction(work)
        finally:
            self._unlock(started, completed, released)

    def _unlock(self, started: Sequence[Owned], completed: Sequence[StoreCompletion],
                released: Sequence[Owned]) -> None:
        """Drop the locks of the calls a write completed or released. With a "started" mark
        the completed calls' locks wait for this store's next lock work: the mark's thread
        runs its handler next, with no round trip between the two."""
        table = self.table
        if released:
            self._locks.release([(_lock_id(table, *key), owner) for key, owner in released])
        if completed:
            done = [(_lock_id(table, *c.key), c.owner) for c in completed]
            (self._locks.release_later if started else self._locks.release)(done)

    def _holds_result(self, conn: psycopg.Connection[Any], completion: StoreCompletion
                      ) -> bool:
        row = conn.execute(f"SELECT state, owner FROM {self._table} WHERE {_KEY}",
                           tuple(completion.key)).fetchone()
        return row is not None and row[0] == "completed" and row[1] == completion.owner

    def lookup(self, keys: Sequence[StoreKey]) -> list[StoreClaim | None]:
        return [self._lookup(key) for key in keys]

    def _lookup(self, key: StoreKey) -> StoreClaim | None:
        row = self._run(f"SELECT {_ROW} FROM {{table}} WHERE {_KEY}", tuple(key)).fetchone()
        if row is None:
            return None
        state, _, owner, started_at, result, request, _ = row
        if state == "completed":
            return StoreClaim("completed", owner, started_at or 0.0, _result(result))
        if state == "awaiting":
            return StoreClaim("awaiting", request=request)
        lock = _lock_id(self.table, *key)
        holder = self._locks.holder(lock)
        if holder is not None:
            alive = owner_alive(holder)
        else:
            locked = self._run(LOCKED, lock_halves(lock)).fetchone()
            alive = bool(locked and locked[0])
        return StoreClaim("running" if alive else "abandoned", owner, started_at or 0.0)

    approvals = True

    def decide(self, key: StoreKey, digest: str, decision: str) -> bool:
        return bool(self._run(
            f"UPDATE {{table}} SET decision = %s WHERE {_KEY} AND state = 'awaiting' AND "
            "decision IS NULL AND fingerprint = %s", (decision, *key, digest)).rowcount == 1)

    def awaiting(self) -> list[tuple[str, str | None]]:
        return [(r[0], r[1]) for r in self._run(
            "SELECT approval, decision FROM {table} WHERE state = 'awaiting' ORDER BY "
            "claimed_at", ()).fetchall()]

    def prune(self, older_than: float) -> int:
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
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._locks.forget()

    def __repr__(self) -> str:
        return f"<PostgresStore {self.url} table={self.table}>"


def _command(conn: psycopg.Connection[Any], command: bytes) -> None:
    """``command`` in one libpq call, waiting with the GIL released; after the reply only the
    status check runs (a mark's ``COMMIT`` is the window a kill must miss: docs/performance.md)."""
    result = conn.pgconn.exec_(command)
    if result.status != _COMMAND_OK:
        message = (result.error_message or conn.pgconn.error_message).decode("utf-8", "replace")
        raise _import_psycopg().OperationalError(f"{command.decode()}: {message.strip()}")


def _roll_back(conn: psycopg.Connection[Any]) -> None:
    """Roll back the driver's way (it forgets what it prepared); if it cannot, close (reconnect)."""
    try:
        conn.rollback()
    except _import_psycopg().Error:
        conn.close()


def _result(text: str | None) -> StoredResult | None:
    return None if text is None else StoredResult.from_json(text)


def _forget_connections_in_child() -> None:
    for store in list(_STORES):
        store._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_connections_in_child)
