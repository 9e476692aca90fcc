"""The durable result store: completed calls are replayed, side effects never run twice."""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from store_cases import mixed_claim

import toolbridge
import toolbridge.plugin
from toolbridge import (
    Content,
    ResultStore,
    TextPart,
    Toolbox,
    ToolCall,
    ToolResult,
    UsageError,
    open_store,
)
from toolbridge.plugin import hookimpl
from toolbridge.plugin._manager import _PLUGINS
from toolbridge.store import (
    MemoryStore,
    SqliteStore,
    StoreCall,
    StoreCompletion,
    StoredResult,
    StoreKey,
)

WORKER = Path(__file__).parent / "workers" / "store_worker.py"
KEY = StoreKey("echo", "conv-1", "", "call-1")


@pytest.fixture(params=["memory", "sqlite", "sqlite-without-upsert"])
def store(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> ResultStore:
    if request.param == "memory":
        return MemoryStore()
    if request.param == "sqlite-without-upsert":  # SQLite before 3.24: read, then insert
        import toolbridge.store._sqlite

        monkeypatch.setattr(toolbridge.store._sqlite, "_UPSERT", (99,))
    return SqliteStore(tmp_path / "r.db")


def payload(*ids: str, tool: str = "charge") -> dict[str, Any]:
    return {"conversation": "conv-1",
            "calls": [{"id": i, "tool": tool, "args": {"amount": 5}} for i in ids]}


def counting_toolbox(store: Any, side_effects: bool = False, **kw: Any) -> tuple[Toolbox, list]:
    toolbox = Toolbox() if store == "default" else Toolbox(store=store)
    runs: list[int] = []

    @toolbox.tool(side_effects=side_effects, **kw)
    def charge(amount: int) -> str:
        runs.append(amount)
        return f"charged {amount}"

    return toolbox, runs


def test_completed_calls_are_answered_from_the_store(store: ResultStore, echo_dialect: str) -> None:
    toolbox, runs = counting_toolbox(store)
    first = toolbox.handle(echo_dialect, payload("a", "b"))
    again = toolbox.handle(echo_dialect, payload("b", "a", "c"))
    assert runs == [5, 5, 5]  # a, b, then only c
    assert first["answers"][0] == again["answers"][1]
    assert again["answers"][2] == {"id": "c", "ok": True, "value": "charged 5"}


async def test_the_async_path_replays_too(store: ResultStore, echo_dialect: str) -> None:
    toolbox, runs = counting_toolbox(store, side_effects=True)
    first = await toolbox.ahandle(echo_dialect, payload("a"))
    assert await toolbox.ahandle(echo_dialect, payload("a")) == first
    assert runs == [5]


def test_error_results_are_stored_and_replayed(store: ResultStore, echo_dialect: str) -> None:
    toolbox = Toolbox(store=store)
    runs = []

    @toolbox.tool
    def charge(amount: int) -> str:
        runs.append(amount)
        raise toolbridge.ToolError("card declined")

    for _ in range(2):
        body = toolbox.handle(echo_dialect, payload("a"))
        assert body["answers"] == [{"id": "a", "ok": False, "error": "card declined"}]
    assert runs == [5]


def test_a_reused_call_id_with_other_arguments_is_refused(
    store: ResultStore, echo_dialect: str
) -> None:
    toolbox, runs = counting_toolbox(store)
    toolbox.handle(echo_dialect, payload("a"))
    other = {"conversation": "conv-1", "calls": [{"id": "a", "tool": "charge",
                                                  "args": {"amount": 6}}]}
    body = toolbox.handle(echo_dialect, other)
    assert "already used in this turn for a different call" in body["answers"][0]["error"]
    assert runs == [5]


def test_calls_without_conversation_or_turn_are_not_stored(echo_dialect: str) -> None:
    toolbox, runs = counting_toolbox("memory://")
    for _ in range(2):
        toolbox.handle(echo_dialect, {"calls": [{"id": "a", "tool": "charge",
                                                 "args": {"amount": 1}}]})
    assert runs == [1, 1]


def test_store_none_runs_every_delivery(echo_dialect: str) -> None:
    toolbox, runs = counting_toolbox(None)
    toolbox.handle(echo_dialect, payload("a"))
    toolbox.handle(echo_dialect, payload("a"))
    assert runs == [5, 5]


def test_stored_results_round_trip(store: ResultStore) -> None:
    content = Content(parts=(TextPart(text="hi"), toolbridge.ImagePart(url="data:x")))
    for stored in (StoredResult(True, {"a": [1, "é"]}), StoredResult(True, content),
                   StoredResult(False, None, "boom"), StoredResult(True, "text")):
        key = StoreKey("d", "c", "t", repr(stored)[:40])
        claim = store.claim_one(key, "tool", {})
        assert claim.state == "claimed"
        assert store.claim_one(key, "tool", {}).state == "running"
        assert store.complete(key, claim.owner, stored)
        found = store.get(key)
        assert found is not None and found.state == "completed" and found.result == stored
    assert StoredResult.from_json(StoredResult(True, content).to_json()).output == content


def test_one_claim_answers_new_stored_reused_held_and_abandoned_calls(store: ResultStore
                                                                    ) -> None:
    mixed_claim(store)


def test_the_claim_is_atomic_across_threads(store: ResultStore) -> None:
    wins: list[str] = []
    barrier = threading.Barrier(8)

    def contend() -> None:
        barrier.wait()
        claim = store.claim_one(KEY, "tool", {})
        if claim.state == "claimed":
            wins.append(claim.owner)

    threads = [threading.Thread(target=contend) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1


def test_a_released_claim_can_be_claimed_again(store: ResultStore) -> None:
    claim = store.claim_one(KEY, "tool", {})
    store.release(KEY, "someone-else")
    assert store.get(KEY) is not None
    store.release(KEY, claim.owner)
    assert store.get(KEY) is None
    assert store.claim_one(KEY, "tool", {}).state == "claimed"


def test_a_cancelled_call_without_side_effects_runs_again(echo_dialect: str) -> None:
    import asyncio

    store = MemoryStore()
    toolbox = Toolbox(store=store)
    runs = []

    @toolbox.tool
    async def charge(amount: int) -> str:
        runs.append(amount)
        await asyncio.sleep(0 if len(runs) > 1 else 10)
        return "done"

    async def cancel_first() -> None:
        task = asyncio.ensure_future(toolbox.ahandle(echo_dialect, payload("a")))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_first())
    assert len(store) == 0
    assert toolbox.handle(echo_dialect, payload("a"))["answers"][0]["value"] == "done"


def test_an_in_memory_side_effect_warns_once(
    echo_dialect: str, caplog: pytest.LogCaptureFixture
) -> None:
    toolbox, _ = counting_toolbox("default", side_effects=True)  # no store chosen
    with caplog.at_level(logging.WARNING, logger="toolbridge.runtime"):
        toolbox.handle(echo_dialect, payload("a", "b"))
        toolbox.handle(echo_dialect, payload("c"))
    warnings = [r for r in caplog.records if "result store is in memory" in r.getMessage()]
    assert len(warnings) == 1
    for chosen in (SqliteStore(":memory:"), "memory://"):  # durable, or the user's choice
        caplog.clear()
        quiet, _ = counting_toolbox(chosen, side_effects=True)
        with caplog.at_level(logging.WARNING, logger="toolbridge.runtime"):
            quiet.handle(echo_dialect, payload("a"))
        assert not caplog.records


def test_open_store_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(open_store("memory://"), MemoryStore)
    absolute = open_store(f"sqlite:///{tmp_path}/abs.db?timeout=2&synchronous=normal")
    assert isinstance(absolute, SqliteStore) and absolute.path == f"{tmp_path}/abs.db"
    assert absolute.timeout == 2.0 and absolute.synchronous == "NORMAL"
    monkeypatch.chdir(tmp_path)
    relative = open_store("sqlite:///rel.db")
    assert isinstance(relative, SqliteStore) and (tmp_path / "rel.db").exists()
    mine = MemoryStore()
    assert open_store(mine) is mine
    for bad, message in (("redis://x", "unknown store URL"), ("sqlite://", "no file path"),
                         ("sqlite:///x.db?cache=1", "unknown option")):
        with pytest.raises(UsageError, match=message):
            open_store(bad)


def test_sqlite_uses_wal_and_the_documented_table(tmp_path: Path) -> None:
    import sqlite3

    SqliteStore(tmp_path / "r.db").claim_one(KEY, "charge", {})
    conn = sqlite3.connect(tmp_path / "r.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    row = conn.execute("SELECT dialect, conversation, turn, call_id, state, tool "
                       "FROM toolbridge_calls").fetchone()
    assert row == ("echo", "conv-1", "", "call-1", "claimed", "charge")
    assert conn.execute("SELECT version FROM toolbridge_schema WHERE name = 'toolbridge_calls'"
                        ).fetchone() == (2,)


def test_prune_drops_old_completed_calls(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "r.db")
    claim = store.claim_one(KEY, "t", {})
    store.complete(KEY, claim.owner, StoredResult(True, "x"))
    assert store.prune(older_than=60) == 0
    assert store.prune(older_than=-1) == 1
    assert store.get(KEY) is None


def test_memory_store_is_bounded() -> None:
    store = MemoryStore(max_entries=10)
    for i in range(25):
        key = StoreKey("d", "c", "t", str(i))
        store.complete(key, store.claim_one(key, "t", {}).owner, StoredResult(True, i))
    assert len(store) <= 11


@pytest.mark.parametrize("touched", [None, 0, 2])
def test_a_payload_batch_completes_in_one_step_or_member_by_member(touched: int | None) -> None:
    """The memory store keeps a payload's new calls as one record and stores their results
    together; a member touched meanwhile (its "started" mark) is one of its own, and every
    member still ends completed with its own result."""
    store = MemoryStore()
    keys = [StoreKey("d", "c", "t", f"call-{i}") for i in range(3)]
    claims = store.claim([StoreCall(key, "tool", {"n": i}) for i, key in enumerate(keys)])
    owner = claims[0].owner
    assert [c.state for c in claims] == ["claimed"] * 3
    if touched is not None:
        store.write(started=[(keys[touched], owner)])
    applied = store.write(completed=[
        StoreCompletion(key, owner, StoredResult(True, {"n": i}), f'{{"n":{i}}}')
        for i, key in enumerate(keys)])
    assert applied == [True] * 3
    found = store.lookup(keys)
    assert [f.state if f else None for f in found] == ["completed"] * 3
    assert [f.result.output if f and f.result else None for f in found] == [
        {"n": 0}, {"n": 1}, {"n": 2}]
    again = store.claim([StoreCall(keys[1], "tool", {"n": 1}),
                         StoreCall(keys[2], "tool", {"n": 5})])
    assert [c.state for c in again] == ["completed", "reused"]
    assert store.write(completed=[StoreCompletion(keys[0], owner, StoredResult(True, 9))]) == [
        False]  # completed once only
    assert store.prune(-1) == 3


# ---------------------------------------------------------------------------- processes
def run_worker(db: Path, runs: Path, mode: str, side_effects: bool = True,
               calls: str = "call-1:5") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), str(db), str(runs), mode, "1" if side_effects else "0",
         calls], stdout=subprocess.PIPE, text=True)


def answer_of(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    answer: dict[str, Any] = json.loads(out)["answers"][0]
    return answer


def start_and_kill(db: Path, runs: Path, side_effects: bool = True, mode: str = "hang",
                   calls: str = "call-1:5") -> None:
    """Start a worker, wait until its tool has written "ran 5" (not merely created the file),
    then SIGKILL it mid-call."""
    proc = run_worker(db, runs, mode, side_effects, calls)
    try:
        deadline = time.monotonic() + 20
        while not (runs.exists() and runs.read_text().endswith("ran 5\n")):
            assert proc.poll() is None, "the worker exited before its tool ran"
            assert time.monotonic() < deadline, "the worker's tool never ran"
            time.sleep(0.01)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_side_effect_killed_mid_call_is_never_run_again(tmp_path: Path) -> None:
    db, runs = tmp_path / "results.db", tmp_path / "runs.txt"
    start_and_kill(db, runs)
    first = answer_of(run_worker(db, runs, "fast"))
    assert first["ok"] is False
    assert "outcome of charge (call call-1) is unknown" in first["error"]
    assert "not repeated" in first["error"]
    assert answer_of(run_worker(db, runs, "fast")) == first  # the verdict is stored
    assert runs.read_text() == "ran 5\n"


def test_reconciliation_hook_decides(tmp_path: Path, echo_dialect: str) -> None:
    db, runs = tmp_path / "results.db", tmp_path / "runs.txt"
    start_and_kill(db, runs)
    seen: list[tuple[str, float]] = []

    class Ledger:
        @hookimpl
        def toolbridge_reconcile_call(
            self, call: ToolCall, tool: Any, started_at: float
        ) -> ToolResult | None:
            seen.append((call.id, started_at))
            return ToolResult.ok(call, "the ledger shows the charge went through")

    toolbridge.plugin.register_plugin(Ledger(), "ledger")
    toolbox, local_runs = counting_toolbox(f"sqlite:///{db}", side_effects=True)
    body = toolbox.handle(echo_dialect, payload("call-1"))
    assert body["answers"] == [{"id": "call-1", "ok": True,
                                "value": "the ledger shows the charge went through"}]
    assert local_runs == [] and runs.read_text() == "ran 5\n"
    assert seen[0][0] == "call-1" and abs(seen[0][1] - time.time()) < 60
    _PLUGINS.reset()


def test_a_side_effect_claimed_but_never_started_is_run_after_a_kill(tmp_path: Path) -> None:
    """call-2 waits behind call-1 (one at a time): claimed, never started, when the worker
    is killed. Its re-delivery runs it; call-1, which started, is reconciled."""
    db, runs = tmp_path / "results.db", tmp_path / "runs.txt"
    start_and_kill(db, runs, mode="queue", calls="call-1:5,call-2:6")
    conn = sqlite3.connect(db)
    states = dict(conn.execute("SELECT call_id, state FROM toolbridge_calls").fetchall())
    assert states == {"call-1": "started", "call-2": "claimed"}
    second = answer_of(run_worker(db, runs, "fast", calls="call-2:6"))
    assert second == {"id": "call-2", "ok": True, "value": "charged 6"}
    first = answer_of(run_worker(db, runs, "fast", calls="call-1:5"))
    assert "outcome of charge (call call-1) is unknown" in first["error"]
    assert runs.read_text() == "ran 5\nran 6\n"  # each ran once


def test_a_killed_call_without_side_effects_is_run_again(tmp_path: Path) -> None:
    db, runs = tmp_path / "results.db", tmp_path / "runs.txt"
    start_and_kill(db, runs, side_effects=False)
    assert answer_of(run_worker(db, runs, "fast", side_effects=False))["value"] == "charged 5"
    assert runs.read_text() == "ran 5\nran 5\n"


def test_two_workers_never_both_run_one_call(tmp_path: Path) -> None:
    db, runs = tmp_path / "results.db", tmp_path / "runs.txt"
    SqliteStore(db).close()  # create the file first, so both start on the same database
    workers = [run_worker(db, runs, "slow", side_effects=False) for _ in range(3)]
    answers = [answer_of(w) for w in workers]
    assert answers == [{"id": "call-1", "ok": True, "value": "charged 5"}] * 3
    assert runs.read_text() == "ran 5\n"


class _LockedAtFirst:
    """A connection whose first ``busy`` write transactions fail as SQLite's BUSY does when it
    does not wait (the busy timeout covers the usual case; the store retries the rest)."""

    def __init__(self, conn: Any, busy: int) -> None:
        self.conn, self.busy, self.begins = conn, busy, 0

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "BEGIN IMMEDIATE":
            self.begins += 1
            if self.begins <= self.busy:
                import sqlite3

                raise sqlite3.OperationalError("database is locked")
        return self.conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


@pytest.mark.parametrize(("busy", "succeeds"), [(3, True), (10_000, False)])
def test_sqlite_retries_a_busy_write_until_its_timeout(tmp_path: Path, busy: int,
                                                      succeeds: bool) -> None:
    store = SqliteStore(tmp_path / "r.db", timeout=0.3)
    locked = _LockedAtFirst(store._connection(), busy)
    store._connection = lambda: locked  # type: ignore[method-assign, assignment, return-value]
    started = time.monotonic()
    if succeeds:
        assert store.claim_one(KEY, "t", {}).state == "claimed"
        assert locked.begins == 4
    else:
        with pytest.raises(Exception, match="locked"):
            store.claim_one(KEY, "t", {})
        assert locked.begins > 3 and time.monotonic() - started > 0.2  # retried near its timeout
    store.close()


def test_a_toolbox_closes_the_store_it_opened_and_only_that(tmp_path: Path) -> None:
    call = ToolCall(id="c", name="echo", dialect="d", conversation="s")
    with Toolbox(store=f"sqlite:///{tmp_path / 'opened.db'}") as box:
        box.add(toolbridge.ToolDefinition(name="echo"), lambda: "hi")
        assert box.execute([call])[0].output == "hi"
        opened = box.store
        assert isinstance(opened, SqliteStore) and opened._conn is not None
    assert opened._conn is None  # closed on leaving the block
    box.close()  # again: nothing to do
    given = SqliteStore(tmp_path / "given.db")
    other = Toolbox(store=given)
    other.add(toolbridge.ToolDefinition(name="echo"), lambda: "hi")
    other.execute([call])
    other.close()
    assert given._conn is not None  # its owner closes it
    given.close()
