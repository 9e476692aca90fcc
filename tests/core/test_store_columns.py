"""A payload's common path through every store: `claim_new` and `complete_claimed`.

SQLite inserts the new calls in one statement and updates their results in one (in chunks);
SQLite before 3.24 (no upsert) and before 3.33 (no ``UPDATE ... FROM``) takes the per-row
statements: every variant must give the answers `claim` and `write` give.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import toolbridge.store._sqlite
from toolbridge.store import (
    MemoryStore,
    ResultStore,
    SqliteStore,
    StoredResult,
    StoreKey,
    end_owner,
)
from toolbridge.store._sqlite_batch import CHUNK


@pytest.fixture(params=["memory", "sqlite", "sqlite-3.24", "sqlite-3.23"])
def store(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> ResultStore:
    if request.param == "memory":
        return MemoryStore()
    if request.param == "sqlite-3.24":  # upsert, no UPDATE ... FROM
        monkeypatch.setattr(toolbridge.store._sqlite, "multi_row", lambda: (True, False))
    if request.param == "sqlite-3.23":  # neither: read, then insert; a statement per row
        monkeypatch.setattr(toolbridge.store._sqlite, "multi_row", lambda: (False, False))
        monkeypatch.setattr(toolbridge.store._sqlite, "_UPSERT", (99,))
    return SqliteStore(tmp_path / "r.db")


@dataclass
class Result:
    """A runtime record's result fields (`ResultFields`)."""

    success: bool | None
    output: Any
    error: str | None = None
    text: str | None = None


def keys(count: int, turn: str = "t") -> list[StoreKey]:
    return [StoreKey("d", "c", turn, f"k{i}") for i in range(count)]


def test_new_calls_are_claimed_and_completed_as_columns(store: ResultStore) -> None:
    batch = keys(8)
    answers = store.claim_new(batch, ["tool"] * 8, [{"n": i} for i in range(8)])
    assert [a.state for a in answers] == ["claimed"] * 8
    owner = answers[0].owner
    assert {a.owner for a in answers} == {owner}
    assert all(a.started_at == 0.0 and a.result is None for a in answers)
    results = [Result(True, {"n": i}, text=f'{{"n":{i}}}') for i in range(7)]
    results.append(Result(False, None, "boom"))
    assert store.complete_claimed(owner, batch, results) == [True] * 8
    found = store.lookup(batch)
    assert [f.result if f else None for f in found] == [
        *(StoredResult(True, {"n": i}) for i in range(7)), StoredResult(False, None, "boom")]
    again = store.claim_new(batch, ["tool"] * 8, [{"n": i} for i in range(8)])
    assert [a.state for a in again] == ["completed"] * 8  # a replay
    end_owner(owner)


def test_a_claim_of_columns_answers_stored_calls_as_claim_does(store: ResultStore) -> None:
    """Stored keys among new ones: completed, reused, running, taken over; the new ones are
    claimed for one owner, in the payload's order."""
    batch = keys(6)
    done = store.claim_one(batch[0], "tool", {"a": 1})
    assert store.complete(batch[0], done.owner, StoredResult(True, "ok"))
    store.claim_one(batch[1], "tool", {"n": 1})  # another call under the same key
    held = store.claim_one(batch[2], "tool", {})
    gone = store.claim_one(batch[3], "tool", {})
    store.start(batch[3], gone.owner)
    end_owner(gone.owner)
    answers = store.claim_new(batch, ["tool"] * 6, [{"a": 1}, {"n": 2}, {}, {}, {}, {"z": 0}])
    assert [a.state for a in answers] == [
        "completed", "reused", "running", "claimed", "claimed", "claimed"]
    assert answers[0].result == StoredResult(True, "ok")
    assert answers[2].owner == held.owner
    owner = answers[4].owner
    assert answers[3].owner == answers[5].owner == owner != gone.owner
    assert answers[3].started_at > 0 and answers[4].started_at == 0.0
    assert store.claim_one(batch[4], "tool", {}).state == "running"  # stored for `owner`
    for claimed in (held.owner, owner):
        end_owner(claimed)


def test_results_of_calls_the_owner_no_longer_holds_are_refused(store: ResultStore) -> None:
    batch = keys(4)
    owner = store.claim_new(batch, ["tool"] * 4, [{}] * 4)[0].owner
    store.release(batch[1], owner)  # then claimed and completed by another worker
    other = store.claim_one(batch[1], "tool", {})
    assert store.complete(batch[1], other.owner, StoredResult(True, "first"))
    store.release(batch[2], owner)  # forgotten: no row to complete
    applied = store.complete_claimed(owner, batch, [Result(True, i, text=str(i))
                                                    for i in range(4)])
    assert applied == [True, False, False, True]
    found = store.lookup(batch)
    assert [f.result.output if f and f.result else None for f in found] == [0, "first", None, 3]
    end_owner(owner)
    end_owner(other.owner)


def test_a_batch_larger_than_one_statement(store: ResultStore) -> None:
    """More calls than one statement takes (`CHUNK`), over two turns: every one claimed,
    completed and stored."""
    count = CHUNK * 2 + 7
    batch = keys(count // 2, "t1") + keys(count - count // 2, "t2")
    answers = store.claim_new(batch, ["tool"] * count, [{"n": i} for i in range(count)])
    assert [a.state for a in answers] == ["claimed"] * count
    owner = answers[0].owner
    assert store.complete_claimed(owner, batch, [Result(True, i, text=str(i))
                                                 for i in range(count)]) == [True] * count
    found = store.lookup(batch)
    assert [f.result.output if f and f.result else None for f in found] == list(range(count))
    end_owner(owner)


def test_sqlite_rows_hold_the_claim_and_the_result(tmp_path: Path) -> None:
    """What the one-statement claim and results write: the store's columns, as the per-row
    statements write them (read back over a connection of its own)."""
    store = SqliteStore(tmp_path / "r.db")
    batch = keys(2)
    sent: list[str] = []
    store._connection().set_trace_callback(sent.append)
    owner = store.claim_new(batch, ["tool", "other"], [{"b": 1, "a": 2}, {}])[0].owner
    assert len(sent) == 3 and sent[1].startswith("INSERT")  # BEGIN, one INSERT, COMMIT
    with sqlite3.connect(tmp_path / "r.db") as reader:
        claimed = reader.execute("SELECT call_id, state, tool, fingerprint, owner, approval "
                                 "FROM toolbridge_calls ORDER BY call_id").fetchall()
    from toolbridge.store._base import digest, fingerprint

    assert claimed == [("k0", "claimed", "tool", digest(fingerprint("tool", {"a": 2, "b": 1})),
                        owner, None),
                       ("k1", "claimed", "other", digest(fingerprint("other", {})), owner, None)]
    store.complete_claimed(owner, batch, [Result(True, {"x": 1}, text='{"x":1}'),
                                          Result(False, None, "no")])
    assert len(sent) == 6 and sent[4].startswith("UPDATE")  # BEGIN, one UPDATE, COMMIT
    with sqlite3.connect(tmp_path / "r.db") as reader:
        done = reader.execute("SELECT state, result, completed_at > claimed_at FROM "
                              "toolbridge_calls ORDER BY call_id").fetchall()
    assert done == [("completed", '{"success":true,"output":{"x":1}}', 1),
                    ("completed", '{"success":false,"output":null,"error":"no"}', 1)]
    end_owner(owner)
    store.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_opens_its_own_connection(tmp_path: Path) -> None:
    """The connection is never shared over a fork (the fork hook gives the child its pid)."""
    store = SqliteStore(tmp_path / "r.db")
    parent = store._connection()
    batch = keys(2)
    claim = store.claim_new(batch[:1], ["t"], [{}])[0]
    pid = os.fork()
    if pid == 0:  # the child: sees the parent's call running, works on a connection of its own
        code = 1
        try:
            mine = store.claim_new(batch[1:], ["t"], [{}])[0]
            ok = (store._connection() is not parent
                  and store.get(batch[0]).state == "running"  # type: ignore[union-attr]
                  and store.complete_claimed(mine.owner, batch[1:], [Result(True, "child")])
                  == [True])
            code = 0 if ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store._connection() is parent
    assert store.complete_claimed(claim.owner, batch[:1], [Result(True, "parent")]) == [True]
    found = store.lookup(batch)
    assert [f.result.output if f and f.result else None for f in found] == ["parent", "child"]
    end_owner(claim.owner)
    store.close()
