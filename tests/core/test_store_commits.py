"""Durable commits per payload, counted (never timed) on a real SQLite file.

A payload of new calls without side effects costs two commits (claim, record). A side effect
needs its "started" mark committed before its handler runs, by the thread that runs it, and
its result as soon as it returns; results wanted at the same time share a commit.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge import Toolbox, ToolCall
from toolbridge.plugin import CallRecord
from toolbridge.runtime import InlineExecutor
from toolbridge.runtime._journal import Journal
from toolbridge.runtime._plan import plan
from toolbridge.store import SqliteStore, StoreCompletion, StoreKey


class Commits:
    """Counts the COMMITs the store's connection sends (SQLite's trace callback)."""

    def __init__(self, store: SqliteStore) -> None:
        self.count = 0
        store._connection().set_trace_callback(self._seen)

    def _seen(self, statement: str) -> None:
        if statement.strip().upper() == "COMMIT":
            self.count += 1


def calls(count: int, tool: str, turn: str = "t1") -> list[ToolCall]:
    return [ToolCall(id=f"c{i}", name=tool, arguments={"n": i}, dialect="d", conversation="s",
                     turn=turn) for i in range(count)]


def toolbox(tmp_path: Path, **options: Any) -> tuple[Toolbox, SqliteStore]:
    store = SqliteStore(tmp_path / "results.db")
    box = Toolbox(store=store, **options)

    @box.tool
    def plain(n: int) -> int:
        return n

    @box.tool(side_effects=True)
    def effect(n: int) -> int:
        return n

    @box.tool(inline=True, side_effects=True)
    def quick_effect(n: int) -> int:
        return n

    return box, store


@pytest.mark.parametrize("form", ["execute", "aexecute"])
def test_eight_new_calls_without_side_effects_cost_two_commits(tmp_path: Path,
                                                              form: str) -> None:
    box, store = toolbox(tmp_path)
    commits = Commits(store)
    if form == "execute":
        results = box.execute(calls(8, "plain"))
    else:
        import asyncio

        results = asyncio.run(box.aexecute(calls(8, "plain")))
    assert [r.output for r in results] == list(range(8))
    assert commits.count == 2  # the claim, the results
    box.execute(calls(8, "plain"))  # a replay: the claim reads, nothing is written
    assert commits.count == 3


def test_side_effects_run_one_after_another_share_commits(tmp_path: Path) -> None:
    """In one thread, each result goes with the next call's mark: claim + 8 marks + 1."""
    box, store = toolbox(tmp_path, executor=InlineExecutor())
    commits = Commits(store)
    assert [r.output for r in box.execute(calls(8, "effect"))] == list(range(8))
    assert commits.count == 10
    inline, _ = toolbox(tmp_path)  # inline tools in the default executor: the same
    other = Commits(inline.store)  # type: ignore[arg-type]
    assert [r.output for r in inline.execute(calls(8, "quick_effect", "t2"))] == list(range(8))
    assert other.count == 10


def test_a_side_effect_is_marked_started_before_its_handler_runs(tmp_path: Path) -> None:
    box, _store = toolbox(tmp_path)
    seen: list[tuple[str, str]] = []
    reader = sqlite3.connect(tmp_path / "results.db")

    @box.tool(side_effects=True)
    def look(n: int) -> str:
        row = reader.execute("SELECT state, call_id FROM toolbridge_calls WHERE call_id = ?",
                             (f"c{n}",)).fetchone()
        seen.append(row)
        return "ok"

    box.execute([ToolCall(id="c0", name="look", arguments={"n": 0}, dialect="d",
                          conversation="s")])
    assert seen == [("started", "c0")]  # committed: another connection sees it


def test_a_side_effects_result_is_stored_before_the_slowest_call_ends(tmp_path: Path) -> None:
    box, _store = toolbox(tmp_path)
    release = threading.Event()
    reader = sqlite3.connect(tmp_path / "results.db", check_same_thread=False)
    stored_meanwhile: list[Any] = []

    @box.tool(side_effects=True, timeout=30)
    def slow(n: int) -> int:
        release.wait(10)
        return n

    @box.tool(side_effects=True, timeout=30)
    def fast(n: int) -> int:
        return n

    def watch() -> None:
        for _ in range(500):
            row = reader.execute("SELECT state FROM toolbridge_calls WHERE call_id = 'c1'"
                                 ).fetchone()
            if row and row[0] == "completed":
                stored_meanwhile.append(row)
                break
            threading.Event().wait(0.01)
        release.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    payload = [ToolCall(id="c0", name="slow", arguments={"n": 0}, dialect="d",
                        conversation="s"),
               ToolCall(id="c1", name="fast", arguments={"n": 1}, dialect="d",
                        conversation="s")]
    assert [r.output for r in box.execute(payload)] == [0, 1]
    watcher.join()
    assert stored_meanwhile == [("completed",)]  # while "slow" still ran


class _HeldStore(SqliteStore):
    """A store whose first write (or ``held``-th) waits until released: the writes that come
    meanwhile."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.writes: list[int] = []
        self.writers: list[tuple[str, int]] = []  # (call id marked, writing thread)
        self.held = 1

    def write(self, *, started: Sequence[tuple[StoreKey, str]] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[tuple[StoreKey, str]] = ()) -> list[bool]:
        self.writes.append(len(started) + len(completed) + len(released))
        self.writers.extend((key.call_id, threading.get_ident()) for key, _ in started)
        if len(self.writes) == self.held:
            self.entered.set()
            self.gate.wait(10)
        return super().write(started=started, completed=completed, released=released)


def _claimed_effects(store: _HeldStore, count: int) -> tuple[Journal, list[Any], list[Any]]:
    """``count`` claimed calls of a side-effecting tool on ``store``: the journal, the planned
    calls and those to run."""
    box = Toolbox(store=store)

    @box.tool(side_effects=True)
    def effect(n: int) -> int:
        return n

    journal = Journal(store, 16)
    payload = box._pipeline._payload({})
    payload.journal = journal
    pcs = plan(payload, box._tools, [CallRecord.of(c) for c in calls(count, "effect")], {},
               None)
    run, _, _ = journal.claimed(pcs, store.claim(journal.requests(pcs)))
    return journal, pcs, run


def test_each_mark_is_committed_by_the_thread_that_runs_its_handler(tmp_path: Path) -> None:
    """Marks wanted while a commit is written are not gathered into one commit that their
    threads would then have to wake from: each thread writes its own mark's commit, and
    returns from it straight to its handler."""
    store = _HeldStore(tmp_path / "results.db")
    journal, pcs, run = _claimed_effects(store, 7)
    started: dict[str, tuple[bool, int]] = {}

    def start(pc: Any) -> None:
        started[pc.call.id] = (journal.start(pc), threading.get_ident())

    first = threading.Thread(target=start, args=(run[0],))
    first.start()
    assert store.entered.wait(10)
    others = [threading.Thread(target=start, args=(pc,)) for pc in run[1:]]
    for thread in others:
        thread.start()
    store.gate.set()
    for thread in [first, *others]:
        thread.join()
    assert sorted(started) == [pc.call.id for pc in run]
    assert all(ok for ok, _ in started.values())
    assert store.writes == [1] * 7  # one commit per mark, none gathered into another's
    assert sorted(store.writers) == sorted((cid, ident) for cid, (_, ident) in started.items())
    journal.finish(pcs)
    toolbridge.store.end_owner(run[0].owner or "")


def test_results_waiting_meanwhile_ride_with_the_next_mark(tmp_path: Path) -> None:
    store = _HeldStore(tmp_path / "results.db")
    store.gate.set()
    journal, pcs, run = _claimed_effects(store, 2)
    assert journal.start(run[0])
    run[0].settle(toolbridge.ToolResult.ok(run[0].call, 0))
    journal.completed(run[0], linger=True)  # waits for the next write
    assert journal.start(run[1])
    assert store.writes == [1, 2]  # the second mark carried the first result
    assert run[0].recorded
    journal.finish(pcs)
    toolbridge.store.end_owner(run[0].owner or "")


def test_a_result_wanted_while_a_mark_waits_rides_with_that_mark(tmp_path: Path) -> None:
    """A result that returns while one mark is written and another waits for its turn is
    not a commit of its own: the waiting mark carries it, and its thread does not wait."""
    store = _HeldStore(tmp_path / "results.db")
    journal, pcs, run = _claimed_effects(store, 3)
    store.held = 2
    assert journal.start(run[0])  # the first write; the second will be held
    held = threading.Thread(target=journal.start, args=(run[1],))
    held.start()
    assert store.entered.wait(10)
    waiting = threading.Thread(target=journal.start, args=(run[2],))
    waiting.start()
    for _ in range(1000):  # until the second mark waits for its turn
        with journal._lock:
            if journal._queued:
                break
        threading.Event().wait(0.001)
    run[0].settle(toolbridge.ToolResult.ok(run[0].call, 0))
    journal.completed(run[0], linger=False)  # returns at once: the waiting mark has it
    assert store.writes == [1, 1]
    store.gate.set()
    held.join()
    waiting.join()
    assert store.writes == [1, 1, 2]  # the waiting mark carried the result
    assert run[0].recorded
    journal.finish(pcs)
    toolbridge.store.end_owner(run[0].owner or "")
