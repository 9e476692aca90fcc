"""The store's part of a payload: one claim, then its writes grouped into few commits.

A payload of new calls without side effects costs two store transactions: the claim, and
the record of every result at the end. A side-effecting call needs its "started" mark stored
before its handler runs and its result as soon as it returns. A mark is written by the thread
that then runs the handler, in a commit of its own making (never gathered into another
thread's commit, whose end that thread would first have to wake for: a kill between mark and
handler stays as unlikely as the store allows); results wanted meanwhile ride along with it
(group commit), and a thread running calls one after another stores a result with the next
call's mark.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..store import (
    ApprovalRequest,
    StoreCall,
    StoreClaim,
    StoreKey,
    end_owner,
)
from . import _threads
from ._approvals import expire as deny_expired
from ._journal_store import PlannedCall, not_stored, store_operation, warn_side_effects
from ._output import default_error_formatter

if TYPE_CHECKING:
    from ..plugin._record import CallRecord
    from ..store import ResultStore

C = TypeVar("C", bound=PlannedCall)

__all__ = ["COMPLETE_RETRY_PAUSES", "Journal"]

log = logging.getLogger("toolbridge.runtime")

COMPLETE_RETRY_PAUSES = (0.05, 0.25, 1.0)
"""Seconds between the attempts to store results when the store fails (then it is logged)."""
_new_tuple = tuple.__new__  # StoreCall(...), StoredResult(...) without their Python __new__


class Journal:
    """A payload's dealings with the store: claims, "started" marks, results, releases.

    What a payload without side effects never changes is a class attribute until set."""

    pending = False
    """Whether writes wait for the next commit."""
    reconciling = False
    """Whether a claim took over a side effect whose handler a gone worker had entered
    (one to reconcile: not declared ``idempotent``)."""
    _turn: threading.Condition | None = None  # marks waiting to write (made on need)
    _stored: threading.Condition | None = None  # threads waiting for a write
    _queued = 0  # marks waiting to write: the results gathered meanwhile ride along
    _flushing = False
    _gathering = 0  # the generation new writes join
    _written = -1  # the last generation written
    _batch: tuple[Sequence[PlannedCall], list[StoreKey]] | None = None
    """The last `claim_new` batch: its calls and keys (a payload's end stores its results
    with those keys)."""

    def __init__(self, store: ResultStore, threads: int) -> None:
        self.store = store
        self.threads = threads
        self.owners: set[str] = set()
        self._lock = threading.Lock()
        self._completed: list[PlannedCall] = []
        self._released: list[tuple[StoreKey, str]] = []
        self._marked: set[int] = set()  # ids of the calls whose "started" mark was stored
        self._errors: dict[int, Exception] = {}
        self.expired: list[ApprovalRequest] = []
        """Requests a claim found past their expiry, to deny (`expire`) before claiming again."""

    # ------------------------------------------------------------------ claims
    def claim(self, planned: Sequence[PlannedCall],
              columns: tuple[list[StoreKey], list[str], list[dict[str, Any]], bool] | None = None
              ) -> list[StoreClaim]:
        """Claim ``planned`` (keyed calls only) in one store operation: the store's answers.

        Calls that need no approval go as columns (`ResultStore.claim_new`; ``columns``: the
        plan made them, with whether a tool has side effects), the others as `StoreCall`
        tuples (`requests`)."""
        if columns is not None:
            keys, tools, arguments, other = columns
        else:
            keys, tools, arguments = [], [], []
            other = False  # an approval, or a side effect on a store that may warn of it
            for pc in planned:
                keys.append(pc.key)  # type: ignore[arg-type]
                tools.append(pc.record.name)
                arguments.append(pc.arguments)
                if pc.approval is not None or pc.tool.side_effects:
                    other = True
        store = self.store
        if other:
            if any(pc.approval is not None for pc in planned):
                return store.claim(self.requests(planned))
            self._warn(planned)
        self._batch = (planned, keys)
        return store.claim_new(keys, tools, arguments)

    def requests(self, planned: Sequence[PlannedCall]) -> list[StoreCall]:
        """What to claim for ``planned`` (keyed calls only), as `StoreCall` tuples."""
        self._warn(planned)
        return [_new_tuple(StoreCall, (pc.key, pc.record.name, pc.arguments, pc.approval))
                for pc in planned]

    def _warn(self, planned: Sequence[PlannedCall]) -> None:
        store = self.store
        if not (store.durable or store.warned_side_effects):
            effect = next((pc for pc in planned if pc.tool.side_effects), None)
            if effect is not None:
                warn_side_effects(store, effect)

    def claimed(self, planned: Sequence[C], answers: Sequence[StoreClaim]
                ) -> tuple[list[C], list[C], list[C]]:
        """The claim's answers applied: the calls to run, to reconcile, and held elsewhere.

        Replayed and refused calls are settled here.
        """
        first = answers[0] if answers else None
        if first is not None and first[0] == "claimed" and not first[2] and (
                first[5] is None and answers.count(first) == len(answers)):  # all new: in bulk
            owner = first[1]
            self.owners.add(owner)
            for pc in planned:
                pc.owner = owner
            return list(planned), [], []
        run: list[C] = []
        reconcile: list[C] = []
        held: list[C] = []
        owners = self.owners
        for pc, answer in zip(planned, answers, strict=True):
            state = answer[0]
            if state == "claimed":
                pc.owner = owner = answer[1]
                if owner not in owners:
                    owners.add(owner)
                if answer[5] is not None and not pc.decided(answer[5]):
                    continue  # denied or answered (or edited arguments refused): settled
                if answer[2]:
                    pc.resumed = answer[2]
                    if pc.tool.reconciles:
                        reconcile.append(pc)
                        self.reconciling = True
                    else:
                        run.append(pc)
                else:
                    run.append(pc)
            elif state == "completed":
                stored = answer[3]
                assert stored is not None
                pc.record.answer(stored[0], stored[1], stored[2])
                pc.recorded = True
            elif state == "awaiting":
                request = ApprovalRequest.from_json(answer[4] or "")
                if request.expired():  # denied by `expire`; the next claim answers it
                    self.expired.append(request)
                    held.append(pc)
                else:
                    pc.awaiting = answer[4]
            elif state == "reused":
                pc.failed(f"call id {pc.call.id!r} was already used in this turn for a different "
                          "call (another tool or other arguments); this call was not run")
                pc.recorded = True
            else:
                held.append(pc)
        return run, reconcile, held

    def expire(self) -> None:
        """Deny the expired requests the last claims found (their calls claim again)."""
        expired, self.expired = self.expired, []
        for request in expired:
            deny_expired(self.store, request.key, request)

    def unclaimed(self, planned: Sequence[PlannedCall], exc: Exception) -> list[PlannedCall]:
        """The claim failed: side-effecting calls are not run; the rest run unrecorded."""
        log.error("the result store failed to claim %d call(s)", len(planned), exc_info=exc)
        run = []
        for pc in planned:
            if pc.tool.side_effects:
                pc.failed(f"{pc.call.name} was not run: the result store failed "
                          f"({default_error_formatter(exc)})")
                pc.recorded = True
            else:
                pc.key = None
                run.append(pc)
        return run

    # ------------------------------------------------------------------ writes
    def start(self, pc: PlannedCall) -> bool:
        """Store ``pc``'s "started" mark before its handler runs, in a commit this thread
        writes itself (with the results waiting meanwhile); ``False`` (its result then says
        it was not run) when the store failed."""
        error = self._commit(pc)
        if error is None:
            self._marked.add(id(pc))
            return True
        pc.failed(f"{pc.call.name} was not run: the result store failed "
                  f"({default_error_formatter(error)})")
        return False

    def completed(self, pc: PlannedCall, linger: bool) -> None:
        """Store a side effect's result: now, or with the next write (``linger``). A mark
        waiting to be written carries it (the next commit either way): this thread does
        not wait for it, nor writes a commit of its own."""
        with self._lock:
            self._completed.append(pc)
            self.pending = True
            if linger or self._queued:
                return
        self._commit()

    def flush(self) -> None:
        """Store whatever waits."""
        if self.pending:
            self._commit()

    async def astart(self, pc: PlannedCall) -> bool:
        if self.store.blocking:
            return await _threads.CALLS.run(self.threads, self.start, pc)
        return self.start(pc)

    async def acompleted(self, pc: PlannedCall) -> None:
        if self.store.blocking:
            await _threads.CALLS.run(self.threads, self.completed, pc, False)
        else:
            self.completed(pc, False)

    async def aflush(self) -> None:
        if self.store.blocking:
            await _threads.CALLS.run(self.threads, self.flush)
        else:
            self.flush()

    def finish(self, planned: Sequence[PlannedCall]) -> None:
        """Store every result not stored yet and free every claim of a call that has none
        (a side effect whose handler was entered stays started: a re-delivery reconciles
        it); the owners are then done."""
        if not (self.pending or self._flushing or self._completed):
            unrecorded = []
            records = []
            for pc in planned:
                record = pc.record
                if record.success is None:
                    break
                if pc.owner is not None and not pc.recorded:
                    unrecorded.append(pc)
                    records.append(record)
            else:  # the usual end, every call answered: one write, here
                try:
                    if unrecorded:
                        self._write([], unrecorded, [], records)
                finally:
                    for owner in self.owners:
                        end_owner(owner)
                    self.owners.clear()
                    self._batch = None  # it holds the calls: no cycle through this journal
                return
        with self._lock:
            completed = self._completed
            queued = {id(pc) for pc in completed} if completed else ()
            for pc in planned:
                if pc.owner is None or pc.recorded:
                    continue
                if pc.record.success is not None:
                    if id(pc) not in queued:
                        completed.append(pc)
                elif not (pc.tool.side_effects and id(pc) in self._marked):
                    self._released.append((pc.key, pc.owner))  # type: ignore[arg-type]
                    pc.recorded = True
            self.pending = bool(self._completed or self._released)
        try:
            self.flush()
        finally:
            for owner in self.owners:
                end_owner(owner)
            self.owners.clear()
            self._batch = None

    def _commit(self, mark: PlannedCall | None = None) -> Exception | None:
        """Wait until every write gathered so far is stored (writing them, unless another
        thread or a mark waiting for its turn will); the store's error, if it failed. With
        ``mark``: this thread writes the next commit itself, with that call's "started" mark
        (after the write in progress, if any), and returns as soon as it is stored: its caller
        runs the handler next."""
        with self._lock:
            if mark is not None:
                if self._flushing:
                    if self._turn is None:
                        self._turn = threading.Condition(self._lock)
                    self._queued += 1
                    try:
                        while self._flushing:
                            self._turn.wait()
                    except BaseException:  # interrupted: what waited for this mark is woken
                        self._queued -= 1
                        self._woken()
                        raise
                    self._queued -= 1
                return self._flush(mark)
            generation = self._gathering
            while self._written < generation:
                if self._flushing or self._queued:  # that write, or the mark's next, has it
                    if self._stored is None:
                        self._stored = threading.Condition(self._lock)
                    self._stored.wait()
                else:
                    self._flush(None)
            return self._errors.get(generation)

    def _flush(self, mark: PlannedCall | None) -> Exception | None:
        """Write the next commit (with ``mark``, if given) and what is gathered for it; called
        and returning with ``_lock`` held, which is released meanwhile. Then one mark
        waiting for its turn is woken (it writes next, with what its wait gathered), and the
        threads waiting for a write once no mark waits (a mark's thread then goes to its
        handler having woken one thread at most)."""
        self._flushing = True
        taken = self._gathering
        self._gathering += 1
        completed, released = self._completed, self._released
        self._completed, self._released = [], []
        self.pending = False
        self._lock.release()
        error: Exception | None = None
        try:
            error = self._write([] if mark is None else [mark], completed, released)
        finally:
            self._lock.acquire()
            self._flushing = False
            self._written = taken
            if error is not None:
                self._errors[taken] = error
            self._woken()
        return error

    def _woken(self) -> None:
        """A write ended (``_lock`` held): the next mark writes, else the waiters look."""
        if self._queued:
            if not self._flushing:
                self._turn.notify()  # type: ignore[union-attr]
        elif self._stored is not None:
            self._stored.notify_all()

    def _write(self, started: list[PlannedCall], completed: list[PlannedCall],
               released: list[tuple[StoreKey, str]], records: list[CallRecord] | None = None
               ) -> Exception | None:
        """Store marks, results and releases in one store operation (retried when results
        fail): the store's error, if it failed. ``records``: those of ``completed``."""
        write = store_operation(self.store, self.owners, self._batch, started, completed,
                                released, records)
        pauses = iter(COMPLETE_RETRY_PAUSES if completed else ())
        while True:
            try:
                applied = write()
                break
            except Exception as exc:
                pause = next(pauses, None)
                if pause is None:
                    not_stored(completed, exc, len(COMPLETE_RETRY_PAUSES) + 1)
                    return exc
                log.warning("storing %d result(s) failed (%s); retrying in %g s",
                            len(completed), default_error_formatter(exc), pause)
                time.sleep(pause)
        for pc in completed:
            pc.recorded = True
        if not all(applied):
            for pc, done in zip(completed, applied, strict=False):
                if not done:
                    log.warning("call %s of %s was taken over by another worker; its result "
                                "was not stored", pc.call.id, pc.call.name)
        return None
