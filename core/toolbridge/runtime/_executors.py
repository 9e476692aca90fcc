"""Executors: where and when a payload's planned calls run (the pipeline's "run" step).

An executor decides only the place (this thread, a worker thread, the event loop) and the
moment (concurrency, timeouts); each `PlannedCall` does the work and records itself.
"""

from __future__ import annotations

import abc
import asyncio
import time
from collections.abc import Iterator, Sequence
from operator import length_hint

from . import _threads, _watch
from ._call import PlannedCall, execute_each
from ._loops import run_in_thread_loop
from ._steps import Take, in_order
from ._threads import Batch, ThreadPool, wake
from ._watch import WATCH, Held

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
        if any(c.tool.is_async for c in calls):
            super().run(calls, concurrency)
            return
        for call in calls:
            call.execute(linger=True)

    async def arun(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        _on_this_loop(calls)
        threads = concurrency
        for call in calls:
            if call.payload.hooks is not None:
                await _threads.CALLS.run(threads, call.execute)
            else:
                await call.aexecute()


class LoopExecutor(Executor):
    """Async handlers as tasks on the running loop; sync handlers in toolbridge's worker
    threads, awaited together; ``inline`` sync handlers on the loop itself.

    A handler that never suspends needs no task: the calls are started in order in the
    caller's task, and the first one that suspends stays there (as if awaited directly)
    while tasks take the next ones in turn (no more than may run at once: a payload of more
    calls than ``concurrency`` makes at most ``concurrency - 1`` tasks). With a
    `toolbridge_execute_call` wrapper registered, every call's hook chain runs in a worker
    thread (a wrapper may block); `invoke()` then runs an async handler on the loop.
    """

    async def arun(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        _on_this_loop(calls)
        hooked = calls[0].payload.hooks is not None
        threads = concurrency
        here: list[PlannedCall] = []
        pooled: list[PlannedCall] = []
        running = len(calls)  # at once, at most: all but the inline ones (run one by one)
        if hooked:
            pooled.extend(calls)
        else:
            for c in calls:
                if c.tool.is_async:
                    here.append(c)
                elif c.tool.inline:
                    here.append(c)
                    running -= 1
                else:
                    pooled.append(c)
        if running > concurrency:
            await in_order(calls, concurrency, _slotted(threads, hooked))
            return
        pool = _threads.CALLS if hooked else _threads.HANDLERS
        batch = ended = None
        if pooled:
            batch, ended = _submitted(pool, pooled, threads, concurrency, not hooked)
        try:
            await in_order(here, len(here), execute_each)
            if batch is not None and ended is not None:
                await _await_batch(batch, ended, pooled)
        except BaseException:
            if batch is not None:
                batch.cancel()
            raise
        _raise_from(batch)


QUICK_RUNS = 4
"""Quick runs in a row after which `ThreadExecutor` runs a tool's calls in the caller's thread."""


class ThreadExecutor(LoopExecutor):
    """The default: sync handlers in toolbridge's worker threads, with no event loop.

    `run` hands the payload's calls to the pool and waits for them together; meanwhile
    the calling thread runs the ``inline`` ones and any call without a timeout that no worker
    has started yet. Timeouts are enforced on the others (a handler that overruns is abandoned
    in its thread). A payload with async handlers runs as `LoopExecutor` does, on this
    thread's own event loop, made once and reused.

    A tool without a timeout whose last `QUICK_RUNS` runs in the calling thread each took
    under `toolbridge.runtime._watch.QUICK_SECONDS` (1 ms) is proven quick: a payload of
    such calls wakes no worker, the calling thread runs them one after another, and the
    payload is watched (`toolbridge.runtime._watch.WATCH`): once the call running there has
    taken that long, the rest of the payload goes to the workers without waiting for it, so
    the calls overlap as ``max_concurrency`` allows whatever a tool's history. Two slow runs
    with no quick one between end the proof; one alone may be a pause of the whole process
    (a garbage collection). Not with a `toolbridge_execute_call` wrapper (a wrapper
    may block).
    """

    @property
    def _runs(self) -> dict[int, tuple[object, int]]:
        """By ``id`` of a tool (kept alive here): its quick runs in a row, up to one more than
        `QUICK_RUNS` (the one a slow run takes back); made on first use, so a subclass's
        ``__init__`` need not call this one's."""
        runs: dict[int, tuple[object, int]] | None = self.__dict__.get("_quick_runs")
        if runs is None:
            runs = self.__dict__["_quick_runs"] = {}
        return runs

    def run(self, calls: Sequence[PlannedCall], concurrency: int) -> None:
        hooked = calls[0].payload.hooks is not None if calls else False
        runs = self._runs
        here: list[PlannedCall] = []  # inline: this thread's, one after another
        pooled: list[PlannedCall] = []
        quick = not hooked  # every pooled call proven quick: no worker woken unless one is slow
        growing = False  # a pooled call's tool whose score may still grow (each run counts)
        for c in calls:
            tool = c.tool
            if tool.is_async:
                super().run(calls, concurrency)
                return
            if tool.inline:
                here.append(c)
                continue
            pooled.append(c)
            if quick:
                known = runs.get(id(tool))
                score = known[1] if known is not None and known[0] is tool else 0
                if c.timeout is not None or score < QUICK_RUNS:
                    quick = False
                elif score == QUICK_RUNS:
                    growing = True
        pool = _threads.CALLS if hooked else _threads.HANDLERS
        busy = bool(here)
        if quick and pooled and (here or len(pooled) > 1):  # one alone: nothing to hand on
            self._held(here, pooled, growing, pool, concurrency)
            return
        mine = None if here else next((c for c in pooled if hooked or c.timeout is None), None)
        if mine is not None:
            pooled.remove(mine)
            busy = True
        batch = None
        if pooled:
            batch = Batch(pool, [c.execute for c in pooled],
                          [c.timeout if not hooked else None for c in pooled],
                          [c.record.name for c in pooled], concurrency, concurrency - busy)
        try:
            for call in here:
                call.execute(linger=True)
            if mine is not None:
                self._timed(mine, None, 0, not hooked)
            if batch is not None:
                self._join(batch, pooled, busy, not hooked)
        except BaseException:
            if batch is not None:
                batch.cancel()
            raise
        _raise_from(batch)

    def _held(self, here: Sequence[PlannedCall], pooled: Sequence[PlannedCall],
              growing: bool, pool: ThreadPool, concurrency: int) -> None:
        """Run a payload of calls proven quick (and ``inline`` ones) in this thread, watched:
        once one has run `toolbridge.runtime._watch.QUICK_SECONDS`, workers of ``pool`` take
        the rest (this thread's call holds one of its ``concurrency`` slots) while this
        thread goes on taking them too, then joins them. A run is counted when it was slow,
        or once a score may change (``growing``: one still growing, or a slow run before)."""
        def handed(pending: Iterator[int]) -> Batch:
            def take(here: bool) -> None:
                for index in pending:
                    pooled[index].execute(linger=here)

            workers = min(length_hint(pending), concurrency - 1) or 1
            return Batch(pool, [take] * workers, [None] * workers,
                         ["a quick call of the payload"] * workers, concurrency, concurrency - 1)

        clock = time.monotonic
        quick = _watch.QUICK_SECONDS
        held = Held(len(pooled), handed, now := clock())
        WATCH.hold(held)
        try:
            for call in here:
                held.since = now
                call.execute(linger=True)
                now = clock()
            for index in held.pending:  # shared with the workers, once handed on
                held.since = started = now
                call = pooled[index]
                call.execute(linger=True)
                now = clock()  # this call's end, the next one's start
                if now - started >= quick or growing:
                    self._learn(call.tool, now - started)
                    growing = True  # a slow run's tool may be forgiven by a quick one next
        except BaseException:
            WATCH.release(held)
            if held.batch is not None:
                held.batch.cancel()
            raise
        WATCH.release(held)
        batch = held.batch
        if batch is None:
            return
        try:
            batch.widen()  # this thread's slot is free now
            job = batch.take(untimed=True)
            while job is not None:  # workers not started yet: none is needed any more
                batch.run(job, True)
                job = batch.take(untimed=True)
            _wait(batch, [])
        except BaseException:
            batch.cancel()
            raise
        _raise_from(batch)

    def _join(self, batch: Batch, calls: Sequence[PlannedCall], busy: bool, learn: bool
              ) -> None:
        """Run the jobs of ``batch`` no worker has started yet in this thread (``busy``: its
        slot was taken until now), then wait for the others."""
        if busy:
            batch.widen()  # this thread's slot is free now
        index = batch.take(untimed=True)
        while index is not None:  # what no worker has started yet
            self._timed(calls[index], batch, index, learn)
            index = batch.take(untimed=True)
        _wait(batch, calls)

    def _timed(self, call: PlannedCall, batch: Batch | None, index: int, learn: bool) -> None:
        """Run ``call`` in this thread (a job of ``batch``, when given), counting quick runs
        of its tool (``learn``: not inline, no timeout, no hook chain)."""
        if not learn or call.tool.inline or call.timeout is not None:
            if batch is None:
                call.execute(linger=True)
            else:
                batch.run(index, True)
            return
        started = time.monotonic()
        if batch is None:
            call.execute(linger=True)
        else:
            batch.run(index, True)
        self._learn(call.tool, time.monotonic() - started)

    def _learn(self, tool: object, elapsed: float) -> None:
        """Count a run of ``tool`` that took ``elapsed`` seconds."""
        runs = self._runs
        known = runs.get(id(tool))
        score = known[1] if known is not None and known[0] is tool else 0
        if elapsed < _watch.QUICK_SECONDS:
            if score <= QUICK_RUNS:  # one over: proven quick, and a slow run forgiven
                if len(runs) > 4096:  # toolboxes made and dropped: forget
                    runs.clear()
                runs[id(tool)] = (tool, score + 1)
        elif score > QUICK_RUNS:  # the first slow run of a quick tool: still quick, once
            runs[id(tool)] = (tool, QUICK_RUNS)
        else:
            runs.pop(id(tool), None)


def _on_this_loop(calls: Sequence[PlannedCall]) -> None:
    if calls:
        calls[0].payload.loop = asyncio.get_running_loop()


def _wait(batch: Batch, calls: Sequence[PlannedCall]) -> None:
    """Wait for the batch, giving up each job whose timeout passed."""
    while True:
        late, nearest = batch.overdue(time.monotonic())
        for index in late:
            if batch.give_up(index):
                calls[index].time_out()
        if batch.wait(None if nearest is None else nearest - time.monotonic()):
            return


def _submitted(pool: ThreadPool, calls: Sequence[PlannedCall], threads: int, concurrency: int,
               timed: bool) -> tuple[Batch, asyncio.Future[None]]:
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()
    batch = Batch(pool, [c.execute for c in calls],
                  [c.timeout if timed else None for c in calls], [c.record.name for c in calls],
                  threads, concurrency, lambda: wake(loop, ended))
    return batch, ended


async def _await_batch(batch: Batch, ended: asyncio.Future[None],
                       calls: Sequence[PlannedCall]) -> None:
    while not ended.done():
        late, nearest = batch.overdue(time.monotonic())
        for index in late:
            if batch.give_up(index):
                call = calls[index]
                if call.payload.store is not None and call.payload.store.blocking:
                    await _threads.CALLS.run(batch.size, call.time_out)
                else:
                    call.time_out()
        if not ended.done():
            wait = None if nearest is None else max(nearest - time.monotonic(), 0.0)
            await asyncio.wait({ended}, timeout=wait)


def _slotted(threads: int, hooked: bool) -> Take[PlannedCall]:
    """How the calls of a payload with more calls than may run at once run, each in its slot
    (sync ones one by one, each a batch of its own)."""
    async def take(pending: Iterator[PlannedCall]) -> None:
        for call in pending:
            if hooked:
                await _threads.CALLS.run(threads, call.execute)
            elif call.tool.is_async or call.tool.inline:
                await call.aexecute()
            else:
                batch, ended = _submitted(_threads.HANDLERS, [call], threads, 1, True)
                await _await_batch(batch, ended, [call])
                _raise_from(batch)

    return take


def _raise_from(batch: Batch | None) -> None:
    """Raise what escaped a job (``KeyboardInterrupt``, ``SystemExit``: handlers catch the rest)."""
    if batch is not None:
        for error in batch.errors:
            if error is not None:
                raise error
