"""The runtime's worker threads: per-process pools that run jobs in batches.

A caller submits a payload's jobs as one `Batch` and waits for the batch, not for each job:
one wake-up when the last job ends. While it waits it may take back a job no worker has
started yet (`Batch.take`) and run it itself, so a batch of quick handlers costs few thread
hand-offs; workers wake one another only while jobs are queued.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["CALLS", "HANDLERS", "Batch", "Job", "ThreadPool", "resolve", "worker_threads"]

log = logging.getLogger("toolbridge.runtime")

T = TypeVar("T")

WORKER_THREADS_ENV = "TOOLBRIDGE_WORKER_THREADS"
"""Environment variable: threads for sync handlers per process (default 64; at least the
largest ``max_concurrency`` in use)."""
DEFAULT_WORKER_THREADS = 64
_SATURATION_WARNING_INTERVAL = 60.0
QUEUED, RUNNING, DONE, CANCELLED, ABANDONED = range(5)


def worker_threads() -> int:
    """The configured size of the sync-handler pool (``TOOLBRIDGE_WORKER_THREADS``, or 64)."""
    text = os.environ.get(WORKER_THREADS_ENV, "")
    try:
        return max(1, int(text)) if text.strip() else DEFAULT_WORKER_THREADS
    except ValueError:
        log.warning("%s=%r is not a number; using %d threads", WORKER_THREADS_ENV, text,
                    DEFAULT_WORKER_THREADS)
        return DEFAULT_WORKER_THREADS


class Job:
    """One function to run in a pool thread (or taken back by its caller)."""

    __slots__ = ("batch", "context", "deadline", "error", "fn", "state", "submitted",
                 "timeout", "value")

    def __init__(self, fn: Callable[[], Any], timeout: float | None = None) -> None:
        self.fn = fn
        self.timeout = timeout
        self.deadline: float | None = None
        """`time.monotonic` after which the caller stops waiting (set when submitted)."""
        self.state = QUEUED
        self.submitted = False
        self.value: Any = None
        self.error: BaseException | None = None
        self.batch: Batch | None = None
        self.context = contextvars.copy_context()


class Batch:
    """Jobs one caller waits for together: `wait` (a thread) or ``notify`` (an event loop).

    At most ``window`` of them are in the pool at once; each job that ends lets the next in.
    """

    __slots__ = ("_latch", "_notify", "_waiting", "jobs", "lock", "pool", "remaining", "size")

    def __init__(self, jobs: Sequence[Job], pool: ThreadPool, size: int,
                 window: int | None = None, notify: Callable[[], None] | None = None) -> None:
        self.jobs = jobs
        self.pool = pool
        self.size = size
        self.lock = threading.Lock()
        self.remaining = len(jobs)
        self._latch = threading.Lock()
        self._latch.acquire()
        self._notify = notify
        window = len(jobs) if window is None else max(window, 0)
        self._waiting = deque(jobs[window:])
        for job in jobs:
            job.batch = self
        if jobs:
            self._submit(list(jobs[:window]))
        else:
            self._latch.release()

    def _submit(self, jobs: list[Job]) -> None:
        if not jobs:
            return
        now = time.monotonic()
        for job in jobs:
            job.submitted = True
            if job.timeout is not None:
                job.deadline = now + job.timeout
        self.pool.submit(jobs, self.size)

    def take(self, job: Job) -> bool:
        """Claim a queued job for this thread (then run it with `ThreadPool.run_job`)."""
        with self.lock:
            if job.state != QUEUED:
                return False
            job.state = RUNNING
            return True

    def take_untimed(self, start: int = 0) -> tuple[Job | None, int]:
        """Claim the first job from index ``start`` on that has no timeout and that no worker
        has started (in the pool or still waiting), for this thread; with where to go on."""
        jobs = self.jobs
        with self.lock:
            for index in range(start, len(jobs)):
                job = jobs[index]
                if job.timeout is None and job.state == QUEUED:
                    if not job.submitted:
                        self._waiting.remove(job)
                    job.state = RUNNING
                    return job, index + 1
        return None, len(jobs)

    def widen(self) -> None:
        """Let one more job into the pool (the caller's own slot is free)."""
        with self.lock:
            following = self._waiting.popleft() if self._waiting else None
        if following is not None:
            self._submit([following])

    def cancel(self) -> None:
        """Give up every job that has not started: none of them will."""
        dropped = 0
        with self.lock:
            self._waiting.clear()
            for job in self.jobs:
                if job.state == QUEUED:
                    job.state = CANCELLED
                    dropped += job.submitted
                    self.remaining -= 1
                    if self.remaining == 0:
                        self.remaining = 1
                        self._ended()
        if dropped:
            with self.pool._lock:
                self.pool.busy -= dropped

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every job ended or was given up; ``False`` on timeout."""
        if self._latch.acquire(timeout=-1 if timeout is None else max(timeout, 0.0)):
            self._latch.release()
            return True
        return False

    def overdue(self, now: float) -> tuple[list[Job], float | None]:
        """The jobs past their deadline, and the next deadline of the others."""
        late, nearest = [], None
        for job in self.jobs:
            deadline = job.deadline
            if deadline is None or job.state not in (QUEUED, RUNNING):
                continue
            if deadline <= now:
                late.append(job)
            elif nearest is None or deadline < nearest:
                nearest = deadline
        return late, nearest

    def _ended(self) -> Job | None:
        """One job fewer to wait for (call with ``lock`` held); the next one to submit."""
        self.remaining -= 1
        if self.remaining <= 0:
            self._latch.release()
            if self._notify is not None:
                self._notify()
        return self._waiting.popleft() if self._waiting else None


class ThreadPool:
    """A per-process pool of daemon threads that grows on demand and counts its busy threads.

    Not the loop's default executor: that one has min(32, cores + 4) threads, and
    `asyncio.run` waits for it on exit (a timed-out thread must not hold up the answer).
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.size = 0
        """Threads it may start."""
        self.busy = 0
        """Jobs submitted and not ended (queued or running)."""
        self.abandoned = 0
        """Jobs still running whose caller gave up on them (timed out)."""
        self._lock = threading.Lock()
        self._queue: deque[Job] = deque()
        self._idle: list[threading.Lock] = []  # each a sleeping worker's lock, held
        self._threads = 0
        self._pid = os.getpid()
        self._warned_at = -_SATURATION_WARNING_INTERVAL

    def submit(self, jobs: Sequence[Job], size: int) -> None:
        """Queue ``jobs`` (of one `Batch`); the pool may start up to ``size`` threads."""
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's threads are not here
                self._queue.clear()
                self._idle.clear()
                self._threads = self.busy = self.abandoned = 0
                self._pid = os.getpid()
            self.size = max(self.size, size)
            self._queue.extend(jobs)
            self.busy += len(jobs)
            saturated = self.busy > self.size
            wake = self._wake()
        self._start(wake)
        if saturated:
            self._warn_saturated()

    def _wake(self) -> threading.Lock | bool | None:
        """A sleeping worker to wake, ``True`` to start one, ``None`` (with ``_lock`` held)."""
        if self._idle:
            return self._idle.pop()
        if self._threads < self.size:
            self._threads += 1
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
        while True:
            with self._lock:
                if not self._queue:
                    self._idle.append(me)
                    job = None
                else:
                    job = self._queue.popleft()
                    wake = self._wake() if self._queue else None
            if job is None:
                me.acquire()  # released by `_wake`'s caller: there is work
                continue
            self._start(wake)  # the next queued job gets a thread while this one runs
            deadline = job.deadline
            if deadline is not None and time.monotonic() > deadline:
                continue  # its caller gives it up (and ends it) when it wakes
            if job.batch is not None and job.batch.take(job):
                self.run_job(job)

    def run_job(self, job: Job, fn: Callable[[], Any] | None = None) -> None:
        """Run a job taken with `Batch.take` (or ``fn`` instead of its own function), in this
        thread, and end it."""
        try:
            job.value = job.context.run(job.fn if fn is None else fn)
        except BaseException as exc:  # handed to the caller, which raises it
            job.error = exc
        batch = job.batch
        assert batch is not None
        following = None
        with batch.lock:
            if job.state == RUNNING:
                job.state = DONE
                following = batch._ended()
            was_abandoned = job.state == ABANDONED
        if job.submitted:
            with self._lock:
                self.busy -= 1
                if was_abandoned:
                    self.abandoned -= 1
        if following is not None:
            batch._submit([following])

    def give_up(self, job: Job, name: str) -> bool:
        """Stop waiting for ``job``: a queued job never runs; a running one runs on in its
        thread, counted as held by a timed-out handler until it returns (and said so).
        ``False`` when it ended meanwhile."""
        batch = job.batch
        assert batch is not None
        following = None
        with batch.lock:
            state = job.state
            if state in (QUEUED, RUNNING):
                job.state = CANCELLED if state == QUEUED else ABANDONED
                following = batch._ended()
        if following is not None:
            batch._submit([following])
        if state == QUEUED:
            with self._lock:
                self.busy -= 1
            return True
        if state != RUNNING:
            return False
        with self._lock:
            self.abandoned += 1
            held, size = self.abandoned, self.size
        log.warning("tool %s timed out; its thread cannot be stopped and runs on until the "
                    "handler returns (%d of %d worker threads held by timed-out handlers)",
                    name, held, size)
        return True

    async def run(self, size: int, func: Callable[..., T], *args: Any) -> T:
        """Await ``func(*args)`` run in the pool (at least ``size`` threads)."""
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def ended() -> None:
            loop.call_soon_threadsafe(resolve, done)

        job = Job(lambda: func(*args))
        Batch([job], self, size, notify=ended)
        await done
        if job.error is not None:
            raise job.error
        return job.value  # type: ignore[no-any-return]

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


HANDLERS = ThreadPool("toolbridge-tool")
"""Sync handlers, and the hook chains around them."""
CALLS = ThreadPool("toolbridge-call")
"""Blocking store operations, reconciliation, and hook chains around async handlers or timed
sync ones (never handlers: a hook chain waits for its handler, which must not queue behind
it)."""
