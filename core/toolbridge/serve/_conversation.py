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
import uuid
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import (
    AwaitingApproval,
    BackendError,
    ReplyLostError,
    ServeError,
    TurnTimeoutError,
    UsageError,
)
from ..model import ToolCall
from ..plugin import Backend, Step, StreamingBackend
from ._approvals import BackendItems, answered, awaiting_step, keeps
from ._calls import CallTracker
from ._checkpoints import Checkpoints
from ._deadline import refuse_late
from ._keys import message_key
from ._record import CallKey, Recorder, identify
from ._submitter import Submitter
from ._tasks import ConversationTasks

if TYPE_CHECKING:
    from ..toolbox import Toolbox
    from ._settings import DriverSettings
    from ._transcript import Transcript

__all__ = ["Conversation"]

log = logging.getLogger("toolbridge.serve")


class Conversation:
    """Drives one `Backend` with a `Toolbox`, recording into a `Transcript`."""

    __slots__ = ("_calls", "_items", "_record", "_recoveries", "_rounds", "_submitter", "_tasks",
                 "_unsure", "backend", "checkpoints", "handle", "key", "settings", "toolbox",
                 "transcript", "turn_index")

    def __init__(self, backend: Backend, toolbox: Toolbox, transcript: Transcript,
                 settings: DriverSettings, checkpoints: Checkpoints, key: str | None = None
                 ) -> None:
        self.backend = backend
        self.toolbox = toolbox
        self.transcript = transcript
        self.settings = settings
        self.checkpoints = checkpoints
        self.turn_index = 0
        self.key = key
        """The caller's key of the conversation: a successor holding it goes on with it."""
        self.handle = f"key/{key}" if key else f"{backend.conversation or 'new'}/{uuid.uuid4().hex}"
        """The name the message keys derive from (`message_key`): the caller's key, else
        unique to this driver (two drivers of one conversation never share a key)."""
        self._unsure = False
        """A previous driver of the keyed conversation was sending this turn's message: ask
        `sent` before sending it."""
        self._record = Recorder(transcript, settings)
        self._calls = CallTracker(backend)
        self._tasks = ConversationTasks()
        self._submitter = Submitter(backend, checkpoints, self._calls, self._tasks,
                                    self._landed, self._record.sent)
        self._items = BackendItems(backend, toolbox, transcript)
        self._recoveries = 0
        self._rounds = 0

    # ------------------------------------------------------------------ entry points
    async def turn(self, message: str) -> Step:
        """Send ``message`` and answer calls until the turn ends (within the settings'
        ``turn_timeout``); the final step."""
        self.transcript.add("user", message)
        return await self._bounded(self._turn(message))

    async def _turn(self, message: str) -> Step:
        self._tasks.begin()
        if self.backend.streams and self._tasks.reader is None:  # reading while it goes
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
        attempt, arrived = 0, False
        self.backend.message_key = message_key(self.handle, self.turn_index)
        while True:
            told: bool | None
            try:
                if self._unsure:  # a previous driver was sending it: did it arrive?
                    told = await self.backend.sent(message)
                    if told is None:
                        raise BackendError(f"{self.backend.dialect.name}: a previous driver "
                                           "was sending this message, and the backend cannot "
                                           "tell whether it arrived; it is not sent again")
                    self._unsure, arrived = False, told
                if arrived:  # the turn it started goes on (a failure here: ask again)
                    return await self.backend.resume()
                if self.key is not None:  # durable before the conversation is made
                    await self.checkpoints.messaging(self.backend, self.key, self.turn_index)
                if not self.backend.conversation:  # created empty first, where it can be
                    await self.backend.open()
                    self._note_conversation()
                    if self.key is not None and self.backend.conversation:  # its id, first
                        await self.checkpoints.messaging(self.backend, self.key,
                                                         self.turn_index)
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
                    told = await self.backend.sent(message)
                except BackendError:
                    told = None
                if told is None:
                    raise
                arrived = told

    async def serve(self) -> Step:
        """Answer what the conversation waits for until it is idle, within the settings'
        ``turn_timeout`` (or forever, for a backend that is `StreamingBackend.watching`);
        the final step."""
        backend = self.backend
        if isinstance(backend, StreamingBackend) and backend.watching:
            return await self._serve()
        return await self._bounded(self._serve())

    async def _serve(self) -> Step:
        first = await self.backend.resume()
        self._note_conversation()
        return await self._drive(first)

    async def resume_keyed(self) -> None:
        """Go on where a previous driver of the conversation held under `key` stopped: its
        cursor (the conversation's id) and turn; that turn's message is asked about first."""
        found = None if self.key is None else await self.checkpoints.keyed(self.backend,
                                                                           self.key)
        if found is None:
            return
        self.turn_index, cursor = found
        self.backend.restore(cursor)
        self._unsure = True
        self._note_conversation()
        log.info("%s: going on with conversation %s (key %s) at turn %d",
                 self.backend.dialect.name, self.backend.conversation or "(new)", self.key,
                 self.turn_index + 1)

    async def keyed_turn_ended(self) -> None:
        """A turn of the keyed conversation ended: a successor goes on from the next one."""
        if self.key is not None:
            await self.checkpoints.messaging(self.backend, self.key, self.turn_index)

    async def end_keyed(self) -> None:
        """The keyed conversation ended here: a later driver under its key starts anew."""
        if self.key is not None:
            await self.checkpoints.ended(self.backend, self.key)

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
            self._submitter.saved = (step, answer)
            return await self._bounded(self._drive(None, resend=True))
        return await self._bounded(self._drive(step))

    async def _bounded(self, work: Coroutine[Any, Any, Step]) -> Step:
        """``work``'s final step, or a ``failed`` one with `TurnTimeoutError` once the turn
        took ``turn_timeout`` seconds (its tasks are stopped; what ran is in the store)."""
        limit = self.settings.turn_timeout
        if limit is None:
            return await work
        task = asyncio.ensure_future(work)
        try:
            await asyncio.wait({task}, timeout=limit)
        finally:
            if not task.done():  # past the deadline, or this task was cancelled
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if not task.cancelled():
            return task.result()
        error = TurnTimeoutError(
            f"{self.backend.dialect.name}: conversation {self.backend.conversation}: turn "
            f"{self.turn_index + 1} did not end within turn_timeout={limit:g} s; stopped",
            transcript=self.transcript)
        return Step("failed", error=str(error), detail=error)

    def finish_turn(self, final: Step) -> None:
        """Record the turn's reply and move to the next turn."""
        self.turn_index += 1
        self._unsure = False
        if final.reply is not None:
            self.transcript.add("reply", final.reply, final.detail if isinstance(
                final.detail, Mapping) else None)

    # ------------------------------------------------------------------ the turn's task
    async def _drive(self, first: Step | None, *, resend: bool = False) -> Step:
        self._rounds = self._recoveries = 0
        self._tasks.begin()
        if self.backend.streams and self._tasks.reader is None:
            self._start_reader()
        try:
            if resend:
                self._submitter.resubmit(self.turn_index)
            elif first is not None:
                await self._deliver(first)
            elif not self.backend.streams:  # nothing waits, and nothing will arrive
                return await self._settle(Step("completed"))
            while True:
                item = await self._tasks.next()
                if isinstance(item, Step):
                    return await self._settle(item)
                done = await self._recover(item)
                if done is not None:
                    return await self._settle(done)
        finally:
            await self._stop()

    async def _landed(self, step: Step | None) -> None:
        """A submission landed (progress); its answer may carry the next step."""
        self._recoveries = 0
        if step is not None:
            await self._deliver(step)

    # ------------------------------------------------------------------ steps
    def _start_reader(self) -> None:
        backend = self.backend
        assert isinstance(backend, StreamingBackend)

        async def read() -> None:
            try:
                while True:
                    await self._deliver(await backend.next())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._tasks.reader = None
                self._tasks.fail(exc)

        self._tasks.reader = self._tasks.spawn(read())

    async def _deliver(self, step: Step) -> None:
        """Handle a step wherever it arrived (the reader, a submission's answer, a recovery)."""
        done = await self._on_step(step)
        if done is not None:
            self._tasks.end(done)

    async def _on_step(self, step: Step) -> Step | None:
        """Start answering a step's new calls; the final step when the turn ended."""
        if step.final:
            return step
        pending = self.backend.dialect.read_calls(step.payload or {})
        keys = [(c.turn, c.id) for c in pending.calls]
        listed = dict(zip((id(c) for c in pending.calls), identify(pending.calls), strict=True))
        new = self._calls.new(step, pending.calls, keys)
        if len(new) < len(pending.calls):  # a listed call under an id answered before
            running = {id(c) for c in new}
            for call in pending.calls:
                if id(call) not in running and not self._record.seen(listed[id(call)]):
                    self._record.unanswered(call, listed[id(call)])
        if new:
            if any(not self._record.seen(listed[id(c)]) for c in new):
                self._recoveries = 0  # progress: calls never seen before
            if self._calls.new_round(keys):
                self._rounds += 1
            if self._rounds > self.settings.max_rounds:  # a looping agent
                return Step("incomplete", error=f"the backend asked for calls more than "
                            f"{self.settings.max_rounds} rounds in one turn; stopped "
                            "(raise max_rounds if the agent needs more)")
            await self.checkpoints.received(self.backend, self.turn_index, step)
        self._calls.adopt(step, keys, bool(new))
        if new:
            self._start_calls(step, new, listed)
        if pending.unhandled and self._calls.answered(keys):
            approvals, others = self._items.read(pending.unhandled)
            if others:
                kinds = ", ".join(sorted({str(a.get("type")) for a in others}))
                return Step("incomplete", error=f"waits on action(s) left to the caller: "
                            f"{kinds}", detail=[dict(a) for a in pending.unhandled])
            following = await self._items.settle(step, approvals)  # the backend's approvals
            if following is None or following.final:
                return following
            return await self._on_step(following)
        self._submitter.kick(self.turn_index)
        return None

    # ------------------------------------------------------------------ calls
    def _start_calls(self, step: Step, calls: list[ToolCall], keys: dict[int, CallKey]
                     ) -> None:
        for call in calls:
            self._record.call(call, keys[id(call)])
        # Calls whose tool cannot finish before the step's deadline get an error result.
        startable, refused = refuse_late(step, calls, self.toolbox)
        for batch in self._calls.start(startable):
            self._tasks.spawn(self._answer(batch))
        if refused:
            self._calls.take(refused)

    async def _answer(self, calls: list[ToolCall]) -> None:
        """Run a batch through the toolbox; then submit, if nothing else is submitting."""
        started = time.perf_counter()
        waiting = None
        try:
            results = await self.toolbox.aexecute(calls, context=self.settings.context)
        except AwaitingApproval as exc:  # the turn ends once the others are answered
            waiting, results = exc, answered(exc)
            self._calls.dropped(calls)
        except Exception as exc:
            self._calls.dropped(calls)
            self._tasks.fail(exc)
            return
        self._record.ran(results, (time.perf_counter() - started) / max(len(calls), 1))
        self._calls.take(results)
        await self._submitter.submit(self.turn_index)
        if waiting is not None:
            self._tasks.end(awaiting_step(waiting))

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
            self._tasks.fail(exc)
            return None
        if self.backend.streams and self._tasks.reader is None:
            self._start_reader()
        if state is None:
            if self._submitter.saved is None:
                return Step("failed", error=f"{error} (the backend cannot tell what is "
                            "pending, and no answer was waiting to be resent)", detail=error)
            self._submitter.resubmit(self.turn_index)
            return None
        fresh = state if state.fresh else Step(
            state.status, state.payload, state.reply, state.error, state.detail, True,
            state.deadline, state.margin)
        return await self._on_step(fresh)

    # ------------------------------------------------------------------ plumbing
    async def _settle(self, final: Step) -> Step:
        """Let calls in flight finish (their results are stored) before the turn ends."""
        await self._tasks.settle()
        if final.status == "completed" or not (self.backend.lists_pending or keeps(final)):
            await self.checkpoints.done(self.backend)
        return final

    async def _stop(self) -> None:
        """The turn is over: stop its calls and submissions. The reader goes on (a streaming
        backend's stream serves every turn; `close` stops it)."""
        await self._tasks.stop()
        self._calls.clear()
        self._submitter.clear()
        self._record.forget()

    async def close(self) -> None:
        """The conversation is over for this driver: stop reading, and whatever still runs."""
        await self._stop()
        await self._tasks.close()

    def _note_conversation(self) -> None:
        if self.backend.conversation and not self.transcript.conversation:
            self.transcript.conversation = self.backend.conversation
