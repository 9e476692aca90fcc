"""Executors: where and when a payload's planned calls run (the pipeline's "run" step).

An executor decides only the place (this thread, a worker thread, the event loop) and the
moment (concurrency, timeouts); each `PlannedCall` does the work and records itself.
"""

from __future__ import annotations

import abc
import asyncio
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import _threads
from ._loops import run_in_thread_loop
from ._threads import QUEUED, Batch, Job, ThreadPool, resolve, worker_threads

if TYPE_CHECKING:
    from ._call import PlannedCall

__all__ = ["Executor", "InlineExecutor", "LoopExecutor", "ThreadExecutor"]


class Executor(abc.ABC):
    """Runs a payload's planned calls; returns once every one of them has its result.

    `arun` is awaited on the running event loop (``ahandle``, ``aexecute``); `run` is called
    from a thread with no running loop (``handle``, ``execute``) and by default runs `arun` on
    this thread's own event loop, made once and reused. At most ``concurrency`` calls run at
    once. A call runs with `PlannedCall.execute` (in the thread it is called in) or
    ``await PlannedCall.aexecute()`` (on the loop); an executor that stops waiting for one
    (its ``timeout`` passed) calls `PlannedCall.time_out`.
    """

    @abc.abstractmethod
    async def arun(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        """Run ``calls`` from the running event loop."""

    def run(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        """Run ``calls`` from this thread, which has no running event loop."""
        run_in_thread_loop(self.arun(calls, concurrency))


class InlineExecutor(Executor):
    """Every call in the caller's thread (or on its loop), one after another, in order.

    No timeout is enforced and nothing runs concurrently: for cheap handlers, tests, and a
    worker that runs one call at a time. Hook chains still run in a worker thread under
    `arun` (a wrapper may block, the loop must not).
    """

    def run(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        if any(c.is_async for c in calls):
            super().run(calls, concurrency)
            return
        for call in calls:
            call.execute(linger=True)

    async def arun(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        _on_this_loop(calls)
        threads = max(concurrency, worker_threads())
        for call in calls:
            if call.payload.hooks is not None:
                await _threads.CALLS.run(threads, call.execute)
            else:
                await call.aexecute()


class LoopExecutor(Executor):
    """Async handlers as tasks on the running loop; sync handlers in toolbridge's worker
    threads, awaited together; ``inline`` sync handlers on the loop itself.

    With a `toolbridge_execute_call` wrapper registered, every call's hook chain runs in a
    worker thread (a wrapper may block); `invoke()` then runs an async handler on the loop.
    """

    async def arun(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        _on_this_loop(calls)
        hooked = calls[0].payload.hooks is not None
        threads = max(concurrency, worker_threads())
        if hooked:
            tasks: list[PlannedCall] = []
            here: list[PlannedCall] = []
            pooled = list(calls)
        else:
            tasks = [c for c in calls if c.is_async]
            here = [c for c in calls if c.inline and not c.is_async]
            pooled = [c for c in calls if not (c.inline or c.is_async)]
        if len(tasks) + len(pooled) > concurrency:
            await _bounded(calls, concurrency, threads, hooked)
            return
        loop = asyncio.get_running_loop()
        running = [loop.create_task(c.aexecute()) for c in tasks]
        pool = _threads.CALLS if hooked else _threads.HANDLERS
        jobs: dict[Job, PlannedCall] = {
            Job(c.execute, None if hooked else c.timeout): c for c in pooled}
        try:
            waited = _submitted(jobs, pool, threads, concurrency) if jobs else None
            for call in here:
                await call.aexecute()
            for task in running:
                await task
            if waited is not None:
                await _await_batch(*waited, jobs, pool)
        except BaseException:
            for task in running:
                task.cancel()
            for job in jobs:
                if job.state == QUEUED and job.batch is not None and job.batch.take(job):
                    pool.run_job(job, _nothing)  # never started: it will not start now
            raise
        _raise_from(jobs)


class ThreadExecutor(LoopExecutor):
    """The default: sync handlers in toolbridge's worker threads, with no event loop.

    `run` submits the payload's calls to the pool and waits for them together; meanwhile
    the calling thread runs the ``inline`` ones, one call without a timeout, and any call
    without a timeout that no worker has started yet. Timeouts are enforced on the others
    (a handler that overruns is abandoned in its thread). A payload with async handlers runs
    as `LoopExecutor` does, on this thread's own loop.
    """

    def run(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        if any(c.is_async for c in calls):
            super().run(calls, concurrency)
            return
        hooked = calls[0].payload.hooks is not None
        here = [c for c in calls if c.inline]
        rest = [c for c in calls if not c.inline]
        mine = None if here else next((c for c in rest if hooked or c.timeout is None), None)
        jobs = {Job(c.execute, None if hooked else c.timeout): c for c in rest if c is not mine}
        pool = _threads.CALLS if hooked else _threads.HANDLERS
        busy = mine is not None or bool(here)
        batch = Batch(list(jobs), pool, max(concurrency, worker_threads()),
                      concurrency - busy) if jobs else None
        try:
            for call in here:
                call.execute(linger=True)
            if mine is not None:
                mine.execute(linger=True)
            if batch is not None:
                _take_back(batch, pool, jobs)
                if busy:
                    batch.widen()  # this thread's slot is free now
                _wait(batch, pool, jobs)
        except BaseException:
            if batch is not None:
                batch.cancel()
            raise
        _raise_from(jobs)


def _nothing() -> None:
    """What a job that must not run runs instead."""


def _on_this_loop(calls: Sequence[PlannedCall]) -> None:
    if calls:
        calls[0].payload.loop = asyncio.get_running_loop()


def _take_back(batch: Batch, pool: ThreadPool, jobs: dict[Job, PlannedCall]) -> None:
    """Run here every job without a timeout that no worker has started yet."""
    cursor = 0
    while True:
        job, cursor = batch.take_untimed(cursor)
        if job is None:
            return
        pool.run_job(job, lambda job=job: jobs[job].execute(linger=True))  # type: ignore[misc]


def _wait(batch: Batch, pool: ThreadPool, jobs: dict[Job, PlannedCall]) -> None:
    """Wait for the batch, giving up each job whose timeout passed."""
    while True:
        late, nearest = batch.overdue(time.monotonic())
        for job in late:
            if pool.give_up(job, jobs[job].call.name):
                jobs[job].time_out()
        if batch.wait(None if nearest is None else nearest - time.monotonic()):
            return


def _submitted(jobs: dict[Job, PlannedCall], pool: ThreadPool, threads: int, concurrency: int
               ) -> tuple[Batch, asyncio.Future[None]]:
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def notify() -> None:
        loop.call_soon_threadsafe(resolve, ended)

    return Batch(list(jobs), pool, threads, concurrency, notify), ended


async def _await_batch(batch: Batch, ended: asyncio.Future[None], jobs: dict[Job, PlannedCall],
                       pool: ThreadPool) -> None:
    threads = batch.size
    while not ended.done():
        late, nearest = batch.overdue(time.monotonic())
        for job in late:
            if pool.give_up(job, jobs[job].call.name):
                call = jobs[job]
                if call.payload.store is not None and call.payload.store.blocking:
                    await _threads.CALLS.run(threads, call.time_out)
                else:
                    call.time_out()
        if not ended.done():
            wait = None if nearest is None else max(nearest - time.monotonic(), 0.0)
            await asyncio.wait({ended}, timeout=wait)


async def _bounded(calls: Sequence[PlannedCall], concurrency: int, threads: int,
                   hooked: bool) -> None:
    """More calls than may run at once: each waits for a slot (sync ones then one by one)."""
    slots = asyncio.Semaphore(concurrency)

    async def one(call: PlannedCall) -> None:
        async with slots:
            if hooked:
                await _threads.CALLS.run(threads, call.execute)
            elif call.is_async or call.inline:
                await call.aexecute()
            else:
                job = Job(call.execute, call.timeout)
                jobs = {job: call}
                pool = _threads.HANDLERS
                await _await_batch(*_submitted(jobs, pool, threads, 1), jobs, pool)
                _raise_from(jobs)

    tasks = [asyncio.ensure_future(one(c)) for c in calls]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


def _raise_from(jobs: dict[Job, Any]) -> None:
    """Raise what escaped a job (``KeyboardInterrupt``, ``SystemExit``: handlers catch the rest)."""
    for job in jobs:
        if job.error is not None:
            raise job.error
