"""A conversation's tasks (its reader, the turn's calls and submissions) and the turn's inbox."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from ..plugin import Step

__all__ = ["ConversationTasks"]


class _Inbox:
    """What the turn's task waits for; one consumer (lighter than an `asyncio.Queue`)."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: list[Step | BaseException] = []
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Step | BaseException) -> None:
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get(self) -> Step | BaseException:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._items.pop(0)


class ConversationTasks:
    """The tasks working for one conversation, and what its turn's own task waits for: the
    turn's final step (once per turn), or a failure to recover from.

    The reader (of a streaming backend) serves every turn; the other tasks end with the turn.
    """

    __slots__ = ("_ended", "_inbox", "_tasks", "reader")

    def __init__(self) -> None:
        self._inbox = _Inbox()
        self._tasks: set[asyncio.Task[None]] = set()
        self.reader: asyncio.Task[None] | None = None
        self._ended = False

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def begin(self) -> None:
        """A turn begins: its final step is still to come."""
        self._ended = False

    def end(self, step: Step) -> None:
        """The turn's final step (a later one, from another task, is ignored)."""
        if not self._ended:
            self._ended = True
            self._inbox.put_nowait(step)

    def fail(self, error: BaseException) -> None:
        self._inbox.put_nowait(error)

    async def next(self) -> Step | BaseException:
        """The final step, or a failure, in the order they came."""
        return await self._inbox.get()

    async def settle(self) -> None:
        """Let the turn's tasks finish."""
        pending = [t for t in self._tasks if t is not self.reader]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def stop(self) -> None:
        """The turn is over: cancel its tasks (not the reader), forget what it waited for."""
        tasks = [t for t in self._tasks if not t.done() and t is not self.reader]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks = {self.reader} if self.reader is not None else set()
        self._inbox = _Inbox()

    async def close(self) -> None:
        """Stop the reader too (after `stop`)."""
        reader, self.reader = self.reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        self._tasks.clear()
