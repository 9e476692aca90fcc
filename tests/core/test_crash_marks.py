"""The "started" mark is made next to the handler: SIGKILLed at random moments, a worker
leaves few calls marked started (a re-delivery would answer "outcome unknown") whose handler
never began.

The worker (workers/crash_worker.py) answers payloads of 16 side-effecting calls in worker
threads and is killed at random moments; each handler notes its entry before its side effect,
as the other crash tests count side effects. Each mark is committed by the thread that then
runs the handler, one commit at a time, so a kill usually leaves at most the one call whose
mark was being committed, where marks gathered into one commit left up to 15 waiting for their
threads to wake (about 3 per kill before). The rate follows the store's commit latency and the
machine's load, so the bound asserted here (a quarter of the kills) guards the design, and
the measured rate is printed (the issue's target, 5 %, is reported with the benchmarks' other
figures, docs/performance.md; ``TOOLBRIDGE_CRASH_KILLS=120`` and ``-s`` for a steadier
rate). SQLite runs here with
``synchronous=normal`` (a WAL commit without its fsync: under SIGKILL, frames written are
kept, so with ``full`` each mark's fsync is part of its window and no code can shorten it);
PostgreSQL needs ``eval "$(scripts/postgres start)"`` (skipped without a server); its floor
under the same kills, a bare psycopg loop without the toolbox, is workers/crash_floor.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

WORKER = Path(__file__).parent / "workers" / "crash_worker.py"
KILLS = int(os.environ.get("TOOLBRIDGE_CRASH_KILLS", "30"))
"""Kills per store (``TOOLBRIDGE_CRASH_KILLS``: more, for a stable measured rate)."""
BOUND = 0.25
"""Calls marked started whose handler never began, per kill, at most."""
EFFECT_SECONDS = "0.1"
KILL_WITHIN_SECONDS = "0.3"


def killed(url: str, entries: Path, seed: str) -> int:
    out = subprocess.run([sys.executable, str(WORKER), url, str(entries), str(KILLS), seed,
                          EFFECT_SECONDS, KILL_WITHIN_SECONDS],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    kills: int = json.loads(out)["kills"]
    return kills


def never_began(started: list[str], entries: Path) -> list[str]:
    """The calls marked started whose handler never noted its entry."""
    entered = set(entries.read_text().split())
    return [call_id for call_id in started if call_id not in entered]


def test_sqlite_a_kill_rarely_falls_between_a_mark_and_its_handler(tmp_path: Path) -> None:
    import sqlite3

    db, entries = tmp_path / "results.db", tmp_path / "entries.txt"
    kills = killed(f"sqlite:///{db}?synchronous=normal", entries, "sqlite")
    with sqlite3.connect(db) as conn:
        started = [row[0] for row in conn.execute(
            "SELECT call_id FROM toolbridge_calls WHERE state = 'started'")]
    assert started, "no kill caught a handler running: the test measured nothing"
    unknown = never_began(started, entries)
    print(f"SQLite: {len(unknown)} call(s) marked started whose handler never began, "
          f"{kills} kills")
    assert len(unknown) <= BOUND * kills, (len(unknown), kills, unknown)


def test_postgres_a_kill_rarely_falls_between_a_mark_and_its_handler(tmp_path: Path) -> None:
    url = os.environ.get("TOOLBRIDGE_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("TOOLBRIDGE_TEST_POSTGRES_URL is unset in CI")
        pytest.skip('no PostgreSQL server: run eval "$(scripts/postgres start)" first')
    import psycopg

    table = f"tb_{uuid.uuid4().hex[:16]}"
    entries = tmp_path / "entries.txt"
    try:
        kills = killed(f"{url}{'&' if '?' in url else '?'}table={table}", entries, "postgres")
        with psycopg.connect(url, autocommit=True) as conn:
            started = [row[0] for row in conn.execute(
                f'SELECT call_id FROM "{table}" WHERE state = %s', ("started",))]
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP TABLE IF EXISTS "{table}"')
    assert started, "no kill caught a handler running: the test measured nothing"
    unknown = never_began(started, entries)
    print(f"PostgreSQL: {len(unknown)} call(s) marked started whose handler never began, "
          f"{kills} kills")
    assert len(unknown) <= BOUND * kills, (len(unknown), kills, unknown)
