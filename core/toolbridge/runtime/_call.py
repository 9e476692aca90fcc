"""`PlannedCall`: one call ready to run, as an executor sees it.

An executor only decides where and when: it calls `PlannedCall.execute` (a sync handler, in
the thread it runs in), ``await PlannedCall.aexecute()`` (on the running loop), or
`PlannedCall.time_out` when it gives up waiting. The call does the rest: its "started" mark
when it has side effects, the `toolbridge_execute_call` hook chain, the handler, the shaping
and size check of its result, and its record.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Awaitable, Iterator
from typing import TYPE_CHECKING, Any

from .._redact import redact_text
from ..errors import ToolError
from ..model import ToolCall, ToolDefinition, ToolResult, new_result
from . import _threads
from ._approvals import apply as apply_decision
from ._limits import enforce_limits
from ._output import _message, shape
from ._steps import OVERDUE, within
from ._threads import Batch

if TYPE_CHECKING:
    import pluggy

    from ..plugin import Dialect
    from ..plugin._record import CallRecord
    from ..store import StoreKey
    from ..tools import RegisteredTool
    from ._shared import Payload

__all__ = ["PlannedCall", "execute_each"]

log = logging.getLogger("toolbridge.runtime")

Shaped = tuple[bool, Any, "str | None", "str | None"]
"""A result's fields (success, output, error), and its output's JSON text when it is JSON
data."""


class PlannedCall:
    """A call whose tool and arguments are known, on its way through the pipeline. Its
    answer is kept on its `CallRecord` (``record``); `call` and `result` are the public
    models, made when asked for.

    What most calls never change (their claim's owner, an approval, a failure) is a class
    attribute until it is set: a call is ten stores to make."""

    owner: str | None = None
    """The store owner holding the call for this run, once claimed."""
    resumed = 0.0
    """When a worker that is gone had entered the handler (a taken-over claim)."""
    recorded = False
    failure: str | None = None
    """Why the run failed, for telemetry's ``error.type``: the exception's type, or
    ``timeout``."""
    approval: str | None = None
    """The call's approval request (JSON) when a person must decide on it first."""
    awaiting: str | None = None
    """The stored request (JSON) when the call waits for a decision (it has no result)."""
    decision = ""
    """``approved``, ``denied`` or ``answered`` when a decision answered the call."""

    def __init__(self, payload: Payload, index: int, record: CallRecord, tool: RegisteredTool,
                 kwargs: dict[str, Any], arguments: dict[str, Any], dialect: Dialect | None,
                 sure: int, key: StoreKey | None, timeout: float | None) -> None:
        self.payload = payload
        self.index = index
        self.record = record
        self.tool = tool
        self.kwargs = kwargs
        self.arguments = arguments
        """The decoded arguments (what the store's fingerprint is taken on)."""
        self.dialect = dialect
        self.sure = sure
        """The longest text output that surely fits the dialect's limits."""
        self.key = key
        self.timeout = timeout
        """Seconds the call may run (the tool's, else the toolbox's); ``None``: no limit."""

    # ------------------------------------------------------------------ what executors read
    @property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function (run it with `aexecute`)."""
        return self.tool.is_async

    @property
    def inline(self) -> bool:
        """Whether the tool asked to run in the caller's thread (``inline=True``)."""
        return self.tool.inline

    @property
    def definition(self) -> ToolDefinition:
        return self.tool.definition

    @property
    def name(self) -> str:
        """The tool's name, as the call gave it."""
        return self.record.name

    @property
    def call(self) -> ToolCall:
        """The public `ToolCall` (made on first need)."""
        return self.record.call()

    @property
    def result(self) -> ToolResult | None:
        """The public `ToolResult` once answered (made on first need), else ``None``."""
        return self.record.result()

    @property
    def text(self) -> str | None:
        """The output's JSON text, when the runtime encoded it."""
        return self.record.text

    # ------------------------------------------------------------------ running
    def execute(self, linger: bool = False) -> None:
        """Run the call in this thread: the hook chain and a sync handler (an async one, with
        a hook chain, on `Payload.loop`). ``linger``: this thread goes on to run more calls
        of the payload, so a side effect's record may wait for its next "started" mark (or
        the executor's `Journal.flush`)."""
        payload = self.payload
        journal = payload.journal
        logged = self.owner is not None and self.tool.side_effects
        if journal is not None:
            if logged:
                if not journal.start(self):
                    return
            elif journal.pending:
                journal.flush()  # a side effect's result is stored before another handler runs
        hooks, spans = payload.hooks, payload.spans
        if hooks is None and spans is None:  # the handler alone
            answered = self.answer(self._call_sync())
        else:
            token = None if spans is None else spans.start(self)
            made: ToolResult | None = None
            try:
                if hooks is None:
                    shaped = self._call_sync()
                else:
                    shaped, made = self._through_hooks(hooks)
            finally:
                if spans is not None:
                    spans.leave(self, token)
            answered = self.answer(shaped, made)
        if answered and logged and journal is not None:
            journal.completed(self, linger)

    async def aexecute(self) -> None:
        """Run the call on the running loop: await an async handler (within its timeout), or
        call a sync one here. Not used when a plugin wraps calls. Its steps when the handler
        is all there is to await (`bare`): ``await`` `awaited`, then `returned` or `raised`
        (`execute_each`, which awaits them without a coroutine per call)."""
        if self.bare():
            await execute_each(iter((self,)))
            return
        journal = self.payload.journal
        logged = self.owner is not None and self.tool.side_effects
        if journal is not None:
            if logged:
                if not await journal.astart(self):
                    return
            elif journal.pending:
                await journal.aflush()
        spans = self.payload.spans
        token = None if spans is None else spans.start(self)
        try:
            shaped = await self._await_handler() if self.tool.is_async else self._call_sync()
        finally:
            if spans is not None:
                spans.leave(self, token)
        if self.answer(shaped) and logged and journal is not None:
            await journal.acompleted(self)

    def bare(self) -> bool:
        """Whether running the call is awaiting its async handler (within its timeout) and
        nothing else: no span, no journal step before or after it."""
        tool = self.tool
        if not tool.is_async or self.payload.spans is not None:
            return False
        journal = self.payload.journal
        return journal is None or not (journal.pending or (
            self.owner is not None and tool.side_effects))

    def awaited(self) -> Awaitable[Any]:
        """The async handler's run, within the call's timeout (then its value may be
        `OVERDUE`); its outcome goes to `returned` or `raised`."""
        run = self.tool.handler(**self.kwargs)
        timeout = self.timeout
        return run if timeout is None else within(run, timeout)

    def returned(self, value: Any) -> None:
        """The handler returned ``value`` (`awaited`): the call's answer."""
        self.answer(self._timed_out() if value is OVERDUE else shape(self.record.name, value))

    def raised(self, exc: Exception) -> None:
        """The handler raised ``exc`` (`awaited`): the call's error result."""
        self.answer(self._failure(exc))

    def time_out(self) -> None:
        """The executor stopped waiting: the call's result says it timed out."""
        journal = self.payload.journal
        if self.answer(self._timed_out()) and self.owner is not None and (
                journal is not None and self.tool.side_effects):
            journal.completed(self, False)

    def answer(self, shaped: Shaped, result: ToolResult | None = None) -> bool:
        """Make ``shaped`` (within the dialect's size limits) the call's answer, unless it
        already has one (a call that timed out, then returned); whether it did. ``result``:
        the public result those fields are, when there is one."""
        record = self.record
        if record.success is not None:
            return False
        success, output, error, text = shaped
        if success:
            size = len(output) if type(output) is str else None if text is None else len(text)
        else:
            size = len(error or "")
        if size is None or size > self.sure:  # it may not fit: check it against the limits
            limited = self._limited(shaped, result)
            if limited is not None:
                (success, output, error, text), result = limited
        if self.timeout is None:  # nothing else settles it: no timeout to give it up on
            if result is None:
                record.answer(success, output, error, text)
            else:
                record.answer_with(result, text)
            return True
        with self.payload.lock:
            if record.success is not None:
                return False
            if result is None:
                record.answer(success, output, error, text)
            else:
                record.answer_with(result, text)
        return True

    def settle(self, result: ToolResult, text: str | None = None) -> bool:
        """`answer` with a public ``result``."""
        fields = result.__dict__
        return self.answer((fields["success"], fields["output"], fields["error"], text), result)

    def failed(self, error: str) -> None:
        """Settle an error result (a call that could not be run)."""
        self.answer((False, None, error, None))

    def decided(self, decision: str) -> bool:
        """Apply the approval decision (JSON) the claim consumed; whether to run the call."""
        return apply_decision(self, decision)

    # ------------------------------------------------------------------ internals
    def _call_sync(self) -> Shaped:
        try:
            value = self.tool.handler(**self.kwargs)
        except Exception as exc:
            return self._failure(exc)
        return shape(self.record.name, value)

    async def _await_handler(self) -> Shaped:
        try:  # in this task: a handler that never suspends costs no task, no timer
            value = await self.awaited()
        except Exception as exc:
            return self._failure(exc)
        return self._timed_out() if value is OVERDUE else shape(self.record.name, value)

    def _through_hooks(self, hooks: pluggy.PluginManager) -> tuple[Shaped, ToolResult | None]:
        """The hook chain around the handler, and the public result it gave (the answer)."""
        made: list[tuple[ToolResult, str | None]] = []

        def invoke() -> ToolResult:
            success, output, error, text = self._invoke()
            made.append((new_result(call, success, output, error), text))
            return made[-1][0]

        call = self.call
        try:
            result = hooks.hook.toolbridge_execute_call(call=call, tool=self.definition,
                                                        invoke=invoke)
        except Exception as exc:
            log.error("a toolbridge_execute_call hook failed for %s", call.name, exc_info=exc)
            return (False, None, self.payload.format_error(exc), None), None
        if not isinstance(result, ToolResult):
            return (False, None, "a plugin returned no result for this call", None), None
        text = next((t for r, t in made if r is result), None)
        fields = result.__dict__
        return (fields["success"], fields["output"], fields["error"], text), result

    def _invoke(self) -> Shaped:
        """The handler with its timeout, from a hook chain (in a worker thread)."""
        if self.tool.is_async:
            loop = self.payload.loop
            assert loop is not None
            return asyncio.run_coroutine_threadsafe(self._await_handler(), loop).result()
        if self.timeout is None:
            return self._call_sync()
        threads = self.payload.max_concurrency
        batch = Batch(_threads.HANDLERS, [lambda here: self._call_sync()], [self.timeout],
                      [self.record.name], threads)
        if batch.wait(self.timeout) or not batch.give_up(0):
            error = batch.errors[0]
            if error is not None:
                raise error
            return batch.values[0]  # type: ignore[no-any-return]
        return self._timed_out()

    def _timed_out(self) -> Shaped:
        call = self.record
        log.error("tool %s timed out after %g s (call %s)", call.name, self.timeout, call.id)
        self.failure = "timeout"
        return False, None, f"{call.name} timed out after {self.timeout:g} s", None

    def _failure(self, exc: Exception) -> Shaped:
        call = self.record
        self.failure = type(exc).__qualname__
        if isinstance(exc, ToolError):  # a message for the agent: logged briefly
            log.info("tool %s answered an error (call %s): %s", call.name, call.id,
                     redact_text(_message(exc)))
        else:  # the traceback as text, its URLs redacted like the agent's error text
            log.error("tool %s failed (call %s)\n%s", call.name, call.id,
                      redact_text("".join(traceback.format_exception(exc)).rstrip()))
        return False, None, self.payload.format_error(exc), None

    def _limited(self, shaped: Shaped, result: ToolResult | None
                 ) -> tuple[Shaped, ToolResult | None] | None:
        """``shaped`` within the dialect's size limits, by the oversize policy; ``None`` when
        it is within them as it is (or the call has no dialect to limit it)."""
        dialect = self.dialect
        if dialect is None:
            return None
        success, output, error, text = shaped
        if result is None:
            result = new_result(self.call, success, output, error)
        limited = enforce_limits(result, dialect.limits, dialect.name, self.payload.oversize,
                                 text)
        if limited is result:
            return None
        fields = limited.__dict__
        return (fields["success"], fields["output"], fields["error"], None), limited


async def execute_each(pending: Iterator[PlannedCall]) -> None:
    """`PlannedCall.aexecute` of each call ``pending`` gives, one by one; a call whose handler
    is all there is to await (`PlannedCall.bare`) is awaited here by its steps, with no
    coroutine of its own."""
    for call in pending:
        if not call.bare():
            await call.aexecute()
            continue
        try:
            value = await call.awaited()
        except Exception as exc:
            call.raised(exc)
        else:
            call.returned(value)
