"""SQLite under multi-process load: no "database is locked", no lost result, no double run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from toolbridge.store import SqliteStore

WORKER = Path(__file__).parent / "workers" / "load_worker.py"


def hammer(tmp_path: Path, processes: int, calls: int) -> None:
    """``processes`` workers answer the same ``calls`` side-effecting calls on one file."""
    db, runs = tmp_path / "results.db", tmp_path / "runs.txt"
    SqliteStore(db).close()
    workers = [subprocess.Popen([sys.executable, str(WORKER), str(db), str(runs), str(calls),
                                 str(seed)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for seed in range(processes)]
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err[-2000:]
        assert "Traceback" not in err, err[-2000:]  # nothing logged a store failure
        reports.append(json.loads(out))
    bad = [answer for report in reports for answer in report["bad"]]
    assert bad == [], bad[:5]  # no error result, no "outcome unknown"
    ran = Counter(runs.read_text().split())
    assert sorted(ran) == sorted(f"call-{i}" for i in range(calls))  # every call ran...
    assert set(ran.values()) == {1}  # ...exactly once


def test_four_processes_share_one_sqlite_file(tmp_path: Path) -> None:
    hammer(tmp_path, processes=4, calls=150)


@pytest.mark.slow
def test_many_processes_share_one_sqlite_file(tmp_path: Path) -> None:
    scale = int(os.environ.get("TOOLBRIDGE_SLOW_SCALE", "1"))
    hammer(tmp_path, processes=4 + 4 * scale, calls=300 * scale)
