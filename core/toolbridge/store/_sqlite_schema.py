"""The SQLite store's table and its schema version: created, migrated in place, or refused.

Version 0 (toolbridge 0.1, no version recorded): states ``started`` / ``completed``, the
fingerprint a digest of the raw argument text. Version 1: states ``claimed`` / ``started`` /
``completed``, the fingerprint a digest of the decoded arguments' canonical JSON (``NULL`` for
rows migrated from version 0, whose digest cannot be recomputed). Version 2: the state
``awaiting`` (a call waiting for a person's decision), with the ``approval`` request and its
``decision`` (JSON text). ``toolbridge_schema`` holds the version of each toolbridge table in
the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    import sqlite3

__all__ = ["SCHEMA_VERSION", "prepare"]

SCHEMA_VERSION = 2
TABLE = "toolbridge_calls"

_CREATE = """
CREATE TABLE {name} (
    dialect      TEXT NOT NULL,
    conversation TEXT NOT NULL,
    turn         TEXT NOT NULL,
    call_id      TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('claimed', 'started', 'completed',
                                                'awaiting')),
    tool         TEXT NOT NULL,
    fingerprint  TEXT,
    owner        TEXT NOT NULL,
    claimed_at   REAL NOT NULL,
    started_at   REAL,
    completed_at REAL,
    result       TEXT,
    approval     TEXT,
    decision     TEXT,
    PRIMARY KEY (dialect, conversation, turn, call_id)
) WITHOUT ROWID
"""
_VERSIONS = ("CREATE TABLE IF NOT EXISTS toolbridge_schema "
             "(name TEXT PRIMARY KEY, version INTEGER NOT NULL)")
_V0_COLUMNS = {"dialect", "conversation", "turn", "call_id", "state", "tool", "fingerprint",
               "owner", "started_at", "completed_at", "result"}
_V1_COLUMNS = [
    "dialect", "conversation", "turn", "call_id", "state", "tool", "fingerprint", "owner",
    "claimed_at", "started_at", "completed_at", "result"]


def _state(conn: sqlite3.Connection) -> tuple[bool, int | None]:
    """Whether the table exists, and its recorded version (``None``: none recorded)."""
    import sqlite3

    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                          (TABLE,)).fetchone() is not None
    try:
        row = conn.execute("SELECT version FROM toolbridge_schema WHERE name = ?",
                           (TABLE,)).fetchone()
    except sqlite3.OperationalError:  # no version table yet
        return exists, None
    return exists, None if row is None else int(row[0])


def prepare(conn: sqlite3.Connection, path: str) -> None:
    """Make the file's table the current version: create it, migrate it, or refuse it."""
    if _state(conn) == (True, SCHEMA_VERSION):  # the usual case: reads only
        return
    conn.execute("BEGIN IMMEDIATE")  # one process migrates; the others then see it done
    try:
        exists, version = _state(conn)
        if exists and version is not None and version > SCHEMA_VERSION:
            raise UsageError(
                f"{path}: table {TABLE} has schema version {version}, written by a newer "
                f"toolbridge; this one knows versions up to {SCHEMA_VERSION}. Upgrade "
                "toolbridge in every worker that uses this file, or give this one another file")
        if not exists:
            conn.execute(_CREATE.format(name=TABLE))
        elif version is None:
            _migrate_from_0(conn, path)
        elif version == 1:
            _migrate_from_1(conn)
        conn.execute(_VERSIONS)
        conn.execute("INSERT OR REPLACE INTO toolbridge_schema (name, version) VALUES (?, ?)",
                     (TABLE, SCHEMA_VERSION))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _migrate_from_0(conn: sqlite3.Connection, path: str) -> None:
    """Rebuild a version-0 table (its ``CHECK`` cannot be altered in place), keeping its rows.

    A ``started`` row stays started: its handler may have run. Fingerprints become ``NULL``.
    """
    columns = {row[1] for row in conn.execute(f"PRAGMA table_info({TABLE})")}
    if columns != _V0_COLUMNS:
        raise UsageError(
            f"{path}: table {TABLE} has columns {sorted(columns)}, which no toolbridge wrote; "
            f"rename or drop it (DROP TABLE {TABLE}), or give the store another file")
    conn.execute(f"ALTER TABLE {TABLE} RENAME TO {TABLE}_v0")
    conn.execute(_CREATE.format(name=TABLE))
    conn.execute(
        f"INSERT INTO {TABLE} (dialect, conversation, turn, call_id, state, tool, fingerprint, "
        "owner, claimed_at, started_at, completed_at, result) SELECT dialect, conversation, "
        "turn, call_id, state, tool, NULL, owner, started_at, started_at, completed_at, result "
        f"FROM {TABLE}_v0")
    conn.execute(f"DROP TABLE {TABLE}_v0")


def _migrate_from_1(conn: sqlite3.Connection) -> None:
    """Rebuild a version-1 table with the ``awaiting`` state and the approval columns."""
    columns = ", ".join(_V1_COLUMNS)
    conn.execute(f"ALTER TABLE {TABLE} RENAME TO {TABLE}_v1")
    conn.execute(_CREATE.format(name=TABLE))
    conn.execute(f"INSERT INTO {TABLE} ({columns}) SELECT {columns} FROM {TABLE}_v1")
    conn.execute(f"DROP TABLE {TABLE}_v1")
