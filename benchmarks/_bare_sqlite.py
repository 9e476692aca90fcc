"""The SQLite floor of `bench_handle.py`: a bare ``sqlite3`` doing the commits the SQLite
store makes, and nothing else; and what filesystem a path is on.

What it writes is what the store writes: the same table (the store's schema), the same
durability (WAL, ``synchronous=FULL``: each commit is fsynced), the same transactions
(``BEGIN IMMEDIATE`` ... ``COMMIT``), statements of the same meaning (a claim inserts
``claimed`` rows unless the key is taken, ``ON CONFLICT DO NOTHING``; a result updates the row
its owner holds and only if it is not completed yet), and rows of the same size: an owner of
the store's form, a 32-digit fingerprint, each tool's own result JSON. It does it the
straightforward way: one ``executemany`` per statement. What it leaves out is what the store
is measured on: computing fingerprints, owners, the result JSON, retries, locks.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_CLAIM = ("INSERT INTO {table} (dialect, conversation, turn, call_id, state, tool, "
          "fingerprint, owner, claimed_at) VALUES (?, ?, ?, ?, 'claimed', ?, ?, ?, ?) "
          "ON CONFLICT DO NOTHING")
_COMPLETE = ("UPDATE {table} SET state = 'completed', result = ?, completed_at = ? WHERE "
             "dialect = ? AND conversation = ? AND turn = ? AND call_id = ? AND owner = ? AND "
             "state != 'completed'")
_START = ("UPDATE {table} SET state = 'started', started_at = ? WHERE dialect = ? AND "
          "conversation = ? AND turn = ? AND call_id = ? AND owner = ? AND state = 'claimed'")


class BareSqlite:
    """The floor of a durable store: the store's commits per payload, and nothing else.

    ``results``: the JSON text stored for each call, in the payload's order (cycled)."""

    def __init__(self, path: Path, results: Sequence[str]) -> None:
        from toolbridge.store._owners import new_owner
        from toolbridge.store._sqlite_schema import TABLE, prepare

        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        prepare(self.conn, str(path))
        self.claim_sql, self.complete_sql, self.start_sql = (
            sql.format(table=TABLE) for sql in (_CLAIM, _COMPLETE, _START))
        self.owner = new_owner()  # a string of the store's form (the same row size)
        self.results = list(results)
        self._rows: dict[str, list[tuple[Any, ...]]] = {}

    def claim(self, payload: dict[str, Any]) -> None:
        """The claim's commit: the payload's calls inserted as ``claimed``."""
        now = time.time()
        rows = [("openai-agents", payload["id"], action["turn_id"], action["call_id"],
                 action["name"], "0123456789abcdef0123456789abcdef", self.owner, now)
                for action in payload["required_actions"]]
        self._rows[payload["id"]] = rows
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(self.claim_sql, rows)
        self.conn.execute("COMMIT")

    def complete(self, payload: dict[str, Any]) -> None:
        """The results' commit: every claimed call of ``payload`` completed."""
        rows, now, results = self._rows.pop(payload["id"]), time.time(), self.results
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(self.complete_sql, [
            (results[i % len(results)], now, *row[:4], row[6]) for i, row in enumerate(rows)])
        self.conn.execute("COMMIT")

    def two_commits(self, payload: dict[str, Any]) -> None:
        """What the store commits for a payload of new calls: the claim, the results."""
        self.claim(payload)
        self.complete(payload)

    def side_effects(self, payload: dict[str, Any]) -> None:
        """What the store commits for side-effecting tools after the claim: per call its
        "started" mark (carrying the previous call's result), then the last result."""
        rows, now, results = self._rows.pop(payload["id"]), time.time(), self.results
        previous: int | None = None
        for i, row in enumerate(rows):
            self.conn.execute("BEGIN IMMEDIATE")
            if previous is not None:
                self.conn.execute(self.complete_sql, (
                    results[previous % len(results)], now, *rows[previous][:4], row[6]))
            self.conn.execute(self.start_sql, (now, *row[:4], row[6]))
            self.conn.execute("COMMIT")
            previous = i
        self.conn.execute("BEGIN IMMEDIATE")
        if previous is not None:
            self.conn.execute(self.complete_sql, (
                results[previous % len(results)], now, *rows[previous][:4], self.owner))
        self.conn.execute("COMMIT")

    def side_effect_commits(self, payload: dict[str, Any]) -> None:
        """The claim, then `side_effects`: the store's 10 commits for 8 such calls."""
        self.claim(payload)
        self.side_effects(payload)

    def close(self) -> None:
        self.conn.close()


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
