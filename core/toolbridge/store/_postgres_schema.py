"""The PostgreSQL store's table and its schema version (the same versions as SQLite's).

The version of each toolbridge table lives in ``toolbridge_schema`` in the table's own
schema. Version 0 (toolbridge 0.1) recorded none; version 2 added the ``awaiting`` state and
the ``approval`` and ``decision`` columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ._sqlite_schema import SCHEMA_VERSION

if TYPE_CHECKING:
    import psycopg

__all__ = ["prepare"]

_CREATE = """
CREATE TABLE {table} (
    dialect      TEXT NOT NULL,
    conversation TEXT NOT NULL,
    turn         TEXT NOT NULL,
    call_id      TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('claimed', 'started', 'completed',
                                                'awaiting')),
    tool         TEXT NOT NULL,
    fingerprint  TEXT,
    owner        TEXT NOT NULL,
    claimed_at   DOUBLE PRECISION NOT NULL,
    started_at   DOUBLE PRECISION,
    completed_at DOUBLE PRECISION,
    result       TEXT,
    approval     TEXT,
    decision     TEXT,
    PRIMARY KEY (dialect, conversation, turn, call_id)
)"""
_V0_COLUMNS = {"dialect", "conversation", "turn", "call_id", "state", "tool", "fingerprint",
               "owner", "started_at", "completed_at", "result"}


def prepare(conn: psycopg.Connection[Any], names: list[str], lock_id: int) -> None:
    """Make the table named ``names`` (``[table]`` or ``[schema, table]``) the current
    version: create it, migrate it from version 0, or refuse a newer one."""
    quoted = ".".join(f'"{n}"' for n in names)
    versions = ".".join(f'"{n}"' for n in [*names[:-1], "toolbridge_schema"])
    name = ".".join(names)
    with conn.transaction():  # concurrent workers collide on CREATE IF NOT EXISTS: serialize
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id,))
        exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (quoted,)).fetchone()
        conn.execute(f"CREATE TABLE IF NOT EXISTS {versions} "
                     "(name TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        row = conn.execute(f"SELECT version FROM {versions} WHERE name = %s",
                           (names[-1],)).fetchone()
        version = None if row is None else int(row[0])
        if exists and exists[0]:
            if version == SCHEMA_VERSION:
                return
            if version is not None and version > SCHEMA_VERSION:
                raise UsageError(
                    f"table {name} has schema version {version}, written by a newer "
                    f"toolbridge; this one knows versions up to {SCHEMA_VERSION}. Upgrade "
                    "toolbridge in every worker that uses it, or give this one another table "
                    "(?table=...)")
            if version is None:
                _migrate_from_0(conn, quoted, name)
            _migrate_from_1(conn, quoted)
        else:
            conn.execute(_CREATE.format(table=quoted))
        conn.execute(f"INSERT INTO {versions} (name, version) VALUES (%s, %s) ON CONFLICT "
                     "(name) DO UPDATE SET version = EXCLUDED.version",
                     (names[-1], SCHEMA_VERSION))


def _migrate_from_0(conn: psycopg.Connection[Any], quoted: str, name: str) -> None:
    """Alter a version-0 table in place: the new states, nullable fingerprints (cleared: the
    old ones digest the raw text), ``claimed_at`` (the old ``started_at``, the claim's time)."""
    columns = {r[0] for r in conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
        "AND NOT attisdropped", (quoted,))}
    if columns != _V0_COLUMNS:
        raise UsageError(
            f"table {name} has columns {sorted(columns)}, which no toolbridge wrote; rename or "
            "drop it, or give the store another table (?table=...)")
    for (constraint,) in conn.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'c'",
            (quoted,)).fetchall():
        conn.execute(f'ALTER TABLE {quoted} DROP CONSTRAINT "{constraint}"')
    conn.execute(f"ALTER TABLE {quoted} ADD COLUMN claimed_at DOUBLE PRECISION, "
                 "ALTER COLUMN started_at DROP NOT NULL, ALTER COLUMN fingerprint DROP NOT NULL")
    conn.execute(f"UPDATE {quoted} SET claimed_at = started_at, fingerprint = NULL")
    conn.execute(f"ALTER TABLE {quoted} ALTER COLUMN claimed_at SET NOT NULL")


def _migrate_from_1(conn: psycopg.Connection[Any], quoted: str) -> None:
    """Alter a version-1 table in place: the ``awaiting`` state and the approval columns."""
    for (constraint,) in conn.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'c'",
            (quoted,)).fetchall():
        conn.execute(f'ALTER TABLE {quoted} DROP CONSTRAINT "{constraint}"')
    conn.execute(f"ALTER TABLE {quoted} ADD COLUMN approval TEXT, ADD COLUMN decision TEXT, "
                 "ADD CHECK (state IN ('claimed', 'started', 'completed', 'awaiting'))")
