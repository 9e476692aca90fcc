"""The SQLite table's schema version: recorded, migrated in place from 0, a newer one refused."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from toolbridge import UsageError
from toolbridge.store import SqliteStore, StoredResult, StoreKey

VERSION_0 = """
CREATE TABLE toolbridge_calls (
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
DONE = StoreKey("echo", "conv-1", "", "done")
RUNNING = StoreKey("echo", "conv-1", "", "running")


def version_0_file(path: Path) -> None:
    """A file as toolbridge 0.1 left it: one completed call, one started by a dead worker."""
    conn = sqlite3.connect(path)
    conn.execute(VERSION_0)
    now = time.time()
    conn.execute("INSERT INTO toolbridge_calls VALUES (?, ?, ?, ?, 'completed', 'charge', "
                 "'rawdigest', 'nohost:1:tok:0', ?, ?, ?)",
                 (*DONE, now, now, StoredResult(True, "charged 5").to_json()))
    conn.execute("INSERT INTO toolbridge_calls VALUES (?, ?, ?, ?, 'started', 'charge', "
                 "'rawdigest', 'gone:1:tok:0', ?, NULL, NULL)", (*RUNNING, now))
    conn.commit()
    conn.close()


def test_a_new_file_records_the_current_version(tmp_path: Path) -> None:
    SqliteStore(tmp_path / "r.db").close()
    conn = sqlite3.connect(tmp_path / "r.db")
    assert conn.execute("SELECT name, version FROM toolbridge_schema").fetchall() == [
        ("toolbridge_calls", 2)]


def test_a_version_0_table_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    version_0_file(path)
    store = SqliteStore(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM toolbridge_schema").fetchone() == (2,)
    rows = conn.execute("SELECT call_id, state, fingerprint, claimed_at > 0 FROM "
                        "toolbridge_calls ORDER BY call_id").fetchall()
    assert rows == [("done", "completed", None, 1), ("running", "started", None, 1)]
    replay = store.claim_one(DONE, "charge", {"amount": 5})
    assert replay.state == "completed" and replay.result == StoredResult(True, "charged 5")
    held = store.get(RUNNING)  # another machine's worker, as far as this one can tell
    assert held is not None and held.state == "running" and held.started_at > 0
    key = StoreKey("echo", "conv-1", "", "new")
    assert store.claim_one(key, "charge", {"amount": 1}).state == "claimed"  # new states
    store.close()
    SqliteStore(path).close()  # opening again changes nothing
    assert conn.execute("SELECT count(*) FROM toolbridge_calls").fetchone() == (3,)


VERSION_1 = """
CREATE TABLE toolbridge_calls (
    dialect      TEXT NOT NULL,
    conversation TEXT NOT NULL,
    turn         TEXT NOT NULL,
    call_id      TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('claimed', 'started', 'completed')),
    tool         TEXT NOT NULL,
    fingerprint  TEXT,
    owner        TEXT NOT NULL,
    claimed_at   REAL NOT NULL,
    started_at   REAL,
    completed_at REAL,
    result       TEXT,
    PRIMARY KEY (dialect, conversation, turn, call_id)
) WITHOUT ROWID
"""


def test_a_version_1_table_gains_the_awaiting_state_in_place(tmp_path: Path) -> None:
    from toolbridge.store import ApprovalRequest, StoreCall

    path = tmp_path / "r.db"
    conn = sqlite3.connect(path)
    conn.execute(VERSION_1)
    conn.execute("CREATE TABLE toolbridge_schema (name TEXT PRIMARY KEY, version INTEGER)")
    conn.execute("INSERT INTO toolbridge_schema VALUES ('toolbridge_calls', 1)")
    now = time.time()
    conn.execute("INSERT INTO toolbridge_calls VALUES (?, ?, ?, ?, 'completed', 'charge', "
                 "NULL, 'nohost:1:tok:0', ?, ?, ?, ?)",
                 (*DONE, now, now, now, StoredResult(True, "charged 5").to_json()))
    conn.commit()
    store = SqliteStore(path)
    assert conn.execute("SELECT version FROM toolbridge_schema").fetchone() == (2,)
    replay = store.claim_one(DONE, "charge", {"amount": 5})
    assert replay.state == "completed" and replay.result == StoredResult(True, "charged 5")
    key = StoreKey("echo", "conv-1", "", "new")
    request = ApprovalRequest.of(key, "charge", {"amount": 1})
    [answer] = store.claim([StoreCall(key, "charge", {"amount": 1}, request.to_json())])
    assert answer.state == "awaiting"  # the new state, allowed by the rebuilt table
    store.close()


def test_a_newer_version_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE toolbridge_schema SET version = 7")
    conn.commit()
    with pytest.raises(UsageError, match=r"schema version 7, written by a newer toolbridge.*"
                                         r"Upgrade toolbridge"):
        SqliteStore(path)


def test_a_table_no_toolbridge_wrote_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE toolbridge_calls (id TEXT)")
    conn.commit()
    with pytest.raises(UsageError, match="which no toolbridge wrote; rename or drop it"):
        SqliteStore(path)
