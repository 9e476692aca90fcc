"""The activities: a conversation's I/O (send, deliver, resume, submit, state) and one tool
call each.

A conversation activity does what the driver's `Conversation` does between two of its waits:
``send`` is `Conversation.turn`'s send, ``deliver`` its recovery of a send whose outcome is
unknown (`Backend.sent`: continue the turn, or send), ``submit`` is `_submit` (the body the
dialect writes, then, for a streaming backend, the stream read until a step with calls not
yet answered, as the driver's reader skips them), ``state`` is the read of `_recover`. A
call activity runs the execution pipeline for one call (`Toolbox.aexecute`): the result
store decides whether the handler runs, so a redelivered activity is answered from the
store, and a side-effecting call started by a worker that died is reconciled, never run
again.

Errors reach the workflow as `ApplicationError` types: ``UsageError`` (never retried),
``Final`` (the turn ends ``failed``, as `Backend.retryable` says), ``Retryable`` (recover).
A lost worker reaches it as a timeout (``Lost``: recover).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from toolbridge import BackendError, ToolCall, ToolResult, UsageError
from toolbridge.errors import AwaitingApproval, ReplyLostError
from toolbridge.plugin import Backend, Step, StreamingBackend
from toolbridge.serve import BackendItems, refuse_late, tool_timeout
from toolbridge.store import Decision, StoreKey
from toolbridge.tools import ToolRetry, heartbeats

from ._backends import Backends
from ._messages import CallRequest, ConversationRequest, StepData

if TYPE_CHECKING:
    from toolbridge import Toolbox

__all__ = ["CALL", "CONVERSATION", "Activities"]

CONVERSATION = "toolbridge.conversation"
CALL = "toolbridge.call"
_DEFAULT_RETRY = ToolRetry()


@asynccontextmanager
async def _heartbeating() -> AsyncIterator[None]:
    """Heartbeat the current activity while the block runs (a third of its timeout apart)."""
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        yield
        return
    interval = max(timeout.total_seconds() / 3, 0.05)

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(interval)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def _heartbeat_hook() -> Callable[..., None]:
    """`ToolContext.heartbeat` for this activity, callable from any thread."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()

    def hook(*details: Any) -> None:
        loop.call_soon_threadsafe(lambda: activity.heartbeat(*details), context=context)

    return hook


def _error(backend: Backend, exc: BaseException) -> ApplicationError:
    if isinstance(exc, ApplicationError):
        return exc
    name = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, UsageError):
        return ApplicationError(name, type="UsageError", non_retryable=True)
    if isinstance(exc, ReplyLostError) or not backend.retryable(exc):
        kind = "Final" if isinstance(exc, BackendError) else "Bug"
        return ApplicationError(name, type=kind, non_retryable=True)
    return ApplicationError(name, type="Retryable", non_retryable=True)


def _key(call: ToolCall) -> tuple[str, str]:
    return (call.turn, call.id)


class Activities:
    """The activities one worker serves, for ``toolbox`` (see the module docs)."""

    def __init__(self, toolbox: Toolbox, *, keep: int = 1024,
                 dialect_options: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.toolbox = toolbox
        self.backends = Backends(toolbox, keep=keep, local=dialect_options)

    def all(self) -> list[Callable[..., Any]]:
        """The activity functions, to give to a `temporalio.worker.Worker`."""
        return [self.conversation, self.call]

    async def aclose(self) -> None:
        """Close the worker's backends and connections."""
        await self.backends.aclose()

    # ------------------------------------------------------------------ conversation I/O
    @activity.defn(name=CONVERSATION)
    async def conversation(self, request: ConversationRequest) -> StepData:
        """One conversation step: send, resume, submit or read the state."""
        async with _heartbeating():
            backend, kept = self.backends.take(request.token, request.dialect,
                                               request.options, request.conversation,
                                               request.cursor)
            try:
                step = await self._settle(backend, await self._advance(backend, kept, request),
                                          request)
                data = self._data(backend, step, request)
            except asyncio.CancelledError:
                await backend.aclose()
                raise
            except Exception as exc:
                await backend.aclose()
                raise _error(backend, exc) from None
            if step is not None and not step.final:
                data.token = await self.backends.keep_for_next(backend)
            else:
                await backend.aclose()
            return data

    async def _advance(self, backend: Backend, kept: bool, request: ConversationRequest
                       ) -> Step | None:
        action = request.action
        skip = {(t, i) for t, i in request.submitted}
        if request.message_key:
            backend.message_key = request.message_key
        if action == "open":  # a new conversation, created empty before its first message
            await backend.open()
            return None
        if action == "send":
            if request.message is None:
                raise UsageError("send: no message")
            step = await backend.send(request.message)
            return step if step is not None or not backend.streams else await self._next(
                backend, skip)
        if action == "deliver":  # after a send whose worker was lost, or which failed
            step = await self._deliver(backend, request.message)
            return step if step is not None or not backend.streams else await self._next(
                backend, skip)
        if action == "resume":
            step = await backend.resume()
            return step if step is not None or not backend.streams else await self._next(
                backend, skip)
        if action == "state":
            return await backend.state()
        if action != "submit" or request.step is None:
            raise UsageError(f"unknown conversation action {action!r}")
        step = Step(request.step.status, request.step.payload)  # type: ignore[arg-type]
        results = self._results(backend, step, request.results)
        found = await backend.submit(step, backend.dialect.write_results(results))
        if found is not None:
            return found
        if not backend.streams:
            raise UsageError(f"{backend.dialect.name}: submit gave no next step, and the "
                             "backend does not stream")
        return await self._next(backend, skip | {_key(r.call) for r in results})

    async def _settle(self, backend: Backend, step: Step | None, request: ConversationRequest
                      ) -> Step | None:
        """A step that waits only on the backend's own approval items is settled as the
        driver settles it (`BackendItems`: claimed in the store, the decided ones answered
        once; the decisions the workflow was signalled stored first): the step after them,
        or an ``awaiting_approval`` one listing the requests that wait."""
        items = BackendItems(backend, self.toolbox)
        skip = {(t, i) for t, i in request.submitted}
        while step is not None and not step.final:
            pending = backend.dialect.read_calls(step.payload or {})
            if not pending.unhandled or any(_key(c) not in skip for c in pending.calls):
                return step
            approvals, others = items.read(pending.unhandled)
            if others or not approvals:
                return step  # `_data` says what else it waits on
            for approval in approvals:
                if approval.request_id in request.decisions:
                    _store_decision(self.toolbox, items.key(approval),
                                    request.decisions[approval.request_id])
            following = await items.settle(step, approvals)
            if following is None and backend.streams:
                following = await self._next(backend, skip)
            step = following
        return step

    @staticmethod
    async def _deliver(backend: Backend, message: str | None) -> Step | None:
        """The turn ``message`` started if it arrived (`Backend.sent`), else the turn of
        sending it now; never sent twice: a backend that cannot tell ends the turn."""
        if message is None:
            raise UsageError("deliver: no message")
        arrived = await backend.sent(message)
        if arrived is None:
            raise ApplicationError(
                f"{backend.dialect.name}: the backend cannot tell whether the user message "
                "arrived (it lists no messages), so it is not sent again", type="Final",
                non_retryable=True)
        return await (backend.resume() if arrived else backend.send(message))

    @staticmethod
    def _results(backend: Backend, step: Step, given: Sequence[dict[str, Any]]
                 ) -> list[ToolResult]:
        """The results, each on its call as the dialect reads it from the step (with the
        dialect's correlation, which JSON does not carry)."""
        calls = {_key(c): c for c in backend.dialect.read_calls(step.payload or {}).calls}
        results = []
        for data in given:
            result = ToolResult.model_validate(data)
            call = calls.get(_key(result.call))
            results.append(result if call is None else result.model_copy(update={"call": call}))
        return results

    @staticmethod
    async def _next(backend: Backend, skip: set[tuple[str, str]]) -> Step:
        """The next step of a streaming backend that is not only calls already answered."""
        assert isinstance(backend, StreamingBackend)
        while True:
            step = await backend.next()
            if step.final or step.fresh:
                return step
            pending = backend.dialect.read_calls(step.payload or {})
            if any(_key(c) not in skip for c in pending.calls) or pending.unhandled:
                return step

    def _data(self, backend: Backend, step: Step | None, request: ConversationRequest
              ) -> StepData:
        flags: dict[str, Any] = {
            "conversation": backend.conversation, "cursor": backend.checkpoint(),
            "partial_submit": backend.partial_submit, "lists_pending": backend.lists_pending}
        if step is None:
            return StepData("unknown", **flags)
        if step.final:
            waiting = [dict(d) for d in step.detail] if (
                step.status == "awaiting_approval" and isinstance(step.detail, list)) else []
            return StepData(step.status, reply=step.reply, error=step.error, fresh=step.fresh,
                            waiting=waiting, **flags)
        pending = backend.dialect.read_calls(step.payload or {})
        skip = {(t, i) for t, i in request.submitted}
        if pending.unhandled and all(_key(c) in skip for c in pending.calls):
            kinds = ", ".join(sorted({str(a.get("type")) for a in pending.unhandled}))
            return StepData("incomplete", error=f"waits on action(s) left to the caller: "
                            f"{kinds}", **flags)
        calls, ready = refuse_late(step, pending.calls, self.toolbox)
        data = StepData(step.status, payload=dict(step.payload or {}), fresh=step.fresh,
                        calls=[c.model_dump(mode="json") for c in calls],
                        ready=[r.model_dump(mode="json") for r in ready], **flags)
        for call in calls:
            timeout = tool_timeout(self.toolbox, call.name)
            if timeout is not None:
                data.timeouts[call.id] = timeout
            tool = self.toolbox.get(call.name) if call.name in self.toolbox else None
            retry = (tool.retry if tool is not None else None) or _DEFAULT_RETRY
            data.retries[call.id] = [retry.max_attempts, retry.backoff, retry.max_delay]
        return data

    # ------------------------------------------------------------------ tool calls
    @activity.defn(name=CALL)
    async def call(self, request: CallRequest) -> dict[str, Any]:
        """Answer one call through the pipeline (the store decides whether it runs)."""
        call = ToolCall.model_validate(request.call)
        if request.decision is not None:
            _store_decision(self.toolbox, StoreKey(call.dialect, call.conversation, call.turn,
                                                   call.id), request.decision)
        async with _heartbeating():
            with heartbeats(_heartbeat_hook()):
                running = asyncio.ensure_future(
                    self.toolbox.aexecute([call], context=request.context))
                try:
                    results = await asyncio.shield(running)
                except asyncio.CancelledError:
                    # Temporal gave this attempt up (a heartbeat timeout: the worker was too
                    # slow, or it is stopping). The call still finishes and is stored, so the
                    # next attempt is answered from the store, not left waiting on a claim.
                    await asyncio.gather(running, return_exceptions=True)
                    raise
                except AwaitingApproval as waiting:  # the workflow waits for its signal
                    raise ApplicationError(str(waiting), waiting.requests[0].to_json(),
                                           type=AWAITING, non_retryable=True) from None
        return results[0].model_dump(mode="json")


AWAITING = "AwaitingApproval"
"""The failure type of a call activity whose call waits for a person's decision."""


def _store_decision(toolbox: Toolbox, key: StoreKey, decision: Mapping[str, Any] | None
                    ) -> None:
    """Store a decision the workflow was signalled, once: a repeated attempt finds it
    decided (or consumed) already, which is no error; ``None``: decided elsewhere."""
    if decision is None:
        return
    try:
        toolbox.approvals.decide(key, Decision(**decision))
    except UsageError as exc:
        activity.logger.info("call %s: the signalled decision was not stored: %s",
                             key.call_id, exc)
