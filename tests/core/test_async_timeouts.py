"""Async handlers with a timeout: run in the awaiting task, step by step, cancelled past it."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

import pytest

from toolbridge import Toolbox, ToolCall
from toolbridge.runtime import _steps


def calls(name: str, count: int = 1, **arguments: Any) -> list[ToolCall]:
    return [ToolCall(id=str(i), name=name, arguments=arguments, dialect="d", conversation="s")
            for i in range(count)]


async def wait_forever(wait: str) -> None:
    """Suspend until cancelled: on a future ("future"), or by bare yields ("bare yields")."""
    if wait == "future":
        await asyncio.sleep(10)
    else:
        while True:
            await asyncio.sleep(0)


async def quick(value: int) -> int:
    """A coroutine that returns without suspending."""
    return value


async def test_a_timed_handler_that_never_suspends_runs_in_the_callers_task() -> None:
    box, tasks = Toolbox(store=None, timeout=5), []

    @box.tool
    async def steps(n: int) -> int:
        tasks.append(asyncio.current_task())
        total = 0
        for i in range(n):  # awaits that never suspend
            total += await quick(i)
        return total

    results = await box.aexecute(calls("steps", 3, n=4))
    assert [r.output for r in results] == [6, 6, 6]
    assert tasks == [asyncio.current_task()] * 3


async def test_a_timed_handler_that_suspends_after_a_few_steps_keeps_its_task() -> None:
    box, seen = Toolbox(store=None, timeout=5), []

    @box.tool
    async def later(n: int) -> str:
        before = asyncio.current_task()
        for i in range(n):
            await quick(i)
        await asyncio.sleep(0.01)  # a future to wait for
        await asyncio.sleep(0)  # a bare yield
        if sys.version_info >= (3, 11):  # its own timeout scope, on the task it runs in
            async with asyncio.timeout(5):
                await asyncio.sleep(0.01)
        seen.append((before, asyncio.current_task()))
        return f"after {n}"

    results = await box.aexecute(calls("later", 4, n=3))
    assert [r.output for r in results] == ["after 3"] * 4
    assert len(seen) == 4 and all(b is a and b is not None for b, a in seen)
    assert seen[0][0] is asyncio.current_task()  # the first one that suspends stays here


async def test_a_handlers_own_shorter_timeout_passes_through() -> None:
    """The handler's own cancellation (its timeout scope) reaches it, and it goes on."""
    if sys.version_info < (3, 11):
        pytest.skip("asyncio.timeout is 3.11+")
    box = Toolbox(store=None, timeout=5)

    @box.tool
    async def patient() -> str:
        try:
            async with asyncio.timeout(0.02):
                await asyncio.sleep(10)
        except TimeoutError:
            await asyncio.sleep(0.01)  # still running, its task not cancelled
            return "gave up on its own"
        return "never"

    [result] = await box.aexecute(calls("patient"))
    assert result.output == "gave up on its own"


async def test_a_timed_handler_raising_before_or_after_suspending_fails_alone() -> None:
    box = Toolbox(store=None, timeout=5)

    @box.tool
    async def fails(when: str) -> str:
        if when == "before":
            await quick(1)
            raise ValueError("broke before suspending")
        if when == "after":
            await asyncio.sleep(0.01)
            raise ValueError("broke after suspending")
        await asyncio.sleep(0.01)
        return "fine"

    payload = [ToolCall(id=w, name="fails", arguments={"when": w}, dialect="d")
               for w in ("before", "fine", "after")]
    before, fine, after = await box.aexecute(payload)
    assert not before.success and "broke before suspending" in (before.error or "")
    assert fine.output == "fine"
    assert not after.success and "broke after suspending" in (after.error or "")


@pytest.mark.parametrize("wait", ["future", "bare yields"])
async def test_a_handler_that_suspends_past_its_timeout_is_cancelled(wait: str) -> None:
    box, cancelled = Toolbox(store=None), []

    @box.tool(timeout=0.05)
    async def hang() -> str:
        await quick(1)  # steps that never suspend first
        try:
            await wait_forever(wait)
        except asyncio.CancelledError:
            cancelled.append(asyncio.current_task())
            raise
        return "never"

    [result] = await box.aexecute(calls("hang"))  # in this task: the cancellation checks it
    assert result.error == "hang timed out after 0.05 s"
    assert cancelled == [asyncio.current_task()]  # cancelled in the task it ran in
    task = asyncio.current_task()
    if sys.version_info >= (3, 11):
        assert task is not None and task.cancelling() == 0  # not left cancelled itself


async def test_a_handler_past_its_timeout_in_never_suspending_steps_times_out() -> None:
    """Its time counts from when it started: the first wait after the deadline ends it."""
    box, cancelled = Toolbox(store=None), threading.Event()

    @box.tool(timeout=0.05)
    async def busy() -> str:
        for i in range(3):
            await quick(i)
        time.sleep(0.1)  # blocks the loop past the timeout, then suspends
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    @box.tool(timeout=0.05)
    async def busy_but_done() -> str:
        time.sleep(0.1)  # past the timeout, but never suspends: its value stands
        return "done"

    late, done = await box.aexecute([*calls("busy"), ToolCall(id="x", name="busy_but_done",
                                                              dialect="d")])
    assert late.error == "busy timed out after 0.05 s" and cancelled.is_set()
    assert done.output == "done"


async def test_a_timed_out_handler_cleans_up_in_its_task_before_the_answer(
        caplog: pytest.LogCaptureFixture) -> None:
    """As under `asyncio.timeout`: the cancelled handler's cleanup (which may suspend, and
    may exit scopes bound to its task) runs in its task, and the answer waits for it; a
    cleanup that fails is logged."""
    box, cleaned = Toolbox(store=None), []

    @box.tool(timeout=0.05)
    async def careful() -> str:
        task = asyncio.current_task()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # closing connections, say
            await asyncio.sleep(0)
            cleaned.append(asyncio.current_task() is task)
            raise
        return "never"

    @box.tool(timeout=0.05)
    async def stubborn() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:  # suppressed: its value is dropped all the same
            await asyncio.sleep(0.05)
        return "too late"

    @box.tool(timeout=0.05)
    async def failing_cleanup() -> str:
        try:
            await asyncio.sleep(10)
        finally:
            await asyncio.sleep(0)
            raise RuntimeError("cleanup failed")

    names = ("careful", "stubborn", "failing_cleanup")
    results = await box.aexecute([ToolCall(id=n, name=n, dialect="d") for n in names])
    assert [r.error for r in results] == [f"{n} timed out after 0.05 s" for n in names]
    assert cleaned == [True]
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
    [failed] = [r for r in caplog.records if "while cleaning up" in r.getMessage()]
    assert failed.levelname == "WARNING" and "RuntimeError" in failed.getMessage()


def test_a_timed_out_handler_under_execute_cleans_up_before_the_answer() -> None:
    box, cleaned = Toolbox(store=None), []

    @box.tool(timeout=0.05)
    async def careful() -> str:
        try:
            await asyncio.sleep(10)
        finally:
            await asyncio.sleep(0.02)
            cleaned.append(True)
        return "never"

    [result] = box.execute(calls("careful"))
    assert result.error == "careful timed out after 0.05 s" and cleaned == [True]


async def test_cancelling_ahandle_during_a_timed_out_handlers_cleanup_cancels_it() -> None:
    box, steps = Toolbox(store=None), []

    @box.tool(timeout=0.05)
    async def slow_cleanup() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            steps.append("timed out")
            try:
                await asyncio.sleep(10)  # a cleanup that takes long
            except asyncio.CancelledError:
                steps.append("cancelled again")
                raise
            raise
        return "never"

    task = asyncio.ensure_future(box.aexecute(calls("slow_cleanup")))
    await asyncio.sleep(0.2)
    assert steps == ["timed out"] and not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert steps == ["timed out", "cancelled again"]


async def test_cancelling_ahandle_cancels_a_timed_handler_and_frees_its_claim(
        echo_dialect: str) -> None:
    box, runs, cancelled = Toolbox(timeout=5), [], []

    @box.tool
    async def charge(amount: int) -> str:
        runs.append(amount)
        try:
            await asyncio.sleep(0 if len(runs) > 1 else 10)
        except asyncio.CancelledError:
            cancelled.append(amount)
            raise
        return "done"

    payload = {"conversation": "c", "calls": [{"id": "1", "tool": "charge",
                                               "args": {"amount": 3}}]}
    task = asyncio.ensure_future(box.ahandle(echo_dialect, payload))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled == [3]
    assert box.store is not None and len(box.store) == 0  # type: ignore[arg-type]
    body = await box.ahandle(echo_dialect, payload)
    assert body["answers"][0]["value"] == "done" and runs == [3, 3]


async def test_within_directly() -> None:
    assert await _steps.within(quick(7), 1) == 7
    assert await _steps.within(asyncio.sleep(0.01, result="slept"), 5) == "slept"
    assert await _steps.within(asyncio.sleep(5), 0.01) is _steps.OVERDUE
    future = asyncio.get_running_loop().create_future()
    assert await _steps.within(future, 0.01) is _steps.OVERDUE
    assert future.cancelled()  # what it waited for is cancelled, as a task's cancel would
    with pytest.raises(KeyError):
        await _steps.within(asyncio.ensure_future(_raises_later()), 5)


async def _raises_later() -> None:
    await asyncio.sleep(0.01)
    raise KeyError("later")


async def test_max_concurrency_bounds_async_handlers_started_in_order(echo_dialect: str
                                                                      ) -> None:
    box, running, peak, started = Toolbox(max_concurrency=2), [0], [0], []

    @box.tool
    async def work(n: int) -> int:
        started.append(n)
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.01 * (n % 3))  # some never suspend (n % 3 == 0: sleep(0) does)
        running[0] -= 1
        return n

    @box.tool(inline=True)
    def note(n: int) -> int:
        started.append(n)
        return n

    ids = range(9)
    payload = {"conversation": "c", "calls": [
        {"id": str(n), "tool": "note" if n % 4 == 3 else "work", "args": {"n": n}} for n in ids]}
    body = await box.ahandle(echo_dialect, payload)
    assert [a["value"] for a in body["answers"]] == [str(n) for n in ids]  # echo: text
    assert started == list(ids) and peak[0] == 2


async def test_calls_that_never_suspend_take_no_task_in_a_bounded_payload() -> None:
    box, tasks = Toolbox(store=None, max_concurrency=2, timeout=5), []

    @box.tool
    async def here(n: int) -> int:
        tasks.append(asyncio.current_task())
        return n

    results = await box.aexecute(calls("here", 6, n=1))
    assert [r.output for r in results] == [1] * 6
    assert tasks == [asyncio.current_task()] * 6


async def test_cancelling_a_bounded_payload_cancels_its_handlers(echo_dialect: str) -> None:
    box, entered, cancelled = Toolbox(max_concurrency=2), [], []

    @box.tool
    async def hang(n: int) -> str:
        entered.append(n)
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(n)
            raise
        return "never"

    payload = {"conversation": "c", "calls": [
        {"id": str(n), "tool": "hang", "args": {"n": n}} for n in range(5)]}
    task = asyncio.ensure_future(box.ahandle(echo_dialect, payload))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert entered == [0, 1] and sorted(cancelled) == [0, 1]  # the other 3 never started
    assert box.store is not None and len(box.store) == 0  # type: ignore[arg-type]


@pytest.mark.parametrize("wait", ["future", "bare yields"])
async def test_a_cancellation_during_a_timed_handlers_cleanup_is_not_lost(wait: str) -> None:
    """Cancelled before its deadline, a handler whose cleanup runs past the deadline is not
    cancelled again by it: the task's cancellation stands."""
    box, steps = Toolbox(store=None), []

    @box.tool(timeout=0.1)
    async def cleanup() -> str:
        try:
            await wait_forever(wait)
        except asyncio.CancelledError:
            steps.append("cancelled")
            await asyncio.sleep(0.2)  # past the deadline, not cancelled again
            steps.append("cleaned up")
            raise
        return "never"

    task = asyncio.ensure_future(box.aexecute(calls("cleanup")))
    await asyncio.sleep(0.03)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert steps == ["cancelled", "cleaned up"]
