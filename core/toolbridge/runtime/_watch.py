"""The watch on held batches: a caller running quick calls itself never holds up the rest.

`ThreadExecutor` runs the calls of tools proven quick in the calling thread, with no worker
woken: their jobs are a held `Batch` (not in the pool yet) that the caller takes one by one,
setting ``Batch.since`` as each starts. One daemon thread per process watches the held
batches; when the caller's current job has run `QUICK_SECONDS`, it hands the batch to the
pool (`Batch.hand_off`), so the payload's other calls start in worker threads while that one
goes on: a tool that turned slow costs its payload at most that long, not a call after a call.
The watcher sleeps until the earliest moment a job would be overdue, and parks (a lock, no
polling) once nothing was held for a while.
"""

from __future__ import annotations

import os
import threading
import time

from ._threads import Batch

__all__ = ["QUICK_SECONDS", "WATCH", "Watch"]

QUICK_SECONDS = 0.001
"""A call this short counts as quick; one that runs longer in the caller's thread hands the
rest of its payload to the workers."""
_IDLE_SECONDS = 0.05
"""How long the watcher keeps watching with nothing held before it parks."""


class Watch:
    """Hands a held batch to its pool once the job its caller runs is `QUICK_SECONDS` old."""

    def __init__(self) -> None:
        self._held: dict[int, Batch] = {}
        self._lock = threading.Lock()
        self._gate = threading.Lock()  # held while the watcher is parked (or not started)
        self._gate.acquire()
        self._parked = True
        self._thread: threading.Thread | None = None
        self._pid = 0

    def hold(self, batch: Batch) -> None:
        """Watch ``batch`` (held, its caller about to run its jobs) until `release`."""
        self._held[id(batch)] = batch
        if self._parked:
            self._wake()

    def release(self, batch: Batch) -> None:
        """Stop watching ``batch`` (its caller runs no more of its jobs)."""
        self._held.pop(id(batch), None)

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
            for batch in list(self._held.values()):
                due = batch.since + QUICK_SECONDS
                if due <= now:
                    if batch.startable():
                        batch.hand_off()
                    self._held.pop(id(batch), None)  # handed (or nothing left to hand)
                elif nearest is None or due < nearest:
                    nearest = due
            if nearest is not None:
                idle_since = now
                time.sleep(nearest - now)
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
