"""The watch on held batches: a caller running quick calls itself never holds up the rest.

`ThreadExecutor` runs the calls of tools proven quick in the calling thread, with no worker
woken: they are `Held`, and the caller takes them one by one (noting when each starts). One
daemon thread per process watches what is held; when the caller's current call has run
`QUICK_SECONDS`, it hands the calls not started yet to the worker pool as one `Batch` of
workers that take them (`Held.hand_off`), so they start in worker threads while that one
goes on: a tool that turned slow costs its payload about its slowest call, not a call after
a call.
The watcher sleeps until the earliest moment a job would be overdue, and parks (a lock, no
polling) once nothing was held for a while.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from operator import length_hint

from ._threads import Batch

__all__ = ["QUICK_SECONDS", "WATCH", "Held", "Watch"]

QUICK_SECONDS = 0.001
"""A call this short counts as quick; one that runs longer in the caller's thread hands the
rest of its payload to the workers."""
_IDLE_SECONDS = 0.05
"""How long the watcher keeps watching with nothing held before it parks."""


class Held:
    """A payload's ``count`` calls its caller runs one by one until they are handed on.

    The calls are taken from `pending` (indices, shared: each is taken once, by whoever takes
    it, with no lock — a range iterator's ``next`` is atomic); the caller notes in `since`
    when its current call started. ``batch(pending)`` makes the `Batch` (submitted to the
    pool) of workers that take the calls left: at `hand_off`, which sets `batch`; the caller
    goes on taking calls too, then joins it.
    """

    __slots__ = ("_make", "batch", "lock", "pending", "released", "since")

    def __init__(self, count: int, batch: Callable[[Iterator[int]], Batch],
                 since: float) -> None:
        self.pending = iter(range(count))
        """The calls not taken yet (their indices)."""
        self.since = since
        """When the caller's current call started (`time.monotonic`)."""
        self.batch: Batch | None = None
        """The workers the calls left were handed to, once they were."""
        self.released = False
        """Whether the caller stopped taking calls (none is handed on from then)."""
        self.lock = threading.Lock()
        self._make = batch

    def left(self) -> bool:
        """Whether calls are left to hand on."""
        return not self.released and self.batch is None and length_hint(self.pending) > 0

    def hand_off(self, now: float) -> None:
        """Hand the calls not taken yet to the pool, if the caller's current call started
        `QUICK_SECONDS` before ``now``."""
        with self.lock:
            if self.left() and self.since + QUICK_SECONDS <= now:
                self.batch = self._make(self.pending)


class Watch:
    """Hands held calls to the pool once the call their caller runs is `QUICK_SECONDS` old."""

    def __init__(self) -> None:
        self._held: dict[int, Held] = {}
        self._lock = threading.Lock()
        self._gate = threading.Lock()  # held while the watcher is parked (or not started)
        self._gate.acquire()
        self._parked = True
        self._thread: threading.Thread | None = None
        self._pid = 0

    def hold(self, held: Held) -> None:
        """Watch ``held`` (its caller about to run its calls) until `release`."""
        self._held[id(held)] = held
        if self._parked:
            self._wake()

    def release(self, held: Held) -> None:
        """Stop watching ``held``: its caller claims no more of its calls, and none is
        handed on from now (a hand-off already made stands, in ``held.batch``)."""
        with held.lock:
            held.released = True
        self._held.pop(id(held), None)

    def _wake(self) -> None:
        with self._lock:
            if self._pid != os.getpid():  # first use, or a forked child: no watcher here yet
                self._pid = os.getpid()
                self._gate = threading.Lock()
                self._gate.acquire()  # locked whenever the watcher is parked
                self._parked = False
                self._thread = threading.Thread(target=self._run, name="toolbridge-watch",
                                                daemon=True)
                self._thread.start()
            elif self._parked:
                self._parked = False
                self._gate.release()

    def _run(self) -> None:
        idle_since = time.monotonic()
        while True:
            now = time.monotonic()
            nearest = None
            for held in list(self._held.values()):
                due = held.since + QUICK_SECONDS
                if due <= now:
                    held.hand_off(now)
                    if not held.left():
                        self._held.pop(id(held), None)  # handed, or nothing left to hand
                        continue
                    due = held.since + QUICK_SECONDS  # the caller moved on meanwhile
                if nearest is None or due < nearest:
                    nearest = due
            if nearest is not None:
                idle_since = now
                time.sleep(max(nearest - now, 0.0))
                continue
            if now - idle_since < _IDLE_SECONDS:
                time.sleep(QUICK_SECONDS)
                continue
            with self._lock:
                self._parked = True
                if self._held:  # held meanwhile: its `hold` may have seen us awake
                    self._parked = False
                    continue
                gate = self._gate
            gate.acquire()  # released by `_wake`
            idle_since = time.monotonic()


WATCH = Watch()
