"""The SQLite store's statements for a payload's common path: many rows in one statement.

A claim of new calls is one ``INSERT ... VALUES (...), (...) ON CONFLICT DO NOTHING``, their
results one ``UPDATE ... FROM (VALUES ...)``: SQLite steps one statement instead of one per
row (``executemany``), about 40 us less per payload of 8 calls. Each statement takes at most
`CHUNK` rows (within the 999 parameters older SQLite allows); its text is made once per row
count. SQLite before 3.24 (no upsert) or 3.33 (no ``UPDATE ... FROM``) takes the store's
per-row statements instead (`multi_row` says which it has).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the store imports sqlite3 on first use: keeps `import toolbridge` light
    import sqlite3

__all__ = ["CHUNK", "complete", "insert_claimed", "multi_row"]

CHUNK = 100
"""Rows per statement: 8 parameters each at most, under the 999 of SQLite before 3.32."""
_CLAIMED_ROW = 8  # parameters per claimed row: the key, tool, fingerprint, owner, claimed_at
_RESULT_ROW = 5  # parameters per result: the key, the result


def multi_row() -> tuple[bool, bool]:
    """Whether this SQLite inserts (3.24: upsert) and updates (3.33: ``UPDATE ... FROM``)
    many rows in one statement."""
    import sqlite3

    return sqlite3.sqlite_version_info >= (3, 24), sqlite3.sqlite_version_info >= (3, 33)


@lru_cache(maxsize=64)
def _insert(rows: int) -> str:
    return ("INSERT INTO toolbridge_calls (dialect, conversation, turn, call_id, tool, "
            "fingerprint, owner, claimed_at, state) VALUES "
            + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, 'claimed')"] * rows)
            + " ON CONFLICT DO NOTHING")


@lru_cache(maxsize=64)
def _update(rows: int) -> str:
    return ("UPDATE toolbridge_calls SET state = 'completed', result = v.column5, "
            "completed_at = ? FROM (VALUES " + ", ".join(["(?, ?, ?, ?, ?)"] * rows)
            + ") AS v WHERE toolbridge_calls.dialect = v.column1 AND conversation = v.column2 "
            "AND turn = v.column3 AND call_id = v.column4 AND owner = ? AND "
            "state != 'completed'")


def insert_claimed(conn: sqlite3.Connection, params: Sequence[Any]) -> int:
    """Insert the ``claimed`` rows whose parameters ``params`` holds flat (8 a row: key, tool,
    fingerprint digest, owner, claimed_at), skipping keys already stored: how many were new."""
    step = CHUNK * _CLAIMED_ROW
    if len(params) <= step:
        return int(conn.execute(_insert(len(params) // _CLAIMED_ROW), params).rowcount)
    new = 0
    for start in range(0, len(params), step):
        chunk = params[start:start + step]
        new += conn.execute(_insert(len(chunk) // _CLAIMED_ROW), chunk).rowcount
    return new


def complete(conn: sqlite3.Connection, now: float, rows: Sequence[Any], owner: str) -> int:
    """Complete the calls ``owner`` holds with their results, ``rows`` flat (5 a call: key,
    result JSON), each only if not completed yet: how many rows changed."""
    step = CHUNK * _RESULT_ROW
    changed = 0
    for start in range(0, len(rows), step):
        chunk = rows[start:start + step]
        changed += conn.execute(_update(len(chunk) // _RESULT_ROW),
                                (now, *chunk, owner)).rowcount
    return changed
