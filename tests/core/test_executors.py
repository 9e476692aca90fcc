"""Executors: where a payload's calls run; no event loop for sync tools; one loop per thread."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Generator, Sequence
from typing import Any

import pytest
from meeting import AsyncMeeting

import toolbridge.plugin
from toolbridge import Toolbox, ToolCall, ToolDefinition, ToolError, ToolResult
from toolbridge.plugin import hookimpl
from toolbridge.runtime import (
    Executor,
    InlineExecutor,
    LoopExecutor,
    PlannedCall,
    ThreadExecutor,
)


def calls(name: str, count: int = 1, **arguments: Any) -> list[ToolCall]:
    return [ToolCall(id=str(i), name=name, arguments=arguments, dialect="d", conversation="s")
            for i in range(count)]


def where_toolbox(**options: Any) -> tuple[Toolbox, list[str]]:
    box, threads = Toolbox(**options), []

    @box.tool
    def where() -> str:
        threads.append(threading.current_thread().name)
        return "here"

    @box.tool(timeout=5)
    def timed() -> str:
        threads.append(threading.current_thread().name)
        return "timed"

    @box.tool
    async def loop_id() -> int:
        await asyncio.sleep(0)
        return id(asyncio.get_running_loop())

    return box, threads


def test_sync_tools_never_start_an_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    box, threads = where_toolbox()

    def no_loop(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an event loop was started")

    for name in ("run", "new_event_loop", "Runner"):
        if hasattr(asyncio, name):
            monkeypatch.setattr(asyncio, name, no_loop)
    results = box.execute([*calls("where", 8), ToolCall(id="t", name="timed", dialect="d")])
    assert [r.output for r in results] == ["here"] * 8 + ["timed"]
    assert threading.current_thread().name in threads  # the caller ran some itself
    assert any(name.startswith("toolbridge-tool") for name in threads)  # "timed", at least


def test_a_single_untimed_call_runs_in_the_calling_thread() -> None:
    box, threads = where_toolbox()
    box.execute(calls("where"))
    box.execute([ToolCall(id="t", name="timed", dialect="d")])  # its timeout needs a worker
    assert threads[0] == threading.current_thread().name
    assert threads[1].startswith("toolbridge-tool")


def test_async_tools_from_handle_reuse_one_loop_per_thread(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    box, _ = where_toolbox(store=None)
    monkeypatch.setattr(asyncio, "run", lambda *a, **k: pytest.fail("asyncio.run was called"))
    first = box.execute(calls("loop_id", 3))
    again = box.execute(calls("loop_id"))
    assert len({r.output for r in first + again}) == 1  # one loop, reused
    elsewhere: list[Any] = []
    thread = threading.Thread(target=lambda: elsewhere.extend(box.execute(calls("loop_id"))))
    thread.start()
    thread.join()
    assert elsewhere[0].output != first[0].output  # another thread, its own loop


def test_a_handler_that_suspends_keeps_its_task() -> None:
    """Calls start in the caller's task; one that suspends stays in one task throughout, so
    `asyncio.timeout` and task-bound cancel scopes work in handlers."""
    box = Toolbox(store=None)
    seen: list[tuple[Any, Any]] = []

    meeting = AsyncMeeting(8)

    @box.tool
    async def nap(seconds: float) -> str:
        before = asyncio.current_task()
        await asyncio.sleep(seconds)
        await meeting.arrive()  # concurrent: all 8 inside at once
        if sys.version_info >= (3, 11):
            async with asyncio.timeout(5):
                await asyncio.sleep(0)
        seen.append((before, asyncio.current_task()))
        return "rested"

    results = asyncio.run(box.aexecute(calls("nap", 8, seconds=0.01)))
    assert [r.output for r in results] == ["rested"] * 8
    assert all(before is after and before is not None for before, after in seen)


@pytest.mark.parametrize("concurrency", [16, 2])  # all at once; more calls than slots
async def test_bare_handlers_and_journaled_ones_run_in_order_in_the_callers_task(
        concurrency: int) -> None:
    """Untimed async handlers are awaited by `aexecute`'s steps in the caller's task (a
    return, a `ToolError`, a failure each its own result), beside calls that take
    `aexecute`'s other path (a side effect's "started" mark first, a sync inline one); the
    first that suspends keeps that task, the rest go on in order, side effects recorded."""
    box = Toolbox(store="memory://", max_concurrency=concurrency)
    tasks: dict[int, list[Any]] = {}
    ran: list[int] = []

    @box.tool
    async def quick(n: int) -> int:
        tasks.setdefault(n, []).append(asyncio.current_task())
        ran.append(n)
        if n == 2:
            raise ToolError("two is refused")
        if n == 3:
            raise ValueError("three broke")
        if n == 4:
            await asyncio.sleep(0)  # the first to suspend: it stays in the caller's task
            tasks[n].append(asyncio.current_task())
        return n

    @box.tool(side_effects=True)
    async def effect(n: int) -> int:
        ran.append(n)
        return n * 10

    @box.tool(inline=True)
    def beside(n: int) -> int:
        ran.append(n)
        return n * 100

    names = ["quick", "effect", "quick", "quick", "quick", "beside", "quick"]
    payload = [ToolCall(id=f"c{i}", name=name, arguments={"n": i}, dialect="d",
                        conversation="s") for i, name in enumerate(names)]
    results = await box.aexecute(payload)
    assert [(r.success, r.output) for r in results] == [
        (True, 0), (True, 10), (False, None), (False, None), (True, 4), (True, 500), (True, 6)]
    assert results[2].error == "two is refused"
    assert results[3].error == "ValueError: three broke"
    assert ran == [0, 1, 2, 3, 4, 5, 6]  # started in order
    me = asyncio.current_task()
    assert [tasks[n] for n in (0, 2, 3, 4)] == [[me], [me], [me], [me, me]]
    assert len(tasks[6]) == 1 and tasks[6][0] is not None
    again = await box.aexecute(payload)  # the side effect's result was stored: a replay
    assert [r.output for r in again] == [r.output for r in results] and ran.count(1) == 1


def test_the_inline_executor_runs_everything_here_in_order() -> None:
    box, threads = where_toolbox(executor=InlineExecutor(), store=None)
    order: list[str] = []

    @box.tool
    async def note(text: str) -> str:
        order.append(text)
        return text

    payload = [ToolCall(id=str(i), name="note", arguments={"text": t}, dialect="d")
               for i, t in enumerate("abc")] + calls("timed")
    assert [r.output for r in box.execute(payload)] == ["a", "b", "c", "timed"]
    assert order == ["a", "b", "c"] and threads == [threading.current_thread().name]
    assert [r.output for r in asyncio.run(box.aexecute(payload))] == ["a", "b", "c", "timed"]


class Recording(Executor):
    """An executor of one's own: here, the inline one, noting what it was given."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def arun(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        self.batches.append([c.call.id for c in calls])
        await InlineExecutor().arun(calls, concurrency)


def test_an_executor_of_ones_own_sees_the_planned_calls(echo_dialect: str) -> None:
    executor = Recording()
    box, _ = where_toolbox(executor=executor)
    payload = {"conversation": "c", "calls": [{"id": "1", "tool": "where"},
                                              {"id": "2", "tool": "missing"},
                                              {"id": "3", "tool": "where"}]}
    body = box.handle(echo_dialect, payload)
    assert [a["ok"] for a in body["answers"]] == [True, False, True]
    assert executor.batches == [["1", "3"]]  # planned calls only, claimed by the store
    box.handle(echo_dialect, payload)  # a replay: nothing to run
    assert executor.batches == [["1", "3"]]
    assert isinstance(ThreadExecutor(), LoopExecutor)


class Wrap:
    def __init__(self) -> None:
        self.threads: set[str] = set()

    @hookimpl(wrapper=True)
    def toolbridge_execute_call(
        self, call: ToolCall, tool: ToolDefinition, invoke: Callable[[], ToolResult]
    ) -> Generator[None, ToolResult, ToolResult]:
        self.threads.add(threading.current_thread().name)
        return (yield)


async def test_under_ahandle_a_wrapper_never_runs_on_the_loop(echo_dialect: str) -> None:
    wrap = Wrap()
    toolbridge.plugin.register_plugin(wrap, "wrap")
    box = Toolbox()
    box.tool(lambda: "quick", name="quick", inline=True)

    @box.tool
    async def later() -> str:
        await asyncio.sleep(0)
        return "later"

    body = await box.ahandle(echo_dialect, {"calls": [{"id": "1", "tool": "quick"},
                                                      {"id": "2", "tool": "later"}]})
    assert [a["value"] for a in body["answers"]] == ["quick", "later"]
    assert wrap.threads and threading.current_thread().name not in wrap.threads


async def test_aexecute_of_one_call(echo_dialect: str) -> None:
    """The fleet's activities run one planned call at a time through the pipeline."""
    box = Toolbox()

    @box.tool(side_effects=True)
    async def charge(amount: int) -> str:
        return f"charged {amount}"

    call = ToolCall(id="c1", name="charge", arguments={"amount": 3}, dialect="d",
                    conversation="s")
    [first] = await box.aexecute([call])
    [again] = await box.aexecute([call])
    assert first.output == again.output == "charged 3" and again.call is call


def _work_calls(prefix: str, count: int) -> list[ToolCall]:
    return [ToolCall(id=f"{prefix}{i}", name="work", arguments={"n": i}, dialect="d",
                     conversation="s") for i in range(count)]


def test_a_quick_tool_runs_in_the_callers_thread_and_wakes_no_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbridge.runtime import _executors, _watch

    # "quick" generous enough that a busy machine cannot make a training run slow
    monkeypatch.setattr(_watch, "QUICK_SECONDS", 0.5)
    box, threads, handed = Toolbox(), [], []

    class CountedBatch(_executors.Batch):  # a batch is what hands calls to the workers
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            handed.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(_executors, "Batch", CountedBatch)

    @box.tool
    def work(n: int) -> int:
        threads.append(threading.current_thread().name)
        return n

    me = threading.current_thread().name
    for i in range(_executors.QUICK_RUNS):  # quick runs in the caller's thread teach it
        box.execute(_work_calls(f"w{i}-", 1))
    threads.clear()
    handed.clear()
    assert [r.output for r in box.execute(_work_calls("q", 8))] == list(range(8))
    assert threads == [me] * 8 and handed == []  # proven quick: no worker woken


BURST = 16


@pytest.mark.parametrize("history", ["never quick", "quick, now slow", "every tool quick"])
def test_a_burst_of_a_slow_tool_runs_at_once_whatever_its_history(
        monkeypatch: pytest.MonkeyPatch, history: str) -> None:
    """16 calls that meet at a barrier only if all of them run at once: a tool that was
    proven quick, then turned slow, hands the rest of its payload to the workers while its
    first call runs in the caller's thread. "every tool quick" is the mutant that counts
    every tool as proven quick from its first run: the payload still runs at once."""
    from toolbridge.runtime import _executors, _watch

    if history == "every tool quick":
        monkeypatch.setattr(_executors, "QUICK_RUNS", 0)
    else:  # a generous "quick": a busy machine cannot make a training run slow
        monkeypatch.setattr(_watch, "QUICK_SECONDS", 0.05)
    box, threads = Toolbox(max_concurrency=BURST), []
    meeting = threading.Barrier(BURST, timeout=30)
    blocking = threading.Event()

    @box.tool
    def work(n: int) -> int:
        if blocking.is_set():
            threads.append(threading.current_thread().name)
            meeting.wait()  # all of them, together, or BrokenBarrierError: an error result
        return n

    if history == "quick, now slow":
        for i in range(_executors.QUICK_RUNS + 1):
            box.execute(_work_calls(f"w{i}-", 1))
    blocking.set()
    results = box.execute(_work_calls("b", BURST))
    assert [r.error for r in results] == [None] * BURST
    assert [r.output for r in results] == list(range(BURST))
    assert len(set(threads)) == BURST  # each in a thread of its own


def test_without_the_watch_a_quick_tools_payload_runs_call_after_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch is what keeps the promise: with it disabled, the payload of a tool proven
    quick runs one call after another in the caller's thread (the barrier breaks)."""
    from toolbridge.runtime import _executors, _watch

    monkeypatch.setattr(_executors, "QUICK_RUNS", 0)
    monkeypatch.setattr(_watch.WATCH, "hold", lambda held: None)
    box = Toolbox()
    meeting = threading.Barrier(2, timeout=0.3)

    @box.tool
    def work(n: int) -> int:
        meeting.wait()
        return n

    results = box.execute(_work_calls("b", 2))
    assert [r.success for r in results] == [False, False]


def _train(box: Toolbox, runs: int) -> None:
    """``runs`` quick runs, each counted: a payload of one call runs in the calling thread (a
    bigger one would leave some calls to workers, whose runs are not counted)."""
    for run in range(runs):
        box.execute(_work_calls(f"train{run}-", 1))


SLOW = 0.8
"""Seconds a slow run of the tests below takes: twice their quick threshold, which a quick run
stays far under even on a machine busy with other work."""


def test_two_slow_runs_end_a_tools_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbridge.runtime import _executors, _watch

    monkeypatch.setattr(_watch, "QUICK_SECONDS", SLOW / 2)  # a loaded machine stays under it
    executor = ThreadExecutor()
    box, pauses = Toolbox(executor=executor), []

    @box.tool
    def work(n: int) -> int:
        if pauses:
            time.sleep(pauses.pop())
        return n

    tool = box._tools["work"]
    _train(box, _executors.QUICK_RUNS + 1)
    assert executor._runs[id(tool)][1] == _executors.QUICK_RUNS + 1
    pauses.extend([SLOW, SLOW])
    box.execute(_work_calls("slow1-", 1))
    assert executor._runs[id(tool)][1] == _executors.QUICK_RUNS  # one: forgiven, still quick
    box.execute(_work_calls("slow2-", 1))
    assert id(tool) not in executor._runs  # two in a row: back to the workers


def test_one_slow_run_of_a_proven_quick_tool_is_forgiven(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """A single slow run (a pause of the process) keeps a quick tool in the caller's thread;
    a quick run in between forgives it again."""
    from toolbridge.runtime import _executors, _watch

    monkeypatch.setattr(_watch, "QUICK_SECONDS", SLOW / 2)  # a loaded machine stays under it
    box, threads, pauses, handed = Toolbox(), [], [], []

    class CountedBatch(_executors.Batch):  # a batch is what hands calls to the workers
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            handed.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(_executors, "Batch", CountedBatch)

    @box.tool
    def work(n: int) -> int:
        threads.append(threading.current_thread().name)
        if pauses:
            time.sleep(pauses.pop())
        return n

    me = threading.current_thread().name
    _train(box, _executors.QUICK_RUNS + 1)  # proven, one run to spare
    for attempt in range(3):  # slow, quick, slow, quick...: never two slow runs in a row
        pauses.append(SLOW)
        box.execute(_work_calls(f"slow{attempt}-", 1))
        threads.clear()
        handed.clear()
        box.execute(_work_calls(f"quick{attempt}-", 4))
        assert threads == [me] * 4 and handed == []  # still quick: no worker woken


def test_a_tool_ending_after_its_loop_closed_leaves_no_error_in_its_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver stopped while a sync tool runs: the tool's thread ends quietly later."""
    crashes: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashes.append(args.exc_value))
    started, release, ended = threading.Event(), threading.Event(), threading.Event()
    box = Toolbox()

    @box.tool
    def slow() -> str:
        """Wait to be released."""
        started.set()
        release.wait(5)
        ended.set()
        return "late"

    async def stopped_early() -> None:
        task = asyncio.ensure_future(box.aexecute(calls("slow")))
        await asyncio.to_thread(started.wait, 5)
        task.cancel()

    asyncio.run(stopped_early())  # the loop is closed when this returns
    release.set()
    assert ended.wait(5)
    time.sleep(0.2)  # let the worker thread notify (and, before the fix, crash)
    assert crashes == []
