"""The runtime's thread pools, and running a handler within its timeout."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["CALLS", "HANDLERS", "ThreadPool", "TimedOut", "run_with_timeout", "worker_threads"]

log = logging.getLogger("toolbridge.runtime")

T = TypeVar("T")


class TimedOut(Exception):
    """`run_with_timeout` gave up waiting."""


WORKER_THREADS_ENV = "TOOLBRIDGE_WORKER_THREADS"
"""Environment variable: threads for sync handlers per process (default 64; at least the
largest ``max_concurrency`` in use)."""
DEFAULT_WORKER_THREADS = 64
_SATURATION_WARNING_INTERVAL = 60.0


def worker_threads() -> int:
    """The configured size of the sync-handler pool (``TOOLBRIDGE_WORKER_THREADS``, or 64)."""
    text = os.environ.get(WORKER_THREADS_ENV, "")
    try:
        return max(1, int(text)) if text.strip() else DEFAULT_WORKER_THREADS
    except ValueError:
        log.warning("%s=%r is not a number; using %d threads", WORKER_THREADS_ENV, text,
                    DEFAULT_WORKER_THREADS)
        return DEFAULT_WORKER_THREADS


class ThreadPool:
    """A per-process thread pool that grows on demand and counts its busy threads.

    Not the loop's default executor: that one has min(32, cores + 4) threads, and
    `asyncio.run` waits for it on exit (a timed-out thread must not hold up the answer).
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.size = 0
        self.busy = 0
        """Jobs submitted and not finished (queued or running)."""
        self.abandoned = 0
        """Jobs still running whose caller gave up on them (timed out)."""
        self._executor: ThreadPoolExecutor | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._warned_at = -_SATURATION_WARNING_INTERVAL

    def executor(self, size: int) -> ThreadPoolExecutor:
        """This process's executor with at least ``size`` threads (replaced when too small:
        the old one finishes its jobs and its threads exit)."""
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self.busy = self.abandoned = 0
                self._executor = None
            if self._executor is None or size > self.size:
                if self._executor is not None:
                    self._executor.shutdown(wait=False)
                self._executor = ThreadPoolExecutor(size, thread_name_prefix=self.prefix)
                self.size, self._pid = size, os.getpid()
            return self._executor

    def submit(self, size: int, func: Callable[..., Any], *args: Any,
               **kwargs: Any) -> Future[Any]:
        """Run ``func`` in the pool, with this context's variables."""
        executor = self.executor(size)
        with self._lock:
            self.busy += 1
            saturated = self.busy > self.size
        if saturated:
            self._warn_saturated()
        context = contextvars.copy_context()
        try:
            future = executor.submit(context.run, func, *args, **kwargs)
        except BaseException:
            self._done(None)
            raise
        future.add_done_callback(self._done)  # also when cancelled before it started
        return future

    async def run(self, size: int, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Await ``func(*args, **kwargs)`` run in the pool (at least ``size`` threads)."""
        return await asyncio.wrap_future(self.submit(size, func, *args, **kwargs))

    def _done(self, _: Future[Any] | None) -> None:
        with self._lock:
            self.busy -= 1

    def abandon(self, future: Future[Any], name: str) -> None:
        """Give up waiting for ``future``: cancel it if it has not started, else count its
        thread as held by a timed-out handler until it returns, and say so."""
        if future.cancel():
            return
        with self._lock:
            self.abandoned += 1
            held, size = self.abandoned, self.size
        log.warning("tool %s timed out; its thread cannot be stopped and runs on until the "
                    "handler returns (%d of %d worker threads held by timed-out handlers)",
                    name, held, size)

        def returned(_: Future[Any]) -> None:
            with self._lock:
                self.abandoned -= 1

        future.add_done_callback(returned)

    def _warn_saturated(self) -> None:
        now = time.monotonic()
        if now - self._warned_at < _SATURATION_WARNING_INTERVAL:
            return
        self._warned_at = now
        log.warning(
            "all %d %s threads are busy (%d of them held by timed-out handlers that never "
            "returned); calls queue until one is free. Raise %s, or fix the handlers that "
            "hang", self.size, self.prefix, self.abandoned, WORKER_THREADS_ENV)


HANDLERS = ThreadPool("toolbridge-tool")
"""Sync handlers."""
CALLS = ThreadPool("toolbridge-call")
"""Hook chains and blocking store operations (never handlers: a hook chain waits for its
handler, which must not queue behind it)."""


async def run_with_timeout(
    handler: Callable[..., Any], kwargs: dict[str, Any], is_async: bool, timeout: float | None,
    threads: int = 1, name: str = "",
) -> Any:
    """Await an async handler, or run a sync one in the worker pool (at least ``threads``
    threads), for at most ``timeout``."""
    if is_async:
        if timeout is None:
            return await handler(**kwargs)
        task = asyncio.ensure_future(handler(**kwargs))
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if not done:
            task.cancel()
            raise TimedOut
        return task.result()
    future = HANDLERS.submit(max(threads, worker_threads()), handler, **kwargs)
    if timeout is None:
        return await asyncio.wrap_future(future)
    waiter = asyncio.wrap_future(future)
    done, _ = await asyncio.wait({waiter}, timeout=timeout)
    if not done:
        HANDLERS.abandon(future, name or getattr(handler, "__name__", "?"))
        waiter.cancel()  # its late result (or exception) is dropped
        raise TimedOut
    return waiter.result()
