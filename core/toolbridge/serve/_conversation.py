"""One conversation through the driver: steps in, answers out, one recovery rule.

`Conversation.turn` plays one user message; `Conversation.serve` answers what an existing
conversation waits for. Both run one loop over an inbox fed by the backend's steps (a reader
task for streaming backends), the call batches running through the toolbox, and submissions.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import BackendError, ReplyLostError, ServeError, UsageError
from ..model import ToolCall, ToolResult
from ..plugin import Backend, Step
from ..runtime import output_text
from ._checkpoints import Checkpoints

if TYPE_CHECKING:
    from ..toolbox import Toolbox
    from ._settings import DriverSettings
    from ._transcript import Transcript

__all__ = ["Conversation"]

log = logging.getLogger("toolbridge.serve")

Key = tuple[str, str]
"""(turn, call id): a call of one conversation."""
_KEEP = 1024
"""Submitted calls remembered per conversation (a stale step older than that is answered
from the store again, and the backend refuses the duplicate)."""


class _Done:
    """The end of the loop: how the turn (or the serving) ended."""

    __slots__ = ("step",)

    def __init__(self, step: Step) -> None:
        self.step = step


class Conversation:
    """Drives one `Backend` with a `Toolbox`, recording into a `Transcript`."""

    def __init__(self, backend: Backend, toolbox: Toolbox, transcript: Transcript,
                 settings: DriverSettings, checkpoints: Checkpoints) -> None:
        self.backend = backend
        self.toolbox = toolbox
        self.transcript = transcript
        self.settings = settings
        self.checkpoints = checkpoints
        self.turn_index = 0
        self._inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self._inflight: dict[Key, asyncio.Task[None]] = {}
        self._submitted: dict[Key, None] = {}
        """Calls submitted, oldest first (a set that keeps its order, bounded)."""
        self._recorded: dict[Key, None] = {}
        """Calls whose result the transcript shows (bounded the same way)."""
        self._ready: dict[Key, ToolResult] = {}
        self._step: Step | None = None
        """The latest step with calls (its calls are submitted together unless partial)."""
        self._step_keys: list[Key] = []
        self._submitting: asyncio.Task[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._saved: tuple[Step, Mapping[str, Any]] | None = None
        """The answer being sent, kept (and persisted) when the backend cannot list pending
        calls: resent after a failure."""
        self._recoveries = 0
        self._rounds = 0

    # ------------------------------------------------------------------ entry points
    async def turn(self, message: str) -> Step:
        """Send ``message`` and answer calls until the turn ends; the final step."""
        self.transcript.add("user", message)
        try:
            first = await self.backend.send(message)
        except Exception as exc:
            if isinstance(exc, UsageError) or not isinstance(exc, BackendError):
                raise
            # Never sent twice: the client already retried where that was safe.
            return Step("failed", error=f"sending the user message failed: {exc}",
                        detail=exc)
        self._note_conversation()
        return await self._drive(first)

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

    # ------------------------------------------------------------------ the loop
    async def _drive(self, first: Step | None, *, resend: bool = False) -> Step:
        self._rounds = 0
        self._recoveries = 0
        if self.backend.streams:
            self._start_reader()
        try:
            if resend:
                self._resubmit()
            elif first is not None:
                done = await self._on_step(first)
                if done is not None:
                    return await self._settle(done)
            elif not self.backend.streams:  # nothing waits, and nothing will arrive
                return await self._settle(Step("completed"))
            while True:
                item = await self._inbox.get()
                done = await self._handle(item)
                if done is not None:
                    return await self._settle(done)
        finally:
            await self._stop()

    async def _handle(self, item: tuple[Any, ...]) -> Step | None:
        kind = item[0]
        if kind == "step":
            return await self._on_step(item[1])
        if kind == "answered":
            current = set(self._step_keys)
            for result in item[1]:
                key = (result.call.turn, result.call.id)
                self._inflight.pop(key, None)
                if self.backend.partial_submit or key in current:
                    self._ready[key] = result
            return await self._flush()
        if kind == "submitted":
            _, keys, next_step = item
            self._submitting = None
            self._mark_submitted(keys)
            self._recoveries = 0
            if next_step is not None:
                done = await self._on_step(next_step)
                if done is not None:
                    return done
            return await self._flush()
        if kind == "failed":
            _, error, origin = item
            if origin == "submit":
                self._submitting = None
            elif origin == "next":
                self._reader = None
            return await self._recover(error)
        raise AssertionError(f"unknown inbox item {kind!r}")

    async def _on_step(self, step: Step) -> Step | None:
        """Start answering a step's new calls; the final step when the turn ended."""
        if step.final:
            return step
        pending = self.backend.dialect.read_calls(step.payload or {})
        keys = [(c.turn, c.id) for c in pending.calls]
        if step.fresh:
            for key in keys:
                self._submitted.pop(key, None)
        fresh = [c for c, k in zip(pending.calls, keys, strict=True)
                 if k not in self._inflight and k not in self._submitted and k not in self._ready]
        if fresh:
            if any((c.turn, c.id) not in self._recorded for c in fresh):
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
            self._ready = {k: r for k, r in self._ready.items() if k in set(keys)}
        elif fresh:
            self._step = step
            self._step_keys = keys
        if fresh:
            self._start_calls(step, fresh)
        if pending.unhandled and not self._inflight and not self._ready and all(
                k in self._submitted for k in keys):
            kinds = ", ".join(sorted({str(a.get("type")) for a in pending.unhandled}))
            return Step("incomplete", error=f"waits on action(s) left to the caller: {kinds}",
                        detail=[dict(a) for a in pending.unhandled])
        return await self._flush()

    # ------------------------------------------------------------------ calls
    def _start_calls(self, step: Step, calls: list[ToolCall]) -> None:
        for call in calls:
            if (call.turn, call.id) not in self._recorded:
                self._record_call(call)
        refused, startable = self._refuse_late(step, calls)
        batches = [[c] for c in startable] if self.backend.partial_submit else (
            [startable] if startable else [])
        for batch in batches:
            task = asyncio.create_task(self._answer(batch, step))
            for call in batch:
                self._inflight[(call.turn, call.id)] = task
        if refused:
            self._inbox.put_nowait(("answered", refused, step))

    def _refuse_late(self, step: Step, calls: list[ToolCall]
                     ) -> tuple[list[ToolResult], list[ToolCall]]:
        """Calls whose tool cannot finish before the step's deadline get an error result."""
        if step.deadline is None:
            return [], calls
        left = step.deadline - time.time()
        refused, startable = [], []
        for call in calls:
            estimate = self._estimate(call.name)
            if (estimate or 0.0) + step.margin <= left:
                startable.append(call)
                continue
            refused.append(ToolResult.failed(call, (
                f"{call.name} was not started: {call.turn} expires in {max(left, 0):.0f} s, "
                f"too soon for it to finish (timeout {estimate or 0:g} s plus a "
                f"{step.margin:g} s margin)")))
        for result in refused:
            self._record_result(result, 0.0)
        return refused, startable

    def _estimate(self, name: str) -> float | None:
        if name not in self.toolbox:
            return None
        timeout = self.toolbox.get(name).timeout
        value = timeout if timeout is not None else self.toolbox.timeout
        return float(value) if value is not None else None

    async def _answer(self, calls: list[ToolCall], step: Step) -> None:
        started = time.perf_counter()
        try:
            results = await self.toolbox.aexecute(calls, **self.settings.context)
        except Exception as exc:
            self._inbox.put_nowait(("failed", exc, "calls"))
            return
        seconds = (time.perf_counter() - started) / max(len(calls), 1)
        for result in results:
            self._record_result(result, seconds)
        self._inbox.put_nowait(("answered", results, step))

    def _record_call(self, call: ToolCall) -> None:
        if not self.transcript.keep:
            return
        shown = call.raw_arguments if call.raw_arguments is not None else json.dumps(
            call.arguments, ensure_ascii=False, separators=(",", ":"), default=str)
        data: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
        if call.argument_error is not None:
            data["argument_error"] = call.argument_error
        self.transcript.add("call", f"{call.name}({shown})", data)

    def _record_result(self, result: ToolResult, seconds: float) -> None:
        """The transcript's entry and the progress report, once per call (a call answered
        again after a recovery, from the store, is not shown twice)."""
        key = (result.call.turn, result.call.id)
        if key in self._recorded:
            return
        _remember(self._recorded, key)
        if result.success:
            text = output_text(result.output)
            data: dict[str, Any] = {"id": result.call.id, "success": True,
                                    "output": result.output if not hasattr(
                                        result.output, "model_dump") else text}
        else:
            text = f"error: {result.error}"
            data = {"id": result.call.id, "success": False, "error": result.error}
        self.transcript.add("result", text, data)
        report = self.settings.on_answer
        if report is not None:
            report(self.transcript, result, seconds)

    # ------------------------------------------------------------------ submitting
    async def _flush(self) -> Step | None:
        """Submit what is ready, unless a submission is in flight (one at a time)."""
        if self._submitting is not None or not self._ready or self._step is None:
            return None
        if self.backend.partial_submit:
            keys = list(self._ready)
        else:
            if any(k not in self._ready for k in self._step_keys):
                return None
            keys = list(self._step_keys)
        results = [self._ready.pop(k) for k in keys]
        step = self._step
        body = self.backend.dialect.write_results(results)
        if not self.backend.lists_pending:
            self._saved = (step, body)
            await self.checkpoints.sending(self.backend, self.turn_index, step, body)
        self._submitting = asyncio.create_task(self._submit(step, body, keys))
        return None

    def _resubmit(self) -> None:
        assert self._saved is not None
        step, body = self._saved
        self._step = step
        self._submitting = asyncio.create_task(self._submit(step, body, []))

    async def _submit(self, step: Step, body: Mapping[str, Any], keys: list[Key]) -> None:
        try:
            next_step = await self.backend.submit(step, body)
        except Exception as exc:
            self._inbox.put_nowait(("failed", exc, "submit"))
            return
        self._inbox.put_nowait(("submitted", keys, next_step))

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
            self._inbox.put_nowait(("failed", exc, "state"))
            return None
        if self.backend.streams and self._reader is None:
            self._start_reader()
        if state is None:
            if self._saved is None:
                return Step("failed", error=f"{error} (the backend cannot tell what is "
                            "pending, and no answer was waiting to be resent)", detail=error)
            if self._submitting is None:
                self._resubmit()
            return None
        return await self._on_step(state if state.fresh else Step(
            state.status, state.payload, state.reply, state.error, state.detail, True,
            state.deadline, state.margin))

    # ------------------------------------------------------------------ plumbing
    def _start_reader(self) -> None:
        async def read() -> None:
            try:
                while True:
                    self._inbox.put_nowait(("step", await self.backend.next()))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._inbox.put_nowait(("failed", exc, "next"))

        self._reader = asyncio.create_task(read())

    async def _settle(self, final: Step) -> Step:
        """Let calls in flight finish (their results are stored) before the turn ends."""
        pending = [t for t in {*self._inflight.values(), self._submitting} if t is not None]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if final.status == "completed" or not self.backend.lists_pending:
            await self.checkpoints.done(self.backend)
        return final

    async def _stop(self) -> None:
        tasks = [t for t in (self._reader, self._submitting, *self._inflight.values())
                 if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._reader = self._submitting = None
        self._inflight.clear()
        self._ready.clear()
        self._step, self._step_keys, self._saved = None, [], None
        self._inbox = asyncio.Queue()

    def _mark_submitted(self, keys: list[Key]) -> None:
        """Remember submitted calls (the newest `_KEEP`), to skip them in stale steps."""
        for key in keys:
            _remember(self._submitted, key)

    def _note_conversation(self) -> None:
        if self.backend.conversation and not self.transcript.conversation:
            self.transcript.conversation = self.backend.conversation

    def finish_turn(self, final: Step) -> None:
        """Record the turn's reply and move to the next turn."""
        self.turn_index += 1
        if final.reply is not None:
            self.transcript.add("reply", final.reply, final.detail if isinstance(
                final.detail, Mapping) else None)


def _remember(keys: dict[Key, None], key: Key) -> None:
    """Add ``key`` to an ordered, bounded set (the oldest beyond `_KEEP` are forgotten)."""
    keys[key] = None
    while len(keys) > _KEEP:
        del keys[next(iter(keys))]
