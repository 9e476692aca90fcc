"""The runtime's side of the result store: claim a call, replay it, reconcile it, record it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..model import ToolCall, ToolResult, new_result
from ..plugin import Dialect, plugin_manager
from ..store import ResultStore, StoreClaim, StoredResult, StoreKey, end_owner
from ..store._base import fingerprint
from ._output import default_error_formatter

if TYPE_CHECKING:
    from ..tools import RegisteredTool
    from ._view import ToolboxView

__all__ = ["Reconcile", "Run", "Wait", "abandon", "consult", "fingerprint", "reconcile",
           "record", "settle", "still_running", "tool_timeout", "wait_limit", "warn_side_effects"]

log = logging.getLogger("toolbridge.runtime")

COMPLETE_RETRY_PAUSES = (0.05, 0.25, 1.0)
"""Seconds between the attempts to store a result when the store fails (then it is logged)."""


@dataclass
class Run:
    """One call on its way through the pipeline."""

    call: ToolCall
    tool: RegisteredTool
    kwargs: dict[str, Any]
    dialect: Dialect | None
    key: StoreKey | None
    owner: str | None = None


@dataclass(frozen=True)
class Wait:
    """Another live worker runs the call: ask again later."""

    claim: StoreClaim


@dataclass(frozen=True)
class Reconcile:
    """A side-effecting call started in a dead worker: the reconciliation hook answers."""

    claim: StoreClaim


new_tuple = tuple.__new__  # StoreKey(...), StoredResult(...) without their Python __new__


def consult(toolbox: ToolboxView, run: Run) -> ToolResult | Wait | Reconcile | None:
    """Ask the store: ``None`` means run the call (the claim is ours)."""
    store, key, call = toolbox.store, run.key, run.call
    if store is None or key is None:
        return None
    side_effects = run.tool.definition.side_effects
    if side_effects and not store.durable and not store.warned_side_effects:
        warn_side_effects(store, call)
    try:
        claim = store.claim_call(key, call)
    except Exception as exc:
        log.error("the result store failed for %s (call %s)", call.name, call.id, exc_info=exc)
        if side_effects:
            return ToolResult.failed(call, f"{call.name} was not run: the result store failed "
                                           f"({default_error_formatter(exc)})")
        run.key = None
        return None
    if claim.state == "claimed":
        run.owner = claim.owner
        return None
    return settle(toolbox, run, claim)


def warn_side_effects(store: ResultStore, call: ToolCall) -> None:
    """Once per store: a side-effecting tool runs on a store that a restart forgets."""
    store.warned_side_effects = True
    log.warning("tool %s has side effects but the result store is in memory (%s is not "
                "durable): a restart forgets which calls ran; use "
                "Toolbox(store='sqlite:///results.db')", call.name, type(store).__name__)


def settle(toolbox: ToolboxView, run: Run, claim: StoreClaim
           ) -> ToolResult | Wait | Reconcile | None:
    """What a claim that is not ours means for the call: a replay, a wait, or a take-over."""
    store, key, call = toolbox.store, run.key, run.call
    assert store is not None and key is not None
    side_effects = run.tool.definition.side_effects
    if claim.fingerprint != fingerprint(call):
        return ToolResult.failed(call, (
            f"call id {call.id!r} was already used in this turn for a different call (another "
            "tool or other arguments); this call was not run"))
    if claim.state == "completed" and claim.result is not None:
        stored = claim.result
        return new_result(call, stored.success, stored.output, stored.error)
    if claim.state == "abandoned":
        owner = store.take_over(key, claim.owner)
        if owner is not None:
            run.owner = owner
            return Reconcile(claim) if side_effects else None
    return Wait(claim)


def reconcile(run: Run, claim: StoreClaim) -> ToolResult:
    """The answer for a side-effecting call that started in a dead worker: never a re-run."""
    call = run.call
    try:
        answer = plugin_manager().hook.toolbridge_reconcile_call(
            call=call, tool=run.tool.definition, started_at=claim.started_at)
    except Exception as exc:
        log.error("a toolbridge_reconcile_call hook failed for %s", call.name, exc_info=exc)
        answer = None
    if isinstance(answer, ToolResult):
        return answer.model_copy(update={"call": call}) if answer.call is not call else answer
    started = datetime.fromtimestamp(claim.started_at, timezone.utc).isoformat(timespec="seconds")
    return ToolResult.failed(call, (
        f"the outcome of {call.name} (call {call.id}) is unknown: it started at {started} but "
        "its worker stopped before it completed. It has side effects, so it was not repeated; "
        "check whether it took effect before calling it again"))


def tool_timeout(toolbox: ToolboxView, tool: RegisteredTool) -> float | None:
    """The tool's own timeout, else the toolbox's."""
    return tool.definition.timeout if tool.definition.timeout is not None else toolbox.timeout


def wait_limit(toolbox: ToolboxView, run: Run) -> float:
    """How long to wait for another worker running the same call."""
    timeout = tool_timeout(toolbox, run.tool)
    return 300.0 if timeout is None else timeout + 5.0


def still_running(run: Run, claim: StoreClaim) -> ToolResult:
    return ToolResult.failed(run.call, (
        f"{run.call.name} (call {run.call.id}) is still running in another worker "
        f"({claim.owner}); it was not started again. Its result will answer the next delivery"))


def record(toolbox: ToolboxView, run: Run, result: ToolResult) -> None:
    """Store the final result of a call we claimed (retried if the store fails)."""
    store, key, owner = toolbox.store, run.key, run.owner
    if owner is None or store is None or key is None:
        return
    run.owner = None
    stored = new_tuple(StoredResult, (result.success, result.output, result.error))
    try:
        done: bool | None
        try:
            done = store.complete(key, owner, stored)
        except Exception as exc:
            done = _complete_again(store.complete, run, owner, stored, exc)
        if done is False:
            log.warning("call %s of %s was taken over by another worker; its result was "
                        "not stored", run.call.id, run.call.name)
    finally:
        end_owner(owner)


def _complete_again(complete: Callable[[StoreKey, str, StoredResult], bool], run: Run,
                    owner: str, stored: StoredResult, exc: Exception) -> bool | None:
    """Retry a failed ``complete``; ``None`` (after an ERROR log) when every attempt failed.

    The result still goes to the backend; only the store misses it.
    """
    call, key = run.call, run.key
    assert key is not None
    for pause in COMPLETE_RETRY_PAUSES:
        log.warning("storing the result of %s (call %s) failed (%s); retrying in %g s",
                    call.name, call.id, default_error_formatter(exc), pause)
        time.sleep(pause)
        try:
            return complete(key, owner, stored)
        except Exception as again:
            exc = again
    what = ("a re-delivery of it will be answered 'outcome unknown', not run again"
            if run.tool.definition.side_effects else "a re-delivery of it may run it again")
    log.error("storing the result of %s (call %s) failed %d times; the result was sent to the "
              "backend, but the store still holds the call as started: %s", call.name, call.id,
              len(COMPLETE_RETRY_PAUSES) + 1, what, exc_info=exc)
    return None


def abandon(toolbox: ToolboxView, run: Run) -> None:
    """Give up a claim on cancellation: a call without side effects may run again later."""
    owner, run.owner = run.owner, None
    if owner is None or toolbox.store is None or run.key is None:
        return
    try:
        if not run.tool.definition.side_effects:
            toolbox.store.release(run.key, owner)
    except Exception as exc:
        log.error("releasing call %s failed", run.call.id, exc_info=exc)
    finally:
        end_owner(owner)
