"""A barrier for "these calls ran at the same time", in place of a wall-clock upper bound.

Each handler calls ``await meeting.arrive()``: it returns once ``size`` handlers are inside
at once. Calls run one after another never all arrive, and the wait gives up after
``timeout`` seconds with `MeetingMissed` (a generous bound that only ends a failing test; a
passing one never waits for it).
"""

from __future__ import annotations

import asyncio
import threading


class MeetingMissed(AssertionError):
    """Fewer than ``size`` handlers were ever inside at once."""


class AsyncMeeting:
    """``size`` coroutines meet (on any event loop, any thread)."""

    def __init__(self, size: int, timeout: float = 30.0) -> None:
        self.size, self.timeout = size, timeout
        self.peak = 0
        self._inside = 0
        self._lock = threading.Lock()
        self._met = threading.Event()

    async def arrive(self) -> None:
        with self._lock:
            self._inside += 1
            self.peak = max(self.peak, self._inside)
            if self._inside >= self.size:
                self._met.set()
        try:
            for _ in range(int(self.timeout * 100)):
                if self._met.is_set():
                    return
                await asyncio.sleep(0.01)
            raise MeetingMissed(f"{self.peak} of {self.size} were ever inside at once")
        finally:
            with self._lock:
                self._inside -= 1
