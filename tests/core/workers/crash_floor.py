"""The floor of the "started" mark's crash test on PostgreSQL: a bare psycopg loop that only
commits a mark and notes the handler's entry, SIGKILLed the way crash_worker.py is.

Usage: crash_floor.py URL ENTRIES KILLS SEED [EFFECT_SECONDS [KILL_WITHIN_SECONDS]].

Each round forks a child that, payload after payload, inserts 16 calls as claimed (one
transaction), then for each call commits its mark (``BEGIN``, ``UPDATE``, ``COMMIT`` in one
libpq call, as `PostgresStore` does) and appends the call id to ENTRIES (the handler's
entry), then pauses EFFECT_SECONDS (default 0.1; the side effects, run at once) and marks the
16 completed. The child is killed at a uniformly random moment within KILL_WITHIN_SECONDS
(default 0.3) of its first entry. No toolbox, no threads: what is left is the commit's round
trip on this machine. Prints ``{"kills", "started", "unknown"}`` as JSON (unknown: marked
started, entry never noted), on a table of its own, dropped at the end.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from _kills import kill_rounds

CALLS = 16


def serve(url: str, table: str, entries: int, round_: int, effect: float) -> None:
    """The child: mark, note the entry, mark by mark, until killed."""
    conn = psycopg.connect(url, autocommit=True)
    pgconn = conn.pgconn
    for number in range(10**9):
        ids = [f"r{round_}p{number}c{i}" for i in range(CALLS)]
        with conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(f"INSERT INTO {table} (call_id, state) VALUES (%s, 'claimed')",
                               [(call_id,) for call_id in ids])
        for call_id in ids:
            conn.execute("BEGIN")
            conn.execute(f"UPDATE {table} SET state = 'started' WHERE call_id = %s AND "
                         "state = 'claimed'", (call_id,))
            pgconn.exec_(b"COMMIT")
            os.write(entries, f"{call_id}\n".encode())
        time.sleep(effect)
        conn.execute(f"UPDATE {table} SET state = 'completed' WHERE call_id = ANY(%s)", (ids,))


def main() -> None:
    url, entries_path, kills, seed = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    effect = float(sys.argv[5]) if len(sys.argv) > 5 else 0.1
    within = float(sys.argv[6]) if len(sys.argv) > 6 else 0.3
    table = f"tb_floor_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (call_id TEXT PRIMARY KEY, state TEXT NOT NULL)")
    try:
        kill_rounds(kills, entries_path, seed, within,
                    lambda entries, round_: serve(url, table, entries, round_, effect))
        with psycopg.connect(url, autocommit=True) as conn:
            started = [row[0] for row in conn.execute(
                f"SELECT call_id FROM {table} WHERE state = 'started'")]
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    entered = set(entries_path.read_text().split())
    report: dict[str, Any] = {"kills": kills, "started": len(started),
                              "unknown": sum(call_id not in entered for call_id in started)}
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
