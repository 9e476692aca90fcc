"""The execution pipeline: every payload, whatever its entry point, takes the same steps.

read → plan every call (errors become results) → claim the keyed calls in one store
operation → run them through an executor → (each call shapes, size-checks and, with side
effects, records itself) → record the other results in one store operation → write.

A call travels as a `CallRecord` (its fields, then its answer's); `ToolCall` and `ToolResult`
are made from it only when asked for (`run` and `execute` return them, hooks and
`ToolContext` take them, a dialect without record-level methods reads and writes them).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import AwaitingApproval
from ..model import ToolCall, ToolResult
from ..plugin import Dialect, PendingCalls, get_dialect, plugin_manager
from ..plugin._dialect import record_forms
from ..plugin._record import CallRecord
from ..store import ApprovalRequest
from ..telemetry._state import active as telemetry_active
from . import _approvals as approvals
from . import _threads
from ._call import PlannedCall
from ._executors import Executor, ThreadExecutor
from ._journal import Journal
from ._limits import SizePolicy
from ._loops import no_running_loop
from ._output import default_error_formatter
from ._payload import to_data
from ._plan import answered_once, plan
from ._replay import reconcile, still_running, wait_limit
from ._shared import Columns, Payload

if TYPE_CHECKING:
    import pluggy

    from ..store import ResultStore
    from ..tools import RegisteredTool

__all__ = ["Pipeline"]

log = logging.getLogger("toolbridge")

_DEFAULT_EXECUTOR = ThreadExecutor()


class Pipeline:
    """Answers calls of ``tools`` (a live mapping: tools added later are found) with these
    settings; `toolbridge.Toolbox` holds one, and its entry points are this one's."""

    def __init__(self, tools: Mapping[str, RegisteredTool], *, store: ResultStore | None = None,
                 max_concurrency: int = 16, timeout: float | None = None,
                 error_formatter: Callable[[BaseException], str] = default_error_formatter,
                 oversize: SizePolicy = "error", executor: Executor | None = None,
                 approval_expiry: float | None = None) -> None:
        self.tools = tools
        self.store = store
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.error_formatter = error_formatter
        self.oversize: SizePolicy = oversize
        self.executor = executor
        """``None``: `ThreadExecutor`."""
        self.approval_expiry = approval_expiry
        """Seconds an approval request waits for a decision; ``None``: no limit."""

    # ------------------------------------------------------------------ entry points
    def handle(self, dialect: str | Dialect, payload: Any, extra: Mapping[str, Any],
               conversation: str | None = None) -> dict[str, Any]:
        """Answer every pending call of a backend payload: the body that submits them.

        ``conversation`` names the caller's conversation, for wires that carry none
        (`Dialect.read_calls_in`)."""
        no_running_loop()
        d, records = _read(dialect, payload, conversation)
        return _write(d, records, self._run(records, extra, d))

    async def ahandle(self, dialect: str | Dialect, payload: Any, extra: Mapping[str, Any],
                      conversation: str | None = None) -> dict[str, Any]:
        """`handle` on the running event loop."""
        d, records = _read(dialect, payload, conversation)
        return _write(d, records, await self._arun(records, extra, d))

    def run(self, calls: Sequence[ToolCall], extra: Mapping[str, Any],
            dialect: Dialect | None = None) -> list[ToolResult]:
        """Answer ``calls``, one result each, in order."""
        no_running_loop()
        records = [CallRecord.of(call) for call in calls]
        return _every_one(records, self._run(records, extra, dialect))

    async def arun(self, calls: Sequence[ToolCall], extra: Mapping[str, Any],
                   dialect: Dialect | None = None) -> list[ToolResult]:
        """`run` on the running event loop."""
        records = [CallRecord.of(call) for call in calls]
        return _every_one(records, await self._arun(records, extra, dialect))

    # ------------------------------------------------------------------ the steps
    def _payload(self, extra: Mapping[str, Any], dialect: Dialect | None = None) -> Payload:
        payload = Payload(self.store, self.timeout, self.max_concurrency, self.error_formatter,
                          self.oversize, _hooks(), extra)
        instruments = telemetry_active()
        if instruments is not None:
            payload.spans = instruments.calls(dialect.name if dialect is not None else "")
        return payload

    def _run(self, calls: Sequence[CallRecord], extra: Mapping[str, Any],
             dialect: Dialect | None) -> list[PlannedCall]:
        """Answer every record of ``calls``; the planned ones (those not decided by the plan)."""
        payload = self._payload(extra, dialect)
        planned = self._run_payload(payload, calls, extra, dialect)
        if payload.spans is not None:
            payload.spans.finish([r.result() for r in calls], planned)
        return planned

    def _run_payload(self, payload: Payload, calls: Sequence[CallRecord],
                     extra: Mapping[str, Any], dialect: Dialect | None) -> list[PlannedCall]:
        planned = plan(payload, self.tools, calls, extra, dialect)
        if not planned:
            return planned  # every one decided
        executor = self.executor or _DEFAULT_EXECUTOR
        concurrency = self.max_concurrency
        store = self.store
        todo = planned
        if payload.approvals:
            approvals.prepare(planned, store, self.approval_expiry)
            todo = [pc for pc in planned if pc.record.success is None]
        if store is None:
            executor.run(todo, concurrency)
            return planned
        journal = payload.journal = Journal(store, concurrency)
        try:
            run, held = self._claim(journal, todo, payload.columns if todo is planned else None)
            waited, delay = 0.0, 0.002
            while True:
                if journal.reconciling:  # settle those first; the others have no result yet
                    for pc in run:
                        if pc.resumed and pc.tool.reconciles:
                            reconcile(pc)
                    run = [pc for pc in run if pc.record.success is None]
                if run:
                    executor.run(run, concurrency)
                if not held:
                    break
                journal.flush()  # what ran is stored before waiting for other workers
                time.sleep(delay)
                waited, delay = waited + delay, min(delay * 2, 0.1)
                held = _given_up(held, waited)
                run, held = self._claim(journal, held)
        finally:
            journal.finish(planned)
        return planned

    async def _arun(self, calls: Sequence[CallRecord], extra: Mapping[str, Any],
                    dialect: Dialect | None) -> list[PlannedCall]:
        payload = self._payload(extra, dialect)
        planned = await self._arun_payload(payload, calls, extra, dialect)
        if payload.spans is not None:
            payload.spans.finish([r.result() for r in calls], planned)
        return planned

    async def _arun_payload(self, payload: Payload, calls: Sequence[CallRecord],
                            extra: Mapping[str, Any], dialect: Dialect | None
                            ) -> list[PlannedCall]:
        planned = plan(payload, self.tools, calls, extra, dialect)
        if not planned:
            return planned
        executor = self.executor or _DEFAULT_EXECUTOR
        concurrency = self.max_concurrency
        store = self.store
        todo = planned
        if payload.approvals:
            if store is not None and store.blocking:
                await _threads.CALLS.run(concurrency, approvals.prepare, planned, store,
                                         self.approval_expiry)
            else:
                approvals.prepare(planned, store, self.approval_expiry)
            todo = [pc for pc in planned if pc.record.success is None]
        if store is None:
            await executor.arun(todo, concurrency)
            return planned
        threads = concurrency
        journal = payload.journal = Journal(store, threads)
        blocking = store.blocking
        try:
            columns = payload.columns if todo is planned else None
            run, held = (await self._aclaim(journal, todo, columns) if blocking
                         else self._claim(journal, todo, columns))
            waited, delay = 0.0, 0.002
            while True:
                if journal.reconciling:  # settle those first; the others have no result yet
                    for pc in run:
                        if pc.resumed and pc.tool.reconciles:
                            await _threads.CALLS.run(threads, reconcile, pc)
                    run = [pc for pc in run if pc.record.success is None]
                if run:
                    await executor.arun(run, concurrency)
                if not held:
                    break
                await journal.aflush()
                await asyncio.sleep(delay)
                waited, delay = waited + delay, min(delay * 2, 0.1)
                held = _given_up(held, waited)
                run, held = (await self._aclaim(journal, held) if blocking
                             else self._claim(journal, held))
        except BaseException:  # cancelled (or a bug): free the claims now, without awaiting
            journal.finish(planned)
            raise
        if blocking:
            await _threads.CALLS.run(threads, journal.finish, planned)
        else:
            journal.finish(planned)
        return planned

    @staticmethod
    def _claim(journal: Journal, planned: list[PlannedCall], columns: Columns | None = None
               ) -> tuple[list[PlannedCall], list[PlannedCall]]:
        """Claim the keyed calls: the calls to run (in order), and those held elsewhere.
        ``columns``: the plan's, when every one of ``planned`` is keyed."""
        keyed = planned if columns is not None else [pc for pc in planned if pc.key is not None]
        if not keyed:
            return planned, []
        try:
            answers = journal.claim(keyed, columns)
        except Exception as exc:
            journal.unclaimed(keyed, exc)
            return [pc for pc in planned if pc.record.success is None], []
        ordered = _ordered(planned, keyed, *journal.claimed(keyed, answers))
        if journal.expired:
            journal.expire()
        return ordered

    @staticmethod
    async def _aclaim(journal: Journal, planned: list[PlannedCall],
                      columns: Columns | None = None
                      ) -> tuple[list[PlannedCall], list[PlannedCall]]:
        """`_claim` for a blocking store, in a worker thread."""
        return await _threads.CALLS.run(journal.threads, Pipeline._claim, journal, planned,
                                        columns)


def _ordered(planned: list[PlannedCall], keyed: list[PlannedCall], run: list[PlannedCall],
             reconciling: list[PlannedCall], held: list[PlannedCall]
             ) -> tuple[list[PlannedCall], list[PlannedCall]]:
    """The calls to run or reconcile, in the payload's order, and the held ones."""
    if len(keyed) == len(planned) and not reconciling:
        return run, held
    waiting = {id(pc) for pc in held}
    return [pc for pc in planned if pc.record.success is None and id(pc) not in waiting
            and pc.awaiting is None], held


def _given_up(held: list[PlannedCall], waited: float) -> list[PlannedCall]:
    """The held calls still worth waiting for; the others answer that they still run."""
    kept = []
    for pc in held:
        if waited > wait_limit(pc):
            still_running(pc)
        else:
            kept.append(pc)
    return kept


def _every_one(records: list[CallRecord], planned: list[PlannedCall]) -> list[ToolResult]:
    """The records' results, unless calls await approval (their entries are ``None``): then
    `AwaitingApproval` carries them with the requests."""
    results = [record.result() for record in records]
    if None in results:
        raise AwaitingApproval(results, [ApprovalRequest.from_json(pc.awaiting)
                                         for pc in planned if pc.awaiting is not None])
    return results  # type: ignore[return-value]  # every call has its result


def _hooks() -> pluggy.PluginManager | None:
    """The plugin manager when a plugin implements `toolbridge_execute_call` (the core's own
    implementation, which only calls ``invoke``, is always there)."""
    pm = plugin_manager()
    return pm if len(pm.hook.toolbridge_execute_call.get_hookimpls()) > 1 else None


def read_pending(dialect: str | Dialect, payload: Any, conversation: str | None
                 ) -> PendingCalls:
    """What a backend payload (any form `to_data` takes) asks of us (`Toolbox.pending`)."""
    d = get_dialect(dialect)
    data = to_data(payload, d.name)
    return d.read_calls(data) if conversation is None else d.read_calls_in(data, conversation)


def _read(dialect: str | Dialect, payload: Any, conversation: str | None
          ) -> tuple[Dialect, Sequence[CallRecord]]:
    d = get_dialect(dialect)
    pending = record_forms(type(d)).read(d, to_data(payload, d.name), conversation)
    if pending.reason:
        log.info("%s: nothing is pending: %s", d.name, pending.reason)
    if pending.unhandled:
        log.warning("%s: %d required action(s) are not function calls and were left to the "
                    "caller: %s", d.name, len(pending.unhandled),
                    ", ".join(_kind(a) for a in pending.unhandled))
    return d, pending.records


def _write(dialect: Dialect, records: Sequence[CallRecord], planned: list[PlannedCall]
           ) -> dict[str, Any]:
    """The dialect's body of the answered records."""
    answered = [r for r in records if r.success is not None]
    if len(answered) < len(records):  # calls awaiting approval: no result is invented
        log.info("%s: %d call(s) await approval and were not answered", dialect.name,
                 len(records) - len(answered))
    if not (planned and planned[0].payload.distinct_ids):
        answered = answered_once(dialect.limits, answered)
    return record_forms(type(dialect)).write(dialect, answered)


def _kind(action: Mapping[str, Any]) -> str:
    """An action's ``type`` for a log line: any value a backend sent, kept short."""
    kind = action.get("type") if isinstance(action, Mapping) else None
    if not isinstance(kind, str):
        return f"<{type(kind).__name__}>"
    return kind if len(kind) <= 64 else kind[:63] + "…"
