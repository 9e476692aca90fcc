"""`PostgresStore`'s liveness: a session-level advisory lock per call a worker holds.

The locks live on a connection of their own (the lock connection), apart from the statement
connection, so a transaction's end never drops them; PostgreSQL drops them when the session
ends, which a dead process's does. A call's lock is taken before its claim's transaction and
dropped once its result is committed, or its claim released.
"""

from __future__ import annotations

import hashlib
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._owners import owner_alive

if TYPE_CHECKING:
    import psycopg

__all__ = ["LOCKED", "AdvisoryLocks", "lock_id"]

LOCKED = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND classid = %s::bigint::oid AND objid = %s::bigint::oid AND objsubid = 1)"
)
"""Whether any session holds the lock ``(high, low)`` (`lock_halves`), as `pg_locks` shows it."""


def lock_id(*parts: str) -> int:
    """A stable signed 64-bit advisory lock id for a table's call."""
    key = hashlib.blake2b("\0".join(parts).encode(), digest_size=8, person=b"toolbridge-lock")
    return int.from_bytes(key.digest(), "big", signed=True)


def lock_halves(lock: int) -> tuple[int, int]:
    """The ``classid`` and ``objid`` that `pg_locks` shows for a one-bigint advisory lock."""
    return (lock & 0xFFFF_FFFF_FFFF_FFFF) >> 32, lock & 0xFFFF_FFFF


class AdvisoryLocks:
    """The advisory locks one store instance holds, on its lock connection.

    ``connect`` opens a connection (a new one forgets the locks of a lost one). Dropping the
    locks of results stored with a "started" mark waits for this instance's next lock work
    (`release_later`): the mark's thread runs a handler next, and a kill between the mark's
    commit and that handler is the window to keep narrow, with no round trip in it.
    """

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]]) -> None:
        self._connect = connect
        self._guard = threading.Lock()  # guards the lock connection and `_held`
        self.connection: psycopg.Connection[Any] | None = None
        self._held: dict[int, str] = {}  # lock id -> the owner holding it in this instance
        self._later: deque[tuple[int, str]] = deque()  # to drop at the next lock work

    def _locker(self) -> psycopg.Connection[Any]:
        """The lock connection (call with ``_guard`` held)."""
        if self.connection is None or self.connection.closed:
            self._held.clear()
            self._later.clear()
            conn = self._connect()
            # the server then notices a vanished host in about a minute, not the OS's hours
            conn.execute("SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; "
                         "SET tcp_keepalives_count = 3")
            self.connection = conn
        return self.connection

    def holder(self, lock: int) -> str | None:
        """The owner holding ``lock`` in this instance, if one does."""
        with self._guard:
            return self._held.get(lock)

    def acquire(self, locks: list[int], owner: str) -> list[bool]:
        """Take each call's lock for ``owner``; ``False`` where another worker holds it."""
        with self._guard:
            wanted: list[int] = []
            for lock in locks:
                holder = self._held.get(lock)
                if holder is not None and owner_alive(holder):
                    continue  # a call of this instance, in flight
                if holder is not None:
                    self._unlock([lock])  # its run ended without completing
                wanted.append(lock)
            self._unlock_later()
            got: set[int] = set()
            if wanted:
                rows = self._locker().execute(
                    "SELECT id, pg_try_advisory_lock(id) FROM unnest(%s::bigint[]) AS id",
                    (wanted,)).fetchall()
                got = {lock for lock, ok in rows if ok}
            for lock in got:
                self._held[lock] = owner
            return [lock in got for lock in locks]

    def release(self, locks: Sequence[tuple[int, str]]) -> None:
        """Drop the locks ``(lock, owner)`` this instance holds for those owners (and any
        left for later)."""
        with self._guard:
            self._unlock_later()
            self._unlock([lock for lock, owner in locks if self._held.get(lock) == owner])

    def release_later(self, locks: Sequence[tuple[int, str]]) -> None:
        """Drop the locks ``(lock, owner)`` at this instance's next lock work, not now
        (without waiting for the guard: a lock round trip may hold it)."""
        self._later.extend(locks)  # atomic, as `popleft` is

    def forget(self) -> None:
        """The lock connection is closed: its session's locks are gone."""
        with self._guard:
            if self.connection is not None:
                self.connection.close()
            self.connection = None
            self._held.clear()
            self._later.clear()

    def _unlock_later(self) -> None:
        later = []
        pending = self._later
        while pending:
            later.append(pending.popleft())
        self._unlock([lock for lock, owner in later if self._held.get(lock) == owner])

    def _unlock(self, locks: list[int]) -> None:
        locks = list(dict.fromkeys(locks))
        for lock in locks:
            del self._held[lock]
        if locks and self.connection is not None and not self.connection.closed:
            self.connection.execute(
                "SELECT pg_advisory_unlock(id) FROM unnest(%s::bigint[]) AS id", (locks,))
