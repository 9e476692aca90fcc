"""One event loop per thread, reused by the blocking entry points that need one."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sys
import threading
import weakref
from collections.abc import Coroutine
from typing import Any

from ..errors import UsageError

__all__ = ["in_running_loop", "no_running_loop", "run_in_thread_loop"]


def in_running_loop() -> bool:
    """Whether this thread is running an event loop."""
    if sys.get_asyncgen_hooks().firstiter is None:
        # A running asyncio loop (uvloop's too) sets this thread's async generator hooks; none
        # set, none runs here, and asking asyncio would cost an exception on every `handle`.
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def no_running_loop() -> None:
    """Raise `UsageError` when a blocking entry point is called on a running event loop."""
    if in_running_loop():
        raise UsageError("called the blocking form inside a running event loop; use the "
                         "async form (ahandle / aexecute) with await instead")


class _Runner310:
    """`asyncio.Runner`'s part that is used here, for Python 3.10."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()

    def run(self, coro: Coroutine[Any, Any, None], *,
            context: contextvars.Context | None = None) -> None:
        loop = self._loop
        task = (context or contextvars.copy_context()).run(loop.create_task, coro)
        loop.run_until_complete(task)

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def close(self) -> None:
        loop = self._loop
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


if sys.version_info >= (3, 11):
    def _new_runner() -> Any:
        # loop_factory: the loop is not made the thread's current one (asyncio.run's is, for
        # as long as it runs; this one lives on)
        return asyncio.Runner(loop_factory=asyncio.new_event_loop)
else:
    def _new_runner() -> Any:
        return _Runner310()


class _Holder:
    """Keeps a thread's runner; when the thread ends, it goes and the runner is closed."""

    def __init__(self) -> None:
        self.runner: Any = _new_runner()
        weakref.finalize(self, _close, self.runner)


class _ThreadLoop(threading.local):
    holder: _Holder | None = None

    def get(self) -> Any:
        holder = self.holder
        if holder is None:
            holder = self.holder = _Holder()
        return holder.runner


def _close(runner: Any) -> None:
    with contextlib.suppress(Exception):  # a loop running or closed: nothing more to do
        runner.close()


_LOOPS = _ThreadLoop()


def run_in_thread_loop(coro: Coroutine[Any, Any, None]) -> None:
    """Run ``coro`` to its end on this thread's event loop, in a copy of this context.

    The coroutine returns nothing: `asyncio.Runner` formats the repr of what it returns when
    it restores the SIGINT handler, which for a payload's results costs more than the run.
    Tasks the run leaves behind (ones a handler started and did not wait for) are cancelled
    and awaited, as `asyncio.run` does.
    """
    runner = _LOOPS.get()
    runner.run(coro, context=contextvars.copy_context())
    loop = runner.get_loop()
    left = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if left:
        for task in left:
            task.cancel()
        runner.run(_gathered(left), context=contextvars.copy_context())


async def _gathered(tasks: list[asyncio.Task[Any]]) -> None:
    await asyncio.gather(*tasks, return_exceptions=True)
