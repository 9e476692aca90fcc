"""The durable result store: each call's state, started then completed, keyed per call.

A call is keyed by (dialect, conversation, turn, call id). `ResultStore.claim` marks it started
atomically, so two workers never both run it; `complete` stores its result, which answers every
later delivery of the same call. `MemoryStore` lives in the process; `SqliteStore` survives it
and is shared by the processes of one machine. `open_store` builds either from a URL.
"""

from __future__ import annotations

import abc
import itertools
import json
import os
import socket
import threading
import time
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple
from urllib.parse import parse_qs, urlsplit

from .errors import UsageError
from .model import Content

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "MemoryStore", "ResultStore", "SqliteStore", "StoreClaim", "StoreKey", "StoredResult",
    "open_store",
]


class StoreKey(NamedTuple):
    """Identifies one call across deliveries."""

    dialect: str
    conversation: str
    """Session or thread."""
    turn: str
    """Turn or run."""
    call_id: str


class StoredResult(NamedTuple):
    """A completed call's answer, without the call (the replay attaches the current one)."""

    success: bool
    output: Any = None
    error: str | None = None

    def to_json(self) -> str:
        """Compact JSON; a `Content` output keeps its parts."""
        if isinstance(self.output, Content):
            body: dict[str, Any] = {"success": self.success, "content": self.output.model_dump()}
        else:
            body = {"success": self.success, "output": self.output}
        if self.error is not None:
            body["error"] = self.error
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> StoredResult:
        """Inverse of `to_json`."""
        body = json.loads(text)
        output = (Content.model_validate(body["content"]) if "content" in body
                  else body.get("output"))
        return cls(bool(body["success"]), output, body.get("error"))


State = Literal["claimed", "completed", "running", "abandoned"]


class StoreClaim(NamedTuple):
    """What `ResultStore.claim` found.

    ``claimed``: the caller now owns the call and must run it, then `complete` or `release` it.
    ``completed``: ``result`` answers it. ``running``: another live worker holds it.
    ``abandoned``: it started in a worker that is gone and never completed.
    """

    state: State
    fingerprint: str
    """The call's content (tool and arguments) as first stored."""
    owner: str = ""
    started_at: float = 0.0
    result: StoredResult | None = None


# ---------------------------------------------------------------------------- owners
_HOST = socket.gethostname()
_PROCESS: list[Any] = [os.getpid(), uuid.uuid4().hex[:12], itertools.count()]
_IN_FLIGHT: set[str] = set()  # set.add / discard / `in` are atomic under the GIL


def _process_token() -> str:
    if _PROCESS[0] != os.getpid():  # forked: a new process, a new identity
        _PROCESS[:] = [os.getpid(), uuid.uuid4().hex[:12], itertools.count()]
    return f"{_HOST}:{_PROCESS[0]}:{_PROCESS[1]}"


def new_owner() -> str:
    """A fresh owner id for one claim of this process, registered as in flight."""
    owner = f"{_process_token()}:{next(_PROCESS[2])}"
    _IN_FLIGHT.add(owner)
    return owner


def end_owner(owner: str) -> None:
    """The claim ``owner`` is no longer being run by this process."""
    _IN_FLIGHT.discard(owner)


def owner_alive(owner: str) -> bool:
    """Whether the worker behind ``owner`` may still be running its call.

    Claims of this process are alive while in flight; other processes on this machine while
    their pid exists; other machines are assumed alive.
    """
    host, _, rest = owner.partition(":")
    pid_text, _, rest = rest.partition(":")
    token = rest.partition(":")[0]
    if host != _HOST:
        return True
    mine = _process_token().split(":")
    if pid_text == mine[1]:
        return token == mine[2] and owner in _IN_FLIGHT
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OSError):
        return True
    return True


# ---------------------------------------------------------------------------- interface
class ResultStore(abc.ABC):
    """Where call states live. Methods are synchronous and thread-safe."""

    durable: ClassVar[bool] = False
    """Whether results survive the process."""
    blocking: ClassVar[bool] = False
    """Whether methods do I/O (the async runtime then calls them in a worker thread)."""

    @abc.abstractmethod
    def claim(self, key: StoreKey, fingerprint: str, tool: str) -> StoreClaim:
        """Mark ``key`` started for a new owner, atomically, or report what is there."""

    @abc.abstractmethod
    def take_over(self, key: StoreKey, previous_owner: str) -> str | None:
        """Claim an abandoned call still held by ``previous_owner``: the new owner, or ``None``."""

    @abc.abstractmethod
    def complete(self, key: StoreKey, owner: str, result: StoredResult) -> bool:
        """Store ``result`` for a call ``owner`` holds; ``False`` if another owner holds it."""

    @abc.abstractmethod
    def release(self, key: StoreKey, owner: str) -> None:
        """Forget a started call ``owner`` holds (it never ran, or may safely run again)."""

    @abc.abstractmethod
    def get(self, key: StoreKey) -> StoreClaim | None:
        """The call's current state, seen by an outsider, or ``None``."""

    def close(self) -> None:  # noqa: B027  (optional for stores without resources)
        """Release resources."""

    @staticmethod
    def _found(state: str, fingerprint: str, owner: str, started_at: float,
               result: StoredResult | None) -> StoreClaim:
        if state == "completed":
            return StoreClaim("completed", fingerprint, owner, started_at, result)
        alive = owner_alive(owner)
        return StoreClaim("running" if alive else "abandoned", fingerprint, owner, started_at)


class MemoryStore(ResultStore):
    """Call states in this process's memory, the oldest completed ones dropped past a bound."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[StoreKey, list[Any]] = OrderedDict()
        self.warned_side_effects = False

    def claim(self, key: StoreKey, fingerprint: str, tool: str) -> StoreClaim:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                owner = new_owner()
                self._entries[key] = ["started", fingerprint, owner, time.time(), None]
                if len(self._entries) > self.max_entries:
                    self._evict()
                return StoreClaim("claimed", fingerprint, owner)
            found = tuple(entry)
        return self._found(*found)

    def _evict(self) -> None:
        for key in list(self._entries)[: len(self._entries) - self.max_entries]:
            if self._entries[key][0] == "completed":
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


class SqliteStore(ResultStore):
    """Call states in an SQLite file (WAL mode), shared safely by the processes of one machine.

    Every statement is its own transaction; the claim is one ``INSERT ... ON CONFLICT DO
    NOTHING``, so exactly one worker wins a call. ``synchronous="full"`` (default) makes each
    state change survive a power loss; ``"normal"`` only a process crash, but is faster.
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
        with self._lock:
            self._connection()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():  # never share a connection over fork
            import sqlite3

            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            conn.execute(_SCHEMA)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _run(self, sql: str, params: tuple[Any, ...]) -> Any:
        with self._lock:
            return self._connection().execute(sql, params)

    def claim(self, key: StoreKey, fingerprint: str, tool: str) -> StoreClaim:
        digest = _digest(fingerprint)  # the column keeps a digest; callers see their text
        owner = new_owner()
        inserted = self._run(
            "INSERT INTO toolbridge_calls (dialect, conversation, turn, call_id, state, tool, "
            "fingerprint, owner, started_at) VALUES (?, ?, ?, ?, 'started', ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (*_params(key), tool, digest, owner, time.time()),
        ).rowcount
        if inserted == 1:
            return StoreClaim("claimed", fingerprint, owner)
        end_owner(owner)
        found = self.get(key)
        if found is None:  # released between the two statements: try once more
            return self.claim(key, fingerprint, tool)
        return found._replace(fingerprint=fingerprint) if found.fingerprint == digest else found

    def take_over(self, key: StoreKey, previous_owner: str) -> str | None:
        owner = new_owner()
        changed = self._run(
            f"UPDATE toolbridge_calls SET owner = ?, started_at = ? WHERE {_KEY} "
            "AND state = 'started' AND owner = ?",
            (owner, time.time(), *_params(key), previous_owner),
        ).rowcount
        if changed != 1:
            end_owner(owner)
            return None
        return owner

    def complete(self, key: StoreKey, owner: str, result: StoredResult) -> bool:
        changed = self._run(
            "UPDATE toolbridge_calls SET state = 'completed', result = ?, completed_at = ? "
            f"WHERE {_KEY} AND owner = ?",
            (result.to_json(), time.time(), *_params(key), owner),
        ).rowcount
        return bool(changed == 1)

    def release(self, key: StoreKey, owner: str) -> None:
        self._run(f"DELETE FROM toolbridge_calls WHERE {_KEY} AND state = 'started' "
                  "AND owner = ?", (*_params(key), owner))

    def get(self, key: StoreKey) -> StoreClaim | None:
        row = self._run(
            "SELECT state, fingerprint, owner, started_at, result FROM toolbridge_calls "
            f"WHERE {_KEY}", _params(key),
        ).fetchone()
        if row is None:
            return None
        state, fingerprint, owner, started_at, result = row
        stored = StoredResult.from_json(result) if result is not None else None
        return self._found(state, fingerprint, owner, started_at, stored)

    def prune(self, older_than: float) -> int:
        """Delete completed calls finished more than ``older_than`` seconds ago; the count."""
        return int(self._run(
            "DELETE FROM toolbridge_calls WHERE state = 'completed' AND completed_at < ?",
            (time.time() - older_than,),
        ).rowcount)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        return f"<SqliteStore {self.path!r}>"


def _digest(fingerprint: str) -> str:
    import hashlib

    return hashlib.blake2b(fingerprint.encode(), digest_size=16).hexdigest()


def _params(key: StoreKey) -> tuple[str, str, str, str]:
    return (key.dialect, key.conversation, key.turn, key.call_id)


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


