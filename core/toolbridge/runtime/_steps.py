"""Coroutines driven step by step in the task that awaits them: no task of their own.

A handler that never suspends then costs no task, no future and no timer, with or without a
timeout; one that suspends stays in the awaiting task throughout (as ``await handler()``
would), so ``asyncio.current_task()``, ``asyncio.timeout`` and task-bound cancel scopes work
in it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator, Sequence
from operator import length_hint
from typing import Any, Final, Protocol, TypeVar

__all__ = ["OVERDUE", "Resumed", "Steps", "Take", "in_order", "within"]

T = TypeVar("T")

log = logging.getLogger("toolbridge.runtime")

OVERDUE: Final = object()
"""What `within` gives when the awaitable suspended past its deadline (it was cancelled)."""


class Steps(Protocol):
    """What ``awaitable.__await__()`` gives (a coroutine is one): its steps."""

    def send(self, value: Any, /) -> Any: ...

    def throw(self, exc: BaseException, /) -> Any: ...


class Resumed:
    """The rest of started ``steps`` (``steps.send(None)`` gave ``waiting``), awaited in the
    current task as ``await`` would have: what they wait for goes up to the task, what the
    task sends or throws (a cancellation) comes back. Its value is theirs."""

    __slots__ = ("steps", "waiting")

    def __init__(self, steps: Steps, waiting: Any) -> None:
        self.steps, self.waiting = steps, waiting

    def __await__(self) -> Generator[Any, Any, Any]:
        steps, waiting = self.steps, self.waiting
        while True:
            try:
                sent = yield waiting
            except BaseException as exc:  # thrown into the task: pass it on
                try:
                    waiting = steps.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    waiting = steps.send(sent)
                except StopIteration as stop:
                    return stop.value


Take = Callable[[Iterator[T]], Coroutine[Any, Any, None]]
"""Runs the items an iterator gives (shared between takers: each is taken once), in turn."""

_DONE: Final = object()
"""What `next` gives for steps that ended without suspending."""


async def in_order(items: Sequence[T], concurrency: int, take: Take[T]) -> None:
    """Run ``items`` with ``take``, at most ``concurrency`` at once, started in order.

    One ``take`` of them all starts in this task; once an item's run suspends, it goes on
    here (as if awaited directly) while up to ``concurrency - 1`` tasks ``take`` the next
    items in turn, and so does this task once it ended. Runs that never suspend cost no task
    and follow one another in that one coroutine (no driver step of their own).
    """
    pending = iter(items)
    taking = take(pending)
    steps = taking.__await__()
    waiting = next(steps, _DONE)  # all the runs that do not suspend (StopIteration caught in C)
    if waiting is _DONE:
        return  # done without suspending: no task needed
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(take(pending))
             for _ in range(min(concurrency - 1, length_hint(pending)))]
    try:
        await Resumed(steps, waiting)  # the suspended run, then the next ones in turn
        for task in tasks:
            await task
    except BaseException:
        taking.close()
        for task in tasks:
            task.cancel()
        raise


@types.coroutine
def within(awaitable: Awaitable[Any], seconds: float) -> Generator[Any, Any, Any]:
    """``await awaitable`` in the current task, cancelled if it suspends past ``seconds``
    from now (then the value is `OVERDUE`).

    Run without a task, timer or future until it first suspends; each wait after that is
    bounded by the deadline. Past it, the awaitable is cancelled as a timeout's
    ``task.cancel()`` would (what it waits for is cancelled, `asyncio.CancelledError` thrown
    in) and, as under ``asyncio.timeout``, waited for until it ends: its cleanup runs in its
    task (one that suppresses the cancellation holds its awaiter up until it returns).
    """
    started = time.monotonic()
    steps: Steps = awaitable.__await__()
    try:
        waiting = steps.send(None)
    except StopIteration as stop:  # done without suspending: nothing to time
        return stop.value
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds - (time.monotonic() - started)
    while True:
        if loop.time() >= deadline:
            return (yield from _cancelled(steps, waiting))
        sent = None
        if asyncio.isfuture(waiting) and getattr(waiting, "get_loop", None) and (
                waiting.get_loop() is loop):
            woken = loop.create_future()  # by the future or by the deadline
            wake = functools.partial(_wake, woken)
            timer = loop.call_at(deadline, wake)
            waiting.add_done_callback(wake)
            try:
                yield from woken.__await__()
            except BaseException as exc:  # the task was cancelled: pass it on, as the
                timer.cancel()  # task would have (what the steps wait for is cancelled)
                waiting.remove_done_callback(wake)
                waiting.cancel()
                return (yield from _thrown(steps, exc))
            timer.cancel()
            if not waiting.done():  # the deadline came first
                waiting.remove_done_callback(wake)
                return (yield from _cancelled(steps, waiting))
        else:  # a bare yield (``asyncio.sleep(0)``) or what only the task understands
            try:
                sent = yield waiting
            except BaseException as exc:
                return (yield from _thrown(steps, exc))
        try:
            waiting = steps.send(sent)
        except StopIteration as stop:
            return stop.value


def _thrown(steps: Steps, exc: BaseException) -> Generator[Any, Any, Any]:
    """Pass on what was thrown into the task (its cancellation), then await the rest as is:
    the cancellation is in charge now, not the deadline."""
    try:
        waiting = steps.throw(exc)
    except StopIteration as stop:
        return stop.value
    return (yield from Resumed(steps, waiting).__await__())


def _wake(woken: asyncio.Future[None], *_: object) -> None:
    if not woken.done():
        woken.set_result(None)


def _cancelled(steps: Steps, waiting: Any) -> Generator[Any, Any, object]:
    """Cancel ``steps`` past their deadline as a timeout's ``task.cancel()`` would, and wait
    here for them to end (their cleanup stays in their task, as under ``asyncio.timeout``);
    `OVERDUE`, unless the task itself is cancelled meanwhile."""
    if asyncio.isfuture(waiting):
        waiting.cancel()
    cancelled = False  # the task itself, while they clean up
    try:
        waiting = steps.throw(asyncio.CancelledError())
        while True:
            try:
                sent = yield waiting
            except BaseException as exc:  # thrown into the task: pass it on
                cancelled = True
                waiting = steps.throw(exc)
            else:
                waiting = steps.send(sent)
    except StopIteration:
        pass
    except asyncio.CancelledError:
        if cancelled:
            raise
    except Exception as exc:  # their cleanup failed: timed out all the same
        log.warning("a timed-out tool call failed while cleaning up (%s); it is reported as "
                    "timed out", type(exc).__name__)
    return OVERDUE
