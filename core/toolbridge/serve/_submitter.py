"""Submitting a conversation's results: one submission at a time, a saved answer resent first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..model import ToolResult
from ..plugin import Backend, Dialect, DialectLimits, Step
from ..runtime._plan import answered_once
from ._calls import CallTracker
from ._checkpoints import Checkpoints
from ._record import Key
from ._tasks import ConversationTasks

__all__ = ["Submitter"]

Landed = Callable[[Step | None], Awaitable[None]]
"""Called after each submission that landed, with the step its answer carries (if any)."""
Sending = Callable[[Sequence[ToolResult], Sequence[ToolResult]], None]
"""Called with the results ready to go and those the body carries, before it is sent."""


class Submitter:
    """Submits what is ready, until nothing is (later results join the next submission).

    The answer being sent is kept (and checkpointed) when the backend cannot list pending
    calls: after a failure it is resent, before any new results.
    """

    __slots__ = ("_backend", "_calls", "_checkpoints", "_landed", "_resend", "_sending", "_tasks",
                 "active", "saved")

    def __init__(self, backend: Backend, checkpoints: Checkpoints, calls: CallTracker,
                 tasks: ConversationTasks, landed: Landed, sending: Sending) -> None:
        self._backend = backend
        self._checkpoints = checkpoints
        self._calls = calls
        self._tasks = tasks
        self._landed = landed
        self._sending = sending
        self.active = False
        """A submission is under way (its task submits whatever is ready after it)."""
        self.saved: tuple[Step, Mapping[str, Any]] | None = None
        """The answer being sent, kept when the backend cannot list pending calls."""
        self._resend = False
        """`saved` is to be sent again (first, before any new results)."""

    async def submit(self, turn: int) -> None:
        """Submit what is ready from this task (no task switch before the request), unless a
        submission is under way (it takes these results too)."""
        if self._calls.submittable() and not self.active:
            self.active = True
            await self._run(turn)

    def kick(self, turn: int) -> None:
        """Submit what is ready, from a task of its own (the caller goes on reading)."""
        if self._calls.submittable() and not self.active:
            self.active = True
            self._tasks.spawn(self._run(turn))

    def resubmit(self, turn: int) -> None:
        """Send the saved answer again (the backend could not tell whether it landed)."""
        assert self.saved is not None
        self._calls.step = self.saved[0]
        self._resend = True
        if not self.active:
            self.active = True
            self._tasks.spawn(self._run(turn))

    def clear(self) -> None:
        """The turn is over: nothing is submitting, or to be resent."""
        self.active, self.saved, self._resend = False, None, False

    async def _run(self, turn: int) -> None:
        try:
            while True:
                if self._resend and self.saved is not None:
                    step, body = self.saved
                    keys: list[Key] = []
                    self._resend = False
                elif self._calls.submittable():
                    step, body, keys = await self._batch(turn)
                else:
                    return
                try:
                    next_step = await self._backend.submit(step, body)
                except Exception as exc:
                    self._calls.sent(keys, landed=False)
                    self._tasks.fail(exc)
                    return
                self._calls.sent(keys, landed=True)
                self.saved = None  # delivered: never to be resent
                await self._landed(next_step)
        finally:
            self.active = False

    async def _batch(self, turn: int) -> tuple[Step, Mapping[str, Any], list[Key]]:
        step, keys, results = self._calls.batch()
        dialect = self._backend.dialect
        limits = dialect.limits if isinstance(dialect, Dialect) else DialectLimits()
        carried = answered_once(limits, results, [r.call for r in results])
        self._sending(results, carried)
        body = dialect.write_results(carried)
        if not self._backend.lists_pending:
            self.saved = (step, body)
            try:
                await self._checkpoints.sending(self._backend, turn, step, body)
            except BaseException:
                self._calls.sent(keys, landed=False)
                raise
        return step, body, keys
