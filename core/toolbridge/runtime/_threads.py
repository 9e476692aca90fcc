"""The runtime's worker threads: per-process pools that run jobs in batches.

A caller hands a payload's jobs to a pool as one `Batch` and waits for the batch, not for each
job: one wake-up when the last job ends. Workers and the caller take the batch's jobs in turn
(`Batch.take`), so while it waits the caller runs jobs no worker has started yet: a batch of
quick handlers costs few thread hand-offs. One worker at a time is woken; it wakes the next
once it has a job, so handlers that block (and let go of the GIL) each get a thread.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from contextvars import copy_context
from typing import Any, TypeVar

__all__ = ["CALLS", "HANDLERS", "Batch", "ThreadPool", "resolve", "worker_threads"]

log = logging.getLogger("toolbridge.runtime")

T = TypeVar("T")

WORKER_THREADS_ENV = "TOOLBRIDGE_WORKER_THREADS"
"""Environment variable: threads for sync handlers per process (default 64; at least the
largest ``max_concurrency`` in use)."""
DEFAULT_WORKER_THREADS = 64
_SATURATION_WARNING_INTERVAL = 60.0
QUEUED, RUNNING, DONE, CANCELLED, ABANDONED = range(5)

Work = Callable[[bool], Any]
"""A job: called with ``True`` in the caller's thread, ``False`` in a worker thread."""


def worker_threads() -> int:
    """The configured size of the sync-handler pool (``TOOLBRIDGE_WORKER_THREADS``, or 64)."""
    text = os.environ.get(WORKER_THREADS_ENV, "")
    try:
        return max(1, int(text)) if text.strip() else DEFAULT_WORKER_THREADS
    except ValueError:
        log.warning("%s=%r is not a number; using %d threads", WORKER_THREADS_ENV, text,
                    DEFAULT_WORKER_THREADS)
        return DEFAULT_WORKER_THREADS


class Batch:
    """Jobs one caller waits for together (`wait` in a thread, ``notify`` for an event loop).

    Jobs start in order, at most ``window`` at once; a job's timeout counts from when it may
    start. ``names`` name the jobs in the log when one is given up. The pool keeps at least
    ``size`` threads (and at least ``TOOLBRIDGE_WORKER_THREADS``).
    """

    __slots__ = ("_context", "_latch", "_notify", "_pool", "_timed", "deadlines", "errors",
                 "jobs", "lock", "names", "next", "open", "remaining", "running", "size",
                 "states", "timeouts", "values", "window")

    def __init__(self, pool: ThreadPool, jobs: Sequence[Work], timeouts: Sequence[float | None],
                 names: Sequence[str], size: int, window: int | None = None,
                 notify: Callable[[], object] | None = None) -> None:
        count = len(jobs)
        self.jobs = jobs
        self.timeouts = timeouts
        self.names = names
        self.size = size
        self.window = count if window is None else max(window, 0)
        self.states = [QUEUED] * count
        self.values: list[Any] = [None] * count
        self.errors: list[BaseException | None] = [None] * count
        self.deadlines: list[float | None] = [None] * count
        self.next = 0  # jobs before it have started or were given up
        self.open = 0  # jobs before it may start: their timeouts run
        self.running = 0
        self.remaining = count
        self.lock = threading.Lock()
        self._latch = threading.Lock()
        self._latch.acquire()
        self._notify = notify
        self._pool = pool
        self._context = copy_context()
        self._timed = any(t is not None for t in timeouts)
        if count:
            self._open()
            pool.submit(self)
        else:
            self._latch.release()

    def _open(self) -> None:
        """Start the timeouts of the jobs that may run now (with ``lock`` held, or alone)."""
        limit = min(len(self.jobs), self.next + self.window - self.running)
        if not self._timed:
            self.open = max(self.open, limit)
            return
        now = time.monotonic()
        while self.open < limit:
            timeout = self.timeouts[self.open]
            if timeout is not None:
                self.deadlines[self.open] = now + timeout
            self.open += 1

    def take(self, untimed: bool = False) -> int | None:
        """Claim the next job that may start (``untimed``: one without a timeout, for a caller
        that must stay free to enforce the others'); its index, or ``None``."""
        with self.lock:
            if self.running >= self.window:
                return None
            states, now = self.states, None
            for index in range(self.next, self.open):
                if states[index] != QUEUED:
                    continue
                deadline = self.deadlines[index]
                if deadline is not None:
                    if untimed:
                        continue
                    now = now or time.monotonic()
                    if now > deadline:
                        continue  # its caller gives it up (and ends it) when it wakes
                states[index] = RUNNING
                self.running += 1
                while self.next < len(states) and states[self.next] != QUEUED:
                    self.next += 1
                return index
        return None

    def run(self, index: int, here: bool) -> None:
        """Run a job claimed with `take`, in this thread (``here``: the caller's, in its own
        context), and end it."""
        try:
            job = self.jobs[index]
            self.values[index] = job(here) if here else self._context.copy().run(job, here)
        except BaseException as exc:  # handed to the caller, which raises it
            self.errors[index] = exc
        with self.lock:
            state = self.states[index]
            if state == RUNNING:
                self.states[index] = DONE
                self.running -= 1
                self._ended()
                if self.open < len(self.jobs):
                    self._open()
        if state == ABANDONED:
            self._pool._returned()

    def give_up(self, index: int) -> bool:
        """Stop waiting for a job: a queued job never runs; a running one runs on in its
        thread, counted as held by a timed-out handler until it returns (and said so).
        ``False`` when it ended meanwhile."""
        with self.lock:
            state = self.states[index]
            if state == QUEUED:
                self.states[index] = CANCELLED
            elif state == RUNNING:
                self.states[index] = ABANDONED
                self.running -= 1
                self._open()
            else:
                return False
            while self.next < len(self.states) and self.states[self.next] != QUEUED:
                self.next += 1
            self._ended()
        if state == RUNNING:
            self._pool._given_up(self.names[index])
        if state == RUNNING and self.startable():  # its slot is free, its thread is not
            self._pool.submit(self, again=True)
        return True

    def widen(self) -> None:
        """Let one more job run at once (the caller's own slot is free)."""
        with self.lock:
            self.window += 1
            self._open()
        if self.startable():
            self._pool.submit(self, again=True)

    def cancel(self) -> None:
        """Give up every job that has not started: none of them will."""
        with self.lock:
            for index, state in enumerate(self.states):
                if state == QUEUED:
                    self.states[index] = CANCELLED
                    self._ended()
            self.next = len(self.states)

    def overdue(self, now: float) -> tuple[list[int], float | None]:
        """The jobs past their deadline, and the next deadline of the others."""
        late, nearest = [], None
        with self.lock:
            for index in range(self.open):
                deadline = self.deadlines[index]
                if deadline is None or self.states[index] not in (QUEUED, RUNNING):
                    continue
                if deadline <= now:
                    late.append(index)
                elif nearest is None or deadline < nearest:
                    nearest = deadline
        return late, nearest

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every job ended or was given up; ``False`` on timeout."""
        if self._latch.acquire(timeout=-1 if timeout is None else max(timeout, 0.0)):
            self._latch.release()
            return True
        return False

    def startable(self) -> bool:
        """Whether a job may start now (an unlocked peek, for the pool)."""
        return self.next < self.open and self.running < self.window

    def _ended(self) -> None:
        """One job fewer to wait for (with ``lock`` held)."""
        self.remaining -= 1
        if self.remaining == 0:
            self._pool._done(self)
            self._latch.release()
            if self._notify is not None:
                self._notify()


class ThreadPool:
    """A per-process pool of daemon threads that grows on demand and counts its busy jobs.

    Not the loop's default executor: that one has min(32, cores + 4) threads, and
    `asyncio.run` waits for it on exit (a timed-out thread must not hold up the answer).
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.size = 0
        """Threads it may start."""
        self.busy = 0
        """Jobs handed to it in batches not ended yet, and timed-out jobs still running."""
        self.abandoned = 0
        """Jobs still running whose caller gave up on them (timed out)."""
        self._lock = threading.Lock()
        self._queue: deque[Batch] = deque()
        self._idle: list[threading.Lock] = []  # each a sleeping worker's lock, held
        self._threads = 0
        self._waking = 0  # workers woken that have not looked at the queue yet
        self._pid = os.getpid()
        self._warned_at = -_SATURATION_WARNING_INTERVAL

    def submit(self, batch: Batch, again: bool = False) -> None:
        """Queue ``batch`` (``again``: queued before, with jobs that may start now); the pool
        may start up to ``batch.size`` threads."""
        with self._lock:
            if again:
                if batch not in self._queue:
                    self._queue.append(batch)
                wake = self._wake()
        if again:
            self._start(wake)
            return
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's threads are not here
                self._queue.clear()
                self._idle.clear()
                self._threads = self.busy = self.abandoned = self._waking = 0
                self._pid = os.getpid()
            if batch.size > self.size:  # never fewer threads than the configured count
                self.size = max(batch.size, worker_threads())
            self._queue.append(batch)
            self.busy += len(batch.jobs)
            saturated = self.busy > self.size
            wake = self._wake()
        self._start(wake)
        if saturated:
            self._warn_saturated()

    def _wake(self) -> threading.Lock | bool | None:
        """A sleeping worker to wake, ``True`` to start one, or ``None`` (with ``_lock`` held):
        one at a time; it wakes the next once it has taken a job."""
        if self._waking:
            return None
        if self._idle:
            self._waking += 1
            return self._idle.pop()
        if self._threads < self.size:
            self._threads += 1
            self._waking += 1
            return True
        return None

    def _start(self, wake: threading.Lock | bool | None) -> None:
        if wake is True:
            threading.Thread(target=self._work, name=f"{self.prefix}-{self._threads}",
                             daemon=True).start()
        elif wake:
            wake.release()

    def _work(self) -> None:
        me = threading.Lock()
        me.acquire()
        woken = True
        while True:
            with self._lock:
                if woken:
                    self._waking -= 1
                    woken = False
                queue = self._queue
                while queue and not queue[0].startable():
                    queue.popleft()  # all its jobs started (or wait for a free slot)
                batch = queue[0] if queue else None
                if batch is None:
                    self._idle.append(me)
            if batch is None:
                me.acquire()  # released by `_wake`'s caller: there is work
                woken = True
                continue
            index = batch.take()
            if index is None:
                with self._lock:
                    if queue and queue[0] is batch:
                        queue.popleft()
                continue
            if batch.startable():
                with self._lock:
                    wake = self._wake()
                self._start(wake)  # the next job gets a thread while this one runs
            while index is not None:  # a slot this job frees goes to the batch's next
                batch.run(index, False)
                index = batch.take()

    def _done(self, batch: Batch) -> None:
        """Every job of ``batch`` ended or was given up (its timed-out ones still count); the
        queue lets go of it now, not when a worker next looks (it holds the payload's calls)."""
        with self._lock:
            self.busy -= len(batch.jobs) - batch.states.count(ABANDONED)
            if batch in self._queue:
                self._queue.remove(batch)

    def _returned(self) -> None:
        """A timed-out job's handler returned at last."""
        with self._lock:
            self.busy -= 1
            self.abandoned -= 1

    def _given_up(self, name: str) -> None:
        with self._lock:
            self.abandoned += 1
            held, size = self.abandoned, self.size
        log.warning("tool %s timed out; its thread cannot be stopped and runs on until the "
                    "handler returns (%d of %d worker threads held by timed-out handlers)",
                    name, held, size)

    async def run(self, size: int, func: Callable[..., T], *args: Any) -> T:
        """Await ``func(*args)`` run in the pool (at least ``size`` threads)."""
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        batch = Batch(self, [lambda here: func(*args)], [None], [getattr(func, "__name__", "")],
                      size, notify=lambda: wake(loop, done))
        await done
        error = batch.errors[0]
        if error is not None:
            raise error
        return batch.values[0]  # type: ignore[no-any-return]

    def _warn_saturated(self) -> None:
        now = time.monotonic()
        if now - self._warned_at < _SATURATION_WARNING_INTERVAL:
            return
        self._warned_at = now
        log.warning(
            "all %d %s threads are busy (%d of them held by timed-out handlers that never "
            "returned); calls queue until one is free. Raise %s, or fix the handlers that "
            "hang", self.size, self.prefix, self.abandoned, WORKER_THREADS_ENV)


def resolve(future: asyncio.Future[None]) -> None:
    """Mark ``future`` done (on its loop), unless it already is."""
    if not future.done():
        future.set_result(None)


def wake(loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]) -> None:
    """From a worker thread: resolve ``future`` on ``loop``, unless the loop has closed (its
    awaiter is gone, e.g. a driver stopped while the tool ran: the result is in the store)."""
    try:
        loop.call_soon_threadsafe(resolve, future)
    except RuntimeError:  # "Event loop is closed"
        if not loop.is_closed():
            raise


HANDLERS = ThreadPool("toolbridge-tool")
"""Sync handlers, and the hook chains around them."""
CALLS = ThreadPool("toolbridge-call")
"""Blocking store operations, reconciliation, and hook chains around async handlers or timed
sync ones (never handlers: a hook chain waits for its handler, which must not queue behind
it)."""
