"""`SqliteStore`: call states in an SQLite file, shared by the processes of one machine."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import UsageError
from ._base import (
    Owned,
    ResultFields,
    ResultStore,
    StoreCall,
    StoreClaim,
    StoreCompletion,
    StoredResult,
    StoreKey,
    fingerprint_digest,
    result_json,
)
from ._owners import end_owner, new_owner, owner_alive, process_id
from ._records import Records
from ._sqlite_batch import complete, insert_claimed, multi_row
from ._sqlite_schema import prepare

if TYPE_CHECKING:  # imported on first use: keeps `import toolbridge` light
    import sqlite3

__all__ = ["SqliteStore"]

T = TypeVar("T")
_new_tuple = tuple.__new__  # StoreClaim(...) without its Python __new__

_KEY = "dialect = ? AND conversation = ? AND turn = ? AND call_id = ?"
_SELECT = ("SELECT state, fingerprint, owner, started_at, result, approval, decision FROM "
           "toolbridge_calls WHERE ")
_INSERT = ("INSERT INTO toolbridge_calls (dialect, conversation, turn, call_id, tool, "
           "fingerprint, owner, claimed_at, approval, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
           "CASE WHEN ?9 IS NULL THEN 'claimed' ELSE 'awaiting' END)")
_INSERT_NEW = _INSERT + " ON CONFLICT DO NOTHING"  # the rows changed: how many were new
_TAKE_OVER = f"UPDATE toolbridge_calls SET owner = ? WHERE {_KEY} AND owner = ?"
_START = (f"UPDATE toolbridge_calls SET state = 'started', started_at = ? WHERE {_KEY} "
          "AND owner = ? AND state = 'claimed'")
_COMPLETE = ("UPDATE toolbridge_calls SET state = 'completed', result = ?, completed_at = ? "
             f"WHERE {_KEY} AND owner = ? AND state != 'completed'")
_RELEASE = (f"DELETE FROM toolbridge_calls WHERE {_KEY} AND owner = ? AND state != 'completed' "
            "AND decision IS NULL")
_RELEASE_DECIDED = (  # decided, never run: it awaits its claim again, with its decision
    f"UPDATE toolbridge_calls SET state = 'awaiting', owner = '' WHERE {_KEY} AND owner = ? "
    "AND state != 'completed' AND decision IS NOT NULL")
_CONSUME = ("UPDATE toolbridge_calls SET state = 'claimed', owner = ?, claimed_at = ? WHERE "
            f"{_KEY} AND state = 'awaiting'")
_DECIDE = (f"UPDATE toolbridge_calls SET decision = ? WHERE {_KEY} AND state = 'awaiting' AND "
           "decision IS NULL AND fingerprint = ?")
_CHUNK = 200  # keys per SELECT ... IN (...), well under SQLite's bound on parameters
_UPSERT = (3, 24)  # the SQLite that has INSERT ... ON CONFLICT DO NOTHING
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

    Every batch is one ``BEGIN IMMEDIATE`` transaction: it takes the write lock up front, so
    a busy database makes it wait (up to ``timeout`` seconds, SQLite's busy timeout) instead
    of failing when a read would have to become a write. A "database is locked" that still
    gets through is retried with backoff until ``timeout`` has passed. ``synchronous="full"``
    (default) makes each commit survive a power loss; ``"normal"`` only a process crash, but
    is faster. The table carries a schema version (see ``docs/runtime.md``).
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
        self._multi_insert, self._multi_update = multi_row()

    # ------------------------------------------------------------------ connection
    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != process_id():  # never share one over fork
            import sqlite3

            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                   check_same_thread=False)
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(f"PRAGMA synchronous = {self.synchronous}")
                prepare(conn, self.path)
            except BaseException:
                conn.close()
                raise
            self._conn, self._pid = conn, process_id()
        return self._conn

    def _retry(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, again after a busy/locked error, with backoff, until ``timeout``."""
        try:
            return attempt()
        except Exception as exc:
            if not _busy(exc):
                raise
        return self._again(attempt)

    def _again(self, attempt: Callable[[], T]) -> T:
        """`_retry` after its first attempt found the database busy."""
        deadline = time.monotonic() + self.timeout  # from the first failure: a few µs late
        delay = 0.001
        while True:
            time.sleep(delay * (0.5 + random.random()))
            try:
                return attempt()
            except Exception as exc:
                if not _busy(exc) or time.monotonic() + delay > deadline:
                    raise
            delay = min(delay * 2, 0.05)

    def _in_transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(conn)`` in one ``BEGIN IMMEDIATE`` transaction on this store's connection,
        retried while the database is busy (``work`` may run more than once). For code that
        keeps more tables in the same file."""

        with self._lock:
            try:
                return self._transaction(work)
            except Exception as exc:
                if not _busy(exc):
                    raise
            return self._again(lambda: self._transaction(work))

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """One attempt of `_in_transaction` (``_lock`` held)."""
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

    # ------------------------------------------------------------------ the store
    def claim(self, calls: Sequence[StoreCall]) -> list[StoreClaim]:
        owner = new_owner()
        now = time.time()
        rows = [(*call[0], call[1], fingerprint_digest(call[1], call[2]), owner, now,
                 call[3] if len(call) > 3 else None) for call in calls]
        return self._claimed(owner, lambda conn: _claim(conn, [c[0] for c in calls], rows,
                                                        owner))

    def claim_new(self, keys: Sequence[StoreKey], tools: Sequence[str],
                  arguments: Sequence[Mapping[str, Any]]) -> list[StoreClaim]:
        """`claim` of new calls as columns: the rows inserted in one statement; read and
        answered one by one only when some key was stored already."""
        if not self._multi_insert:
            return super().claim_new(keys, tools, arguments)
        owner = new_owner()
        now = time.time()
        params: list[Any] = []
        for key, tool, args in zip(keys, tools, arguments, strict=True):
            params += key
            params += (tool, fingerprint_digest(tool, args), owner, now)

        def work(conn: sqlite3.Connection) -> list[StoreClaim]:
            if insert_claimed(conn, params) == len(keys):
                return [_new_tuple(StoreClaim, ("claimed", owner, 0.0, None, None, None))
                        ] * len(keys)
            rows = [(*params[i:i + 8], None) for i in range(0, len(params), 8)]
            return _answer(conn, keys, rows, owner)

        return self._claimed(owner, work)

    def _claimed(self, owner: str, work: Callable[[sqlite3.Connection], list[StoreClaim]]
                 ) -> list[StoreClaim]:
        """The claim ``work`` did for ``owner``, which ends unless it holds a call now."""
        try:
            answers = self._in_transaction(work)
        except BaseException:
            end_owner(owner)
            raise
        if not any(a[0] == "claimed" for a in answers):
            end_owner(owner)
        return answers

    def complete_claimed(self, owner: str, keys: Sequence[StoreKey],
                         results: Sequence[ResultFields]) -> list[bool]:
        """`write` of ``owner``'s results, their rows updated in one statement."""
        if not self._multi_update:
            return super().complete_claimed(owner, keys, results)
        now = time.time()
        rows: list[Any] = []
        for key, r in zip(keys, results, strict=True):
            rows += key
            rows.append(result_json(r.success, r.output, r.error, r.text))

        def work(conn: sqlite3.Connection) -> list[bool]:
            if complete(conn, now, rows, owner) == len(keys):
                return [True] * len(keys)
            return [_holds_result(conn, key, owner) for key in keys]

        return self._in_transaction(work)

    def write(self, *, started: Sequence[Owned] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[Owned] = ()) -> list[bool]:
        now = time.time()
        rows = [(result_json(*result, output_json), now, *key, owner)
                for key, owner, result, output_json in completed]

        def work(conn: sqlite3.Connection) -> list[bool]:
            if len(started) == 1:  # a side effect's mark: one statement, not a batch of one
                conn.execute(_START, (now, *started[0][0], started[0][1]))
            elif started:
                conn.executemany(_START, [(now, *key, owner) for key, owner in started])
            applied = [True] * len(rows)
            if len(rows) == 1:
                if conn.execute(_COMPLETE, rows[0]).rowcount != 1:
                    applied = [_holds_result(conn, completed[0][0], completed[0][1])]
            elif rows and conn.executemany(_COMPLETE, rows).rowcount != len(rows):
                applied = [_holds_result(conn, c[0], c[1]) for c in completed]
            if released:
                freed = [(*key, owner) for key, owner in released]
                conn.executemany(_RELEASE, freed)
                conn.executemany(_RELEASE_DECIDED, freed)
            return applied

        return self._in_transaction(work)

    def lookup(self, keys: Sequence[StoreKey]) -> list[StoreClaim | None]:
        def attempt() -> list[Any]:
            conn = self._connection()
            return [conn.execute(_SELECT + _KEY, tuple(key)).fetchone() for key in keys]

        with self._lock:
            rows = self._retry(attempt)
        return [None if row is None else self._seen(row[0], row[2], row[3], _result(row[4]),
                                                    row[5]) for row in rows]

    approvals = True

    def decide(self, key: StoreKey, digest: str, decision: str) -> bool:
        return self._in_transaction(
            lambda conn: conn.execute(_DECIDE, (decision, *key, digest)).rowcount == 1)

    def awaiting(self) -> list[tuple[str, str | None]]:
        def attempt() -> list[tuple[str, str | None]]:
            return [(row[0], row[1]) for row in self._connection().execute(
                "SELECT approval, decision FROM toolbridge_calls WHERE state = 'awaiting' "
                "ORDER BY claimed_at")]

        with self._lock:
            return self._retry(attempt)

    def prune(self, older_than: float) -> int:
        cutoff = time.time() - older_than
        return self._in_transaction(lambda conn: int(conn.execute(
            "DELETE FROM toolbridge_calls WHERE state = 'completed' AND completed_at < ?",
            (cutoff,)).rowcount))

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


def _claim(conn: sqlite3.Connection, keys: Sequence[StoreKey], rows: list[tuple[Any, ...]],
           owner: str) -> list[StoreClaim]:
    """The claim's work, inside its transaction (the write lock is held: nothing changes).

    ``rows`` are the calls' rows to insert. The new calls are inserted first; when that was
    all of them (the usual case) nothing is read, else every row is read and answered.
    """
    import sqlite3

    if (sqlite3.sqlite_version_info >= _UPSERT  # else: read first, then insert the new
            and conn.executemany(_INSERT_NEW, rows).rowcount == len(rows)):
        ours: StoreClaim = _new_tuple(StoreClaim, ("claimed", owner, 0.0, None, None, None))
        return [ours if new[8] is None else StoreClaim("awaiting", request=new[8])
                for new in rows]
    return _answer(conn, keys, rows, owner)


def _answer(conn: sqlite3.Connection, keys: Sequence[StoreKey], rows: list[tuple[Any, ...]],
            owner: str) -> list[StoreClaim]:
    """Each call's answer from its stored row (what this claim inserted holds ``owner``),
    inserting the rows of calls not stored yet (SQLite before 3.24 inserts nothing first)."""
    ours: StoreClaim = _new_tuple(StoreClaim, ("claimed", owner, 0.0, None, None, None))
    found = _rows(conn, list(keys))
    answers: list[StoreClaim] = []
    inserts: list[tuple[Any, ...]] = []
    for key, new in zip(keys, rows, strict=True):
        row = found.get(key)
        if row is None:
            inserts.append(new)
            answers.append(ours if new[8] is None else StoreClaim("awaiting", request=new[8]))
            continue
        state, stored, holder, started_at, result, request, decision = row
        if holder == owner:
            answers.append(ours if new[8] is None else StoreClaim("awaiting", request=new[8]))
            continue
        if stored is not None and stored != new[5]:  # NULL: migrated from schema 0, unknown
            answers.append(StoreClaim("reused"))
        elif state == "completed":
            answers.append(StoreClaim("completed", holder, started_at or 0.0, _result(result)))
        elif state == "awaiting":
            if decision is None:
                answers.append(StoreClaim("awaiting", request=request))
            else:  # decided: the decision is consumed by this claim
                conn.execute(_CONSUME, (owner, new[7], *key))
                answers.append(StoreClaim("claimed", owner, 0.0, None, request, decision))
        elif owner_alive(holder):
            answers.append(StoreClaim("running", holder, started_at or 0.0))
        else:
            conn.execute(_TAKE_OVER, (owner, *key, holder))
            answers.append(StoreClaim("claimed", owner, started_at or 0.0, None, request,
                                      decision))
    if inserts:
        conn.executemany(_INSERT, inserts)
    return answers


def _rows(conn: sqlite3.Connection, keys: list[StoreKey]) -> dict[StoreKey, tuple[Any, ...]]:
    """The stored rows of ``keys``, by key: one query per turn (and chunk of ids)."""
    turns: dict[tuple[str, str, str], list[str]] = {}
    for key in keys:
        turns.setdefault((key[0], key[1], key[2]), []).append(key[3])
    found: dict[StoreKey, tuple[Any, ...]] = {}
    for turn, ids in turns.items():
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            sql = ("SELECT call_id, state, fingerprint, owner, started_at, result, approval, "
                   "decision FROM "
                   "toolbridge_calls WHERE dialect = ? AND conversation = ? AND turn = ? AND "
                   f"call_id IN ({', '.join('?' * len(chunk))})")
            for call_id, *row in conn.execute(sql, (*turn, *chunk)):
                found[StoreKey(*turn, call_id)] = tuple(row)
    return found


def _holds_result(conn: sqlite3.Connection, key: StoreKey, owner: str) -> bool:
    """Whether ``owner``'s result for ``key`` applied (after a write that changed fewer rows
    than it had results)."""
    row = conn.execute("SELECT state, owner FROM toolbridge_calls WHERE " + _KEY,
                       tuple(key)).fetchone()
    return row is not None and row[0] == "completed" and row[1] == owner


def _result(text: str | None) -> StoredResult | None:
    return None if text is None else StoredResult.from_json(text)
