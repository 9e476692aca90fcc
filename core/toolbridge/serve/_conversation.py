"""One conversation through the driver: steps in, answers out, one recovery rule.

`Conversation.turn` plays one user message; `Conversation.serve` answers what an existing
conversation waits for. Work happens where its input arrives, with as few task switches as a
call allows: the reader (for streaming backends) turns each step into call tasks; a call
task, when its result completes what can be submitted, submits it itself (one submission at a
time per conversation, later results joining the next); a submission's answer that carries
the next step starts that step's calls. The turn's own task only waits for the end, and runs
the recovery after a failure.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import BackendError, ReplyLostError, ServeError, UsageError
from ..model import ToolCall, ToolResult
from ..plugin import Backend, Dialect, DialectLimits, Step
from ..runtime._plan import answered_once
from ._checkpoints import Checkpoints
from ._deadline import refuse_late
from ._record import Key, Recorder, remember

if TYPE_CHECKING:
    from ..toolbox import Toolbox
    from ._settings import DriverSettings
    from ._transcript import Transcript

__all__ = ["Conversation"]

log = logging.getLogger("toolbridge.serve")
_NONE: frozenset[Key] = frozenset()


class _Inbox:
    """What the turn's task waits for; one consumer (lighter than an `asyncio.Queue`)."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: list[tuple[Any, ...]] = []
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: tuple[Any, ...]) -> None:
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get(self) -> tuple[Any, ...]:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._items.pop(0)


class Conversation:
    """Drives one `Backend` with a `Toolbox`, recording into a `Transcript`."""

    __slots__ = ("_ended", "_inbox", "_inflight", "_last_round", "_reader", "_ready", "_record",
                 "_recoveries", "_repeats", "_resend", "_rounds", "_saved", "_sending", "_step",
                 "_step_keys", "_submitted", "_submitting", "_tasks", "backend",
                 "checkpoints", "settings", "toolbox", "transcript", "turn_index")

    def __init__(self, backend: Backend, toolbox: Toolbox, transcript: Transcript,
                 settings: DriverSettings, checkpoints: Checkpoints) -> None:
        self.backend = backend
        self.toolbox = toolbox
        self.transcript = transcript
        self.settings = settings
        self.checkpoints = checkpoints
        self.turn_index = 0
        self._record = Recorder(transcript, settings)
        self._inbox = _Inbox()
        """What the turn's task waits for: ``("final", step)`` or ``("failed", error)``."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._reader: asyncio.Task[None] | None = None
        self._inflight: dict[Key, None] = {}
        self._ready: dict[Key, ToolResult] = {}
        self._repeats: dict[Key, list[ToolResult]] = {}
        """The error results of calls repeating a ready call's (turn, id), sent with it where
        the wire carries them (`toolbridge.plugin.DialectLimits.repeated_result_ids`)."""
        self._submitted: dict[Key, None] = {}
        """Calls submitted, oldest first (an ordered set, bounded)."""
        self._step: Step | None = None
        """The latest step with calls (its calls are submitted together unless partial)."""
        self._step_keys: list[Key] = []
        self._last_round: frozenset[Key] = frozenset()
        """The calls of the last whole step submitted (a backend without `partial_submit`): a
        step listing other calls is a new round, whose every call is answered (again)."""
        self._submitting = False
        self._sending: frozenset[Key] = _NONE
        """The calls of the submission in flight (a step read meanwhile may still list them)."""
        self._saved: tuple[Step, Mapping[str, Any]] | None = None
        """The answer being sent, kept (and persisted) when the backend cannot list pending
        calls: resent after a failure."""
        self._resend = False
        """`_saved` is to be sent again (first, before any new results)."""
        self._ended = False
        self._recoveries = 0
        self._rounds = 0

    # ------------------------------------------------------------------ entry points
    async def turn(self, message: str) -> Step:
        """Send ``message`` and answer calls until the turn ends; the final step."""
        self.transcript.add("user", message)
        self._ended = False
        if self.backend.streams and self._reader is None:  # reading while the message goes
            self._start_reader()
        try:
            first = await self._send(message)
        except Exception as exc:
            await self._stop()
            if isinstance(exc, UsageError) or not isinstance(exc, BackendError):
                raise
            return Step("failed", error=f"sending the user message failed: {exc}",
                        detail=exc)
        self._note_conversation()
        return await self._drive(first)

    async def _send(self, message: str) -> Step | None:
        """Send ``message``; after a failure that leaves unknown whether it arrived (one to
        recover from), ask the backend (`Backend.sent`): continue the turn it started, or
        send it again when it never arrived. Never sent twice: the error is raised when
        the backend cannot tell, or recoveries run out."""
        policy = self.settings.recovery
        attempt = 0
        while True:
            try:
                return await self.backend.send(message)
            except Exception as exc:
                attempt += 1
                if (isinstance(exc, UsageError) or not isinstance(exc, BackendError)
                        or not self.backend.retryable(exc) or attempt > policy.max_attempts):
                    raise
                log.warning("%s: conversation %s: sending the user message failed (%s); "
                            "asking whether it arrived", self.backend.dialect.name,
                            self.backend.conversation, exc)
                await asyncio.sleep(policy.delay(attempt, None))
                try:
                    arrived = await self.backend.sent(message)
                except BackendError:
                    arrived = None
                if arrived is None:
                    raise
                if arrived:
                    return await self.backend.resume()

    async def serve(self) -> Step:
        """Answer what the conversation waits for until it is idle (or forever, if the
        backend keeps streaming); the final step."""
        first = await self.backend.resume()
        self._note_conversation()
        return await self._drive(first)

    async def resume_checkpoint(self) -> Step | None:
        """Finish a turn an earlier driver left (its checkpoint): its final step, or ``None``
        when there is no checkpoint."""
        found = await self.checkpoints.load(self.backend)
        if found is None:
            return None
        turn, step, answer, cursor = found
        self.turn_index = turn
        self.backend.restore(cursor)
        log.info("%s: resuming conversation %s from its checkpoint (turn %d)",
                 self.backend.dialect.name, self.backend.conversation, turn)
        self._note_conversation()
        if answer is not None:
            self._saved = (step, answer)
            return await self._drive(None, resend=True)
        return await self._drive(step)

    def finish_turn(self, final: Step) -> None:
        """Record the turn's reply and move to the next turn."""
        self.turn_index += 1
        if final.reply is not None:
            self.transcript.add("reply", final.reply, final.detail if isinstance(
                final.detail, Mapping) else None)

    # ------------------------------------------------------------------ the turn's task
    async def _drive(self, first: Step | None, *, resend: bool = False) -> Step:
        self._rounds = self._recoveries = 0
        self._ended = False
        if self.backend.streams and self._reader is None:
            self._start_reader()
        try:
            if resend:
                self._resubmit()
            elif first is not None:
                await self._deliver(first)
            elif not self.backend.streams:  # nothing waits, and nothing will arrive
                return await self._settle(Step("completed"))
            while True:
                item = await self._inbox.get()
                if item[0] == "final":
                    return await self._settle(item[1])
                done = await self._recover(item[1])
                if done is not None:
                    return await self._settle(done)
        finally:
            await self._stop()

    def _end(self, step: Step) -> None:
        if not self._ended:
            self._ended = True
            self._inbox.put_nowait(("final", step))

    def _fail(self, error: BaseException) -> None:
        self._inbox.put_nowait(("failed", error))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ------------------------------------------------------------------ steps
    def _start_reader(self) -> None:
        async def read() -> None:
            try:
                while True:
                    await self._deliver(await self.backend.next())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._reader = None
                self._fail(exc)

        self._reader = self._spawn(read())

    async def _deliver(self, step: Step) -> None:
        """Handle a step wherever it arrived (the reader, a submission's answer, a recovery)."""
        done = await self._on_step(step)
        if done is not None:
            self._end(done)

    async def _on_step(self, step: Step) -> Step | None:
        """Start answering a step's new calls; the final step when the turn ended."""
        if step.final:
            return step
        pending = self.backend.dialect.read_calls(step.payload or {})
        keys = [(c.turn, c.id) for c in pending.calls]
        if step.fresh or (not self.backend.partial_submit and frozenset(keys) != self._last_round):
            # Read from the service, or a new round that lists an id answered before (a model
            # may reuse one): each call is answered, from the store when it holds the call.
            for key in keys:
                self._submitted.pop(key, None)
        new = [c for c, k in zip(pending.calls, keys, strict=True)
               if k not in self._inflight and k not in self._submitted and k not in self._ready
               and k not in self._sending]
        if new:
            if any(not self._record.seen(c) for c in new):
                self._recoveries = 0  # progress: calls never seen before
            if not self.backend.partial_submit or self._step is None or not (
                    set(keys) & set(self._step_keys)):
                self._rounds += 1
            if self._rounds > self.settings.max_rounds:  # a looping agent
                return Step("incomplete", error=f"the backend asked for calls more than "
                            f"{self.settings.max_rounds} rounds in one turn; stopped "
                            "(raise max_rounds if the agent needs more)")
            await self.checkpoints.received(self.backend, self.turn_index, step)
        if not self.backend.partial_submit:
            self._step, self._step_keys = step, keys
            current = set(keys)
            self._ready = {k: r for k, r in self._ready.items() if k in current}
        elif new:
            self._step, self._step_keys = step, keys
        if new:
            self._start_calls(step, new)
        if pending.unhandled and not self._inflight and not self._ready and all(
                k in self._submitted for k in keys):
            kinds = ", ".join(sorted({str(a.get("type")) for a in pending.unhandled}))
            return Step("incomplete", error=f"waits on action(s) left to the caller: {kinds}",
                        detail=[dict(a) for a in pending.unhandled])
        self._kick()
        return None

    # ------------------------------------------------------------------ calls
    def _start_calls(self, step: Step, calls: list[ToolCall]) -> None:
        for call in calls:
            self._record.call(call)
        refused, startable = self._refuse_late(step, calls)
        if self.backend.partial_submit:  # one batch per call, with the calls repeating its id
            groups: dict[Key, list[ToolCall]] = {}
            for call in startable:
                groups.setdefault((call.turn, call.id), []).append(call)
            batches = list(groups.values())
        else:
            batches = [startable] if startable else []
        for batch in batches:
            self._inflight.update(dict.fromkeys((c.turn, c.id) for c in batch))
            self._spawn(self._answer(batch))
        if refused:
            self._take(refused)

    def _refuse_late(self, step: Step, calls: list[ToolCall]
                     ) -> tuple[list[ToolResult], list[ToolCall]]:
        """Calls whose tool cannot finish before the step's deadline get an error result."""
        startable, refused = refuse_late(step, calls, self.toolbox)
        for result in refused:
            self._record.result(result, 0.0)
        return refused, startable

    async def _answer(self, calls: list[ToolCall]) -> None:
        """Run a batch through the toolbox; then submit, if nothing else is submitting."""
        started = time.perf_counter()
        try:
            results = await self.toolbox.aexecute(calls, **self.settings.context)
        except Exception as exc:
            for call in calls:
                self._inflight.pop((call.turn, call.id), None)
            self._fail(exc)
            return
        seconds = (time.perf_counter() - started) / max(len(calls), 1)
        for result in results:
            self._record.result(result, seconds)
        self._take(results)
        if self._submittable() and not self._submitting:
            await self._submit()  # this task submits: no task switch before the request

    def _take(self, results: list[ToolResult]) -> None:
        current = set(self._step_keys)
        taken: set[Key] = set()
        for result in results:
            key = (result.call.turn, result.call.id)
            if key in taken:  # a call repeating an earlier one's id: its error result
                self._repeats.setdefault(key, []).append(result)
                continue
            taken.add(key)
            self._inflight.pop(key, None)
            if self.backend.partial_submit or key in current:
                self._ready[key] = result

    # ------------------------------------------------------------------ submitting
    def _submittable(self) -> bool:
        if not self._ready or self._step is None:
            return False
        return self.backend.partial_submit or all(k in self._ready for k in self._step_keys)

    def _kick(self) -> None:
        """Submit what is ready, from a task of its own (the caller goes on reading)."""
        if self._submittable() and not self._submitting:
            self._submitting = True
            self._spawn(self._submit(claimed=True))

    async def _submit(self, *, claimed: bool = False) -> None:
        """Submit ready results until none are left (one submission at a time); the answer
        to each may carry the next step. A saved answer (a resend) goes first."""
        if self._submitting and not claimed:
            return
        self._submitting = True
        try:
            while True:
                if self._resend and self._saved is not None:
                    step, body = self._saved
                    keys: list[Key] = []
                    self._resend = False
                elif self._submittable():
                    step, body, keys = await self._batch()
                else:
                    return
                self._sending = frozenset(keys) if keys else _NONE
                try:
                    next_step = await self.backend.submit(step, body)
                except Exception as exc:
                    self._sending = _NONE
                    self._fail(exc)
                    return
                self._sending, self._saved = _NONE, None  # delivered: never to be resent
                for key in keys:
                    remember(self._submitted, key)
                if keys and not self.backend.partial_submit:
                    self._last_round = frozenset(keys)
                self._recoveries = 0
                if next_step is not None:
                    await self._deliver(next_step)
        finally:
            self._submitting = False

    async def _batch(self) -> tuple[Step, Mapping[str, Any], list[Key]]:
        keys = list(self._ready) if self.backend.partial_submit else list(
            dict.fromkeys(self._step_keys))
        results = [r for k in keys for r in (self._ready.pop(k), *self._repeats.pop(k, ()))]
        assert self._step is not None
        step = self._step
        dialect = self.backend.dialect
        limits = dialect.limits if isinstance(dialect, Dialect) else DialectLimits()
        body = dialect.write_results(answered_once(limits, results))
        if not self.backend.lists_pending:
            self._saved = (step, body)
            await self.checkpoints.sending(self.backend, self.turn_index, step, body)
        return step, body, keys

    def _resubmit(self) -> None:
        """Send the saved answer again (the backend could not tell whether it landed)."""
        assert self._saved is not None
        self._step = self._saved[0]
        self._resend = True
        if not self._submitting:
            self._submitting = True
            self._spawn(self._submit(claimed=True))

    # ------------------------------------------------------------------ recovery
    async def _recover(self, error: BaseException) -> Step | None:
        """After a failure: read the state again, answer what is pending (the store replays
        what already ran), resubmit; or resend the saved answer where the state cannot be
        read. Ends the turn ``failed`` when the error is not one to recover from."""
        if isinstance(error, UsageError):
            raise error
        if isinstance(error, ReplyLostError) or not self.backend.retryable(error):
            if not isinstance(error, BackendError):
                raise error
            return Step("failed", error=str(error), detail=error)
        self._recoveries += 1
        policy = self.settings.recovery
        if self._recoveries > policy.max_attempts:
            raise ServeError(f"{self.backend.dialect.name}: conversation "
                             f"{self.backend.conversation}: gave up after "
                             f"{policy.max_attempts} recoveries; last error: {error}",
                             status=getattr(error, "status", None),
                             transcript=self.transcript) from error
        log.warning("%s: conversation %s: %s; recovering (attempt %d)",
                    self.backend.dialect.name, self.backend.conversation, error,
                    self._recoveries)
        await asyncio.sleep(policy.delay(self._recoveries, None))
        try:
            state = await self.backend.state()
        except Exception as exc:
            self._fail(exc)
            return None
        if self.backend.streams and self._reader is None:
            self._start_reader()
        if state is None:
            if self._saved is None:
                return Step("failed", error=f"{error} (the backend cannot tell what is "
                            "pending, and no answer was waiting to be resent)", detail=error)
            self._resubmit()
            return None
        fresh = state if state.fresh else Step(
            state.status, state.payload, state.reply, state.error, state.detail, True,
            state.deadline, state.margin)
        return await self._on_step(fresh)

    # ------------------------------------------------------------------ plumbing
    async def _settle(self, final: Step) -> Step:
        """Let calls in flight finish (their results are stored) before the turn ends."""
        pending = [t for t in self._tasks if t is not self._reader]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if final.status == "completed" or not self.backend.lists_pending:
            await self.checkpoints.done(self.backend)
        return final

    async def _stop(self) -> None:
        """The turn is over: stop its calls and submissions. The reader goes on (a streaming
        backend's stream serves every turn; `close` stops it)."""
        tasks = [t for t in self._tasks if not t.done() and t is not self._reader]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks = {self._reader} if self._reader is not None else set()
        self._inflight.clear()
        self._ready.clear()
        self._repeats.clear()
        self._step, self._step_keys, self._saved = None, [], None
        self._submitting, self._sending, self._resend = False, _NONE, False
        self._inbox = _Inbox()

    async def close(self) -> None:
        """The conversation is over for this driver: stop reading, and whatever still runs."""
        await self._stop()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        self._tasks.clear()

    def _note_conversation(self) -> None:
        if self.backend.conversation and not self.transcript.conversation:
            self.transcript.conversation = self.backend.conversation
