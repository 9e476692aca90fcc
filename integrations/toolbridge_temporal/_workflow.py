"""`ConversationWorkflow`: one served conversation, as durable steps.

The loop is the driver's (`toolbridge.serve`'s `Conversation`), with each wait an activity:

==========================  ============================================================
driver                      workflow
==========================  ============================================================
``turn`` → ``open``         ``open`` activity for a new conversation (created empty where
                            the backend can: its id is in the history before any send)
``turn`` → ``send``         ``send`` activity; after a lost worker or a recoverable error,
                            ``deliver`` (`Backend.sent`: go on with the turn, or send it;
                            never sent twice: a backend that cannot tell ends the turn)
``serve`` → ``resume``      ``resume`` activity (no messages: answer what waits)
``_start_calls``            one ``call`` activity per call, all of a step at once
``_submit``                 ``submit`` activity with the step's results together
reader / submit's answer    the step the ``send`` / ``submit`` activity returns
``_recover``                on a retryable failure (a worker lost counts as one): wait,
                            ``state`` activity, answer its calls again (the store replays
                            what already ran) or resend the same results when the backend
                            cannot list what is pending
``max_rounds``              the same limit, per turn
==========================  ============================================================

Workflow code only schedules: every read, write and handler runs in an activity, so replay is
deterministic. History stays bounded: past `FleetSettings.max_history` events the workflow
continues as new between two steps, carrying the turn, the step and the cursor.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import replace
from datetime import timedelta
from typing import Any, NoReturn

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.exceptions import TimeoutError as ActivityTimeout

from ._messages import (
    CallRequest,
    Carried,
    ConversationInput,
    ConversationRequest,
    Outcome,
    Progress,
    StepData,
)

with workflow.unsafe.imports_passed_through():
    from toolbridge.model import ToolCall, ToolResult
    from toolbridge.serve import message_key

__all__ = ["ConversationWorkflow"]

_CONVERSATION = "toolbridge.conversation"
_CALL = "toolbridge.call"
_AWAITING = "AwaitingApproval"  # the call activity's failure type (`_activities.AWAITING`)
_ONCE = RetryPolicy(maximum_attempts=1)
_SUBMITTED_KEPT = 512


class _Ended(Exception):
    def __init__(self, status: str, error: str | None) -> None:
        super().__init__(error or status)
        self.status, self.error = status, error


class _Failed(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


_RECOVERABLE = ("Retryable", "Lost")


def _awaiting(error: ActivityError) -> bool:
    """Whether the call activity failed because its call waits for a person."""
    cause = error.cause
    return isinstance(cause, ApplicationError) and cause.type == _AWAITING


def _failure(error: ActivityError) -> _Failed:
    """The kind of an activity's failure: the activity's own (`ApplicationError`), or
    ``Lost`` (its worker died or hung: it timed out), or ``Retryable``."""
    cause = error.cause
    if isinstance(cause, ApplicationError):
        return _Failed(cause.type or "Bug", cause.message)
    kind = "Lost" if isinstance(cause, ActivityTimeout) else "Retryable"
    return _Failed(kind, f"{type(cause).__name__}: {cause}" if cause else str(error))


@workflow.defn(name="toolbridge.Conversation")
class ConversationWorkflow:
    """One conversation on any dialect: send each message, answer every call, until the
    conversation ends or is cancelled (``cancel`` signal; ``progress`` query)."""

    def __init__(self) -> None:
        self._input: ConversationInput | None = None
        self._carried = Carried()
        self._cancelling = False
        self._status = "starting"
        self._conversation = ""
        self._cursor: dict[str, Any] = {}
        self._token = ""
        self._lists_pending = True
        self._recoveries = 0
        self._decisions: dict[str, dict[str, Any] | None] = {}

    @workflow.signal
    def approval(self, call_id: str, decision: dict[str, Any] | None = None) -> None:
        """A call (or an approval request of the backend's, by its request id) waits no more:
        ``decision`` (a `toolbridge.store.Decision`'s fields, e.g. ``{"kind": "deny",
        "message": "..."}``) is stored and the call answered again; without one, the call is
        answered again after a decision taken elsewhere (``toolbox.approvals``,
        ``toolbridge approvals``)."""
        self._decisions[call_id] = decision

    @workflow.signal
    def cancel(self) -> None:
        """Stop at the next step (the calls in flight finish and are stored first)."""
        self._cancelling = True

    @workflow.query
    def progress(self) -> Progress:
        """Where the conversation is."""
        c, given = self._carried, self._input
        return Progress(self._status, self._conversation, c.turn,
                        len(given.messages) if given else 0, c.calls, c.rounds, c.runs,
                        self._cancelling)

    @workflow.run
    async def run(self, given: ConversationInput) -> Outcome:
        """Hold the conversation; how it ended."""
        self._input = given
        c = self._carried = given.carried or Carried()
        self._conversation = c.conversation or given.conversation or ""
        self._cursor, self._token = dict(c.cursor), c.token
        step = c.step
        try:
            if not c.started:
                c.started = True
                if not given.messages:
                    self._status = "resuming"
                    step = await self._step_or_end("resume")
            while True:
                if self._cancelling:
                    return self._end("cancelled", "cancelled by a signal")
                if step is None:
                    if c.turn >= len(given.messages):
                        return self._end("completed")
                    self._status = "sending"
                    step = await self._send(given.messages[c.turn])
                elif step.status == "awaiting_approval" and step.waiting:
                    step = await self._backend_approvals(step)
                elif step.status != "requires_action":
                    c.turn, c.rounds = c.turn + 1, 0
                    if step.reply is not None:
                        c.replies = [*c.replies, step.reply][-100:]
                    if step.status != "completed" or not given.messages:
                        return self._end(step.status, step.error)
                    step = None
                else:
                    c.rounds += 1
                    if c.rounds > given.settings.max_rounds:
                        return self._end("incomplete", (
                            f"the backend asked for calls more than {given.settings.max_rounds}"
                            " rounds in one turn; stopped (raise max_rounds if the agent "
                            "needs more)"))
                    self._status = "answering"
                    results = await self._answer(step)
                    self._status = "submitting"
                    step = await self._submit(step, results)
                if workflow.info().get_current_history_length() > given.settings.max_history:
                    self._continue(given, step)
        except _Ended as ended:
            return self._end(ended.status, ended.error)

    # ------------------------------------------------------------------ steps
    def _continue(self, given: ConversationInput, step: StepData | None) -> NoReturn:
        c = self._carried
        carried = replace(c, step=step, runs=c.runs + 1, conversation=self._conversation,
                          cursor=self._cursor, token=self._token)
        workflow.continue_as_new(replace(given, carried=carried))

    def _end(self, status: str, error: str | None = None) -> Outcome:
        self._status = status
        c = self._carried
        return Outcome(status, self._conversation, list(c.replies), c.calls, error)

    async def _activity(self, action: str, **fields: Any) -> StepData:
        given = self._input
        assert given is not None
        request = ConversationRequest(
            action, given.dialect, given.options, self._conversation or None, self._cursor,
            self._token, submitted=self._carried.submitted, **fields)
        settings = given.settings
        try:
            data: StepData = await workflow.execute_activity(
                _CONVERSATION, request, result_type=StepData,
                start_to_close_timeout=timedelta(seconds=settings.wait_timeout),
                heartbeat_timeout=timedelta(seconds=settings.heartbeat_timeout),
                retry_policy=_ONCE)
        except ActivityError as exc:
            self._token = ""  # the worker dropped (or lost) the backend
            raise _failure(exc) from None
        self._conversation = data.conversation or self._conversation
        self._cursor, self._token = data.cursor, data.token
        self._lists_pending = data.lists_pending
        return data

    async def _step_or_end(self, action: str, **fields: Any) -> StepData:
        try:
            data = await self._activity(action, **fields)
        except _Failed as failed:
            self._raise(failed)
        if data.status == "unknown":  # nothing waits (a backend that cannot list)
            return StepData("completed")
        return data

    def _raise(self, failed: _Failed, what: str = "") -> NoReturn:
        if failed.kind == "UsageError":
            raise ApplicationError(str(failed), type="UsageError", non_retryable=True)
        raise _Ended("failed", f"{what}{failed}")

    async def _send(self, message: str) -> StepData:
        """Send the turn's message. As the driver: after a lost worker or a failure to
        recover from, the message may or may not have arrived; ``deliver`` asks the backend
        (`Backend.sent`) and continues the turn, or sends it. Never sent twice."""
        settings = self._input.settings if self._input else None
        assert settings is not None
        action, attempt = "send", 0
        key = message_key(workflow.info().workflow_id, self._carried.turn)
        while not self._conversation:  # made first, its id in the history before any send
            try:
                await self._activity("open")
                break
            except _Failed as failed:  # a second empty conversation holds nothing
                attempt += 1
                if failed.kind not in _RECOVERABLE or attempt > settings.max_recoveries:
                    self._raise(failed, "creating the conversation failed: ")
                await asyncio.sleep(min(settings.recovery_backoff * 2 ** (attempt - 1),
                                        settings.recovery_max_delay))
        attempt = 0
        while True:
            try:
                data = await self._activity(action, message=message, message_key=key)
            except _Failed as failed:
                attempt += 1
                if failed.kind not in _RECOVERABLE or attempt > settings.max_recoveries:
                    self._raise(failed, "sending the user message failed: ")
                self._status = "recovering"
                await asyncio.sleep(min(settings.recovery_backoff * 2 ** (attempt - 1),
                                        settings.recovery_max_delay))
                action = "deliver"
                continue
            return StepData("completed") if data.status == "unknown" else data

    async def _answer(self, step: StepData) -> list[dict[str, Any]]:
        """Results of every call of the step that still needs one, in the step's order."""
        given = self._input
        assert given is not None
        submitted = {(t, i) for t, i in self._carried.submitted}
        calls = [c for c in step.calls if step.fresh or not step.partial_submit
                 or (c["turn"], c["id"]) not in submitted]
        answers = await asyncio.gather(*(self._call(c, step) for c in calls))
        carried = self._carried
        counted = {(t, i) for t, i in carried.counted}
        new = [[c["turn"], c["id"]] for c in calls if (c["turn"], c["id"]) not in counted]
        carried.calls += len(new)
        carried.counted = [*carried.counted, *new][-_SUBMITTED_KEPT:]
        return [*step.ready, *answers]

    async def _call(self, call: dict[str, Any], step: StepData) -> dict[str, Any]:
        given = self._input
        assert given is not None
        settings = given.settings
        timeout = step.timeouts.get(call["id"], settings.call_timeout) + settings.call_grace
        attempts, backoff, longest = step.retries.get(call["id"], [5, 1.0, 30.0])
        decision: dict[str, Any] | None = None
        try:
            while True:
                try:
                    answer: dict[str, Any] = await workflow.execute_activity(
                        _CALL, CallRequest(given.dialect, call, given.context, decision),
                        result_type=dict, start_to_close_timeout=timedelta(seconds=timeout),
                        heartbeat_timeout=timedelta(seconds=settings.heartbeat_timeout),
                        retry_policy=RetryPolicy(
                            maximum_attempts=int(attempts),
                            initial_interval=timedelta(seconds=backoff),
                            maximum_interval=timedelta(seconds=longest),
                            non_retryable_error_types=[_AWAITING]))
                    return answer
                except ActivityError as exc:
                    if not _awaiting(exc):
                        raise
                    decision = await self._decision(call["id"], exc)
        except ActivityError as exc:  # attempts used up: this call fails, not the others
            failed = ToolResult.failed(ToolCall.model_validate(call), (
                f"{call['name']} (call {call['id']}) could not be answered after "
                f"{int(attempts)} attempt(s): {_failure(exc)}; it may or may not have run"))
            return failed.model_dump(mode="json")

    async def _decision(self, call_id: str, waiting: ActivityError) -> dict[str, Any] | None:
        """Wait for the ``approval`` signal of ``call_id`` (or its request's expiry, after
        which the call is answered as expired); the decision it carried, if any."""
        self._status = "awaiting_approval"
        cause = waiting.cause
        details = cause.details if isinstance(cause, ApplicationError) else ()
        expires = json.loads(details[0]).get("expires_at") if details else None
        timeout = None if expires is None else max(0.0, expires - workflow.now().timestamp())
        try:
            await workflow.wait_condition(
                lambda: call_id in self._decisions or self._cancelling,
                timeout=None if timeout is None else timedelta(seconds=timeout))
        except asyncio.TimeoutError:
            return None  # expired: answered again, the store denies it as expired
        if call_id not in self._decisions:
            raise _Ended("cancelled", "cancelled by a signal while a call awaited approval")
        self._status = "answering"
        return self._decisions.pop(call_id)

    async def _backend_approvals(self, step: StepData) -> StepData:
        """The backend's own approval items wait: wait for the ``approval`` signal of one of
        them (or the first request's expiry, after which the store denies it as expired),
        then ``resume`` with the decisions signalled; the activity answers the decided ones
        once and reports the step after them (or what still waits)."""
        self._status = "awaiting_approval"
        ids = [str(w.get("call_id")) for w in step.waiting]
        expiries = [float(w["expires_at"]) for w in step.waiting
                    if w.get("expires_at") is not None]
        timeout = (None if not expiries
                   else max(0.0, min(expiries) - workflow.now().timestamp()))
        with contextlib.suppress(asyncio.TimeoutError):  # expired: the resume's claim
            await workflow.wait_condition(                # denies it as expired, sends that
                lambda: self._cancelling or any(i in self._decisions for i in ids),
                timeout=None if timeout is None else timedelta(seconds=timeout))
        decisions = {i: self._decisions.pop(i) for i in ids if i in self._decisions}
        if self._cancelling and not decisions:
            raise _Ended("cancelled", "cancelled by a signal while the backend's approval "
                         "requests waited")
        self._status = "answering"
        return await self._step_or_end("resume", decisions=decisions)

    async def _submit(self, step: StepData, results: list[dict[str, Any]]) -> StepData:
        """Submit the step's results; recover as the driver does when that fails."""
        settings = self._input.settings if self._input else None
        assert settings is not None
        while True:
            try:
                found = await self._activity("submit", step=step, results=results)
            except _Failed as failed:
                if failed.kind not in _RECOVERABLE:
                    self._raise(failed)
                recovered = await self._recover(failed, settings)
                if recovered is None:
                    continue  # resend the same results
                return recovered
            self._recoveries = 0
            keys = [[r["call"]["turn"], r["call"]["id"]] for r in results]
            self._carried.submitted = [*self._carried.submitted, *keys][-_SUBMITTED_KEPT:]
            return found

    async def _recover(self, failed: _Failed, settings: Any) -> StepData | None:
        """The state after a failure (its calls are answered again), or ``None``: resend."""
        self._recoveries += 1
        if self._recoveries > settings.max_recoveries:
            raise _Ended("failed", f"gave up after {settings.max_recoveries} recoveries; "
                         f"last error: {failed}")
        self._status = "recovering"
        await asyncio.sleep(min(settings.recovery_backoff * 2 ** (self._recoveries - 1),
                                settings.recovery_max_delay))
        try:
            state = await self._activity("state")
        except _Failed as again:
            if again.kind not in _RECOVERABLE:
                self._raise(again)
            return await self._recover(again, settings)
        if state.status != "unknown":
            return state
        if self._lists_pending:
            raise _Ended("failed", f"{failed} (the backend cannot tell what is pending)")
        return None
