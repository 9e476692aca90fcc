"""The journal's store operations: which one a write is, and what it logs."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..model import ToolCall, ToolResult
from ..store import StoreCompletion, StoredResult, StoreKey

if TYPE_CHECKING:
    from ..plugin._record import CallRecord
    from ..store import ResultStore
    from ..tools import RegisteredTool

__all__ = ["PlannedCall", "not_stored", "store_operation", "warn_side_effects"]

log = logging.getLogger("toolbridge.runtime")

_new_tuple = tuple.__new__  # StoreCompletion(...), StoredResult(...) without their Python __new__


class PlannedCall(Protocol):
    """What the journal reads and sets of a `toolbridge.runtime.PlannedCall`."""

    record: CallRecord
    tool: RegisteredTool
    arguments: dict[str, Any]
    key: StoreKey | None
    owner: str | None
    resumed: float
    recorded: bool
    approval: str | None
    awaiting: str | None

    @property
    def call(self) -> ToolCall: ...

    @property
    def result(self) -> ToolResult | None: ...

    def failed(self, error: str) -> None: ...

    def decided(self, decision: str) -> bool: ...


def store_operation(store: ResultStore, owners: set[str],
                    batch: tuple[Sequence[PlannedCall], list[StoreKey]] | None,
                    started: list[PlannedCall], completed: list[PlannedCall],
                    released: list[tuple[StoreKey, str]], records: list[CallRecord] | None
                    ) -> Callable[[], list[bool]]:
    """The one store operation that writes marks, results and releases: results alone of
    one claim's owner go as records (`ResultStore.complete_claimed`, with the claim's own key
    list when they are its calls), anything else through `ResultStore.write`."""
    if started or released or len(owners) != 1:
        marks = [(pc.key, pc.owner) for pc in started]
        results = [_new_tuple(StoreCompletion, (pc.key, pc.owner, _new_tuple(StoredResult, (
            record.success, record.output, record.error)), record.text))
            for pc in completed for record in (pc.record,)]

        def write() -> list[bool]:
            return store.write(started=marks, completed=results,  # type: ignore[arg-type]
                               released=released)
        return write
    owner = next(iter(owners))
    keys = batch[1] if batch is not None and batch[0] == completed else [
        pc.key for pc in completed]
    fields = [pc.record for pc in completed] if records is None else records

    def complete() -> list[bool]:
        return store.complete_claimed(owner, keys, fields)  # type: ignore[arg-type]
    return complete


def warn_side_effects(store: ResultStore, pc: PlannedCall) -> None:
    """Once per store: a side-effecting tool runs on a store that a restart forgets."""
    store.warned_side_effects = True
    log.warning("tool %s has side effects but the result store is in memory (%s is not "
                "durable): a restart forgets which calls ran; use "
                "Toolbox(store='sqlite:///results.db')", pc.call.name, type(store).__name__)


def not_stored(completed: list[PlannedCall], exc: Exception, attempts: int) -> None:
    for pc in completed:
        pc.recorded = True
        what = ("a re-delivery of it will be answered 'outcome unknown', not run again"
                if pc.tool.side_effects else "a re-delivery of it may run it again")
        log.error("storing the result of %s (call %s) failed %d times; the result was sent to "
                  "the backend, but the store still holds the call as started: %s",
                  pc.call.name, pc.call.id, attempts, what, exc_info=exc)
