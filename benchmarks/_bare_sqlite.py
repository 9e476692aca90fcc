"""The SQLite floor of `bench_handle.py`: a bare ``sqlite3`` doing the commits the SQLite
store makes, and nothing else; and what filesystem a path is on."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any


class BareSqlite:
    """The floor of a durable store: the same 2 commits per payload (the same rows into the
    same table: 8 claims, then their 8 results), and nothing else."""

    def __init__(self, path: Path) -> None:
        from toolbridge.store._sqlite_schema import TABLE, prepare

        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        prepare(self.conn, str(path))
        self.table = TABLE

    def _rows(self, payload: dict[str, Any]) -> list[tuple[Any, ...]]:
        now = time.time()
        return [("openai-agents", payload["id"], action["turn_id"], action["call_id"],
                 action["name"], "0123456789abcdef0123456789abcdef", "host:1:2:3:4", now)
                for action in payload["required_actions"]]

    def two_commits(self, payload: dict[str, Any]) -> None:
        now = time.time()
        rows = [("openai-agents", payload["id"], action["turn_id"], action["call_id"],
                 action["name"], "0123456789abcdef0123456789abcdef", "host:1:2:3:4", now)
                for action in payload["required_actions"]]
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            f"INSERT INTO {self.table} (dialect, conversation, turn, call_id, state, tool, "
            "fingerprint, owner, claimed_at) VALUES (?, ?, ?, ?, 'claimed', ?, ?, ?, ?)", rows)
        self.conn.execute("COMMIT")
        result = '{"success":true,"output":{"id":"x","name":"Ada Lovelace","tier":"gold"}}'
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            f"UPDATE {self.table} SET state = 'completed', result = ?, completed_at = ? WHERE "
            "dialect = ? AND conversation = ? AND turn = ? AND call_id = ? AND owner = ?",
            [(result, now, *row[:4], row[6]) for row in rows])
        self.conn.execute("COMMIT")


    def side_effect_commits(self, payload: dict[str, Any]) -> None:
        """What the store commits for side-effecting tools: the claim, then per call its
        "started" mark (carrying the previous call's result), then the last result."""
        rows, now = self._rows(payload), time.time()
        table = self.table
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            f"INSERT INTO {table} (dialect, conversation, turn, call_id, state, tool, "
            "fingerprint, owner, claimed_at) VALUES (?, ?, ?, ?, 'claimed', ?, ?, ?, ?)", rows)
        self.conn.execute("COMMIT")
        result = '{"success":true,"output":{"id":"x","name":"Ada Lovelace","tier":"gold"}}'
        complete = (f"UPDATE {table} SET state = 'completed', result = ?, completed_at = ? "
                    "WHERE dialect = ? AND conversation = ? AND turn = ? AND call_id = ? AND "
                    "owner = ?")
        previous = None
        for row in rows:
            self.conn.execute("BEGIN IMMEDIATE")
            if previous is not None:
                self.conn.execute(complete, (result, now, *previous[:4], previous[6]))
            self.conn.execute(
                f"UPDATE {table} SET state = 'started', started_at = ? WHERE dialect = ? AND "
                "conversation = ? AND turn = ? AND call_id = ? AND owner = ?",
                (now, *row[:4], row[6]))
            self.conn.execute("COMMIT")
            previous = row
        self.conn.execute("BEGIN IMMEDIATE")
        if previous is not None:
            self.conn.execute(complete, (result, now, *previous[:4], previous[6]))
        self.conn.execute("COMMIT")


def filesystem(path: Path) -> str:
    """The type of the filesystem holding ``path`` (from /proc/mounts), or "unknown"."""
    try:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "unknown"
    best = ("", "unknown")
    for fields in mounts:
        point, kind = fields[1], fields[2]
        if str(path.resolve()).startswith(point) and len(point) > len(best[0]):
            best = (point, kind)
    return best[1]
