"""Answers the store gives instead of a run: reconciled side effects, calls still running."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..model import ToolResult
from ..plugin import plugin_manager

if TYPE_CHECKING:
    from ._call import PlannedCall

__all__ = ["reconcile", "still_running", "wait_limit"]

log = logging.getLogger("toolbridge.runtime")


def reconcile(pc: PlannedCall) -> None:
    """Settle a side-effecting call that started in a worker that is gone: never a re-run.

    The `toolbridge_reconcile_call` hook decides; without an answer, the outcome is unknown.
    """
    call = pc.call
    try:
        answer = plugin_manager().hook.toolbridge_reconcile_call(
            call=call, tool=pc.definition, started_at=pc.resumed)
    except Exception as exc:
        log.error("a toolbridge_reconcile_call hook failed for %s", call.name, exc_info=exc)
        answer = None
    if isinstance(answer, ToolResult):
        pc.settle(answer.model_copy(update={"call": call}) if answer.call is not call else answer)
        return
    started = datetime.fromtimestamp(pc.resumed, timezone.utc).isoformat(timespec="seconds")
    pc.failed(
        f"the outcome of {call.name} (call {call.id}) is unknown: it started at {started} but "
        "its worker stopped before it completed. It has side effects, so it was not repeated; "
        "check whether it took effect before calling it again")


def wait_limit(pc: PlannedCall) -> float:
    """How long to wait for another worker running the same call."""
    return 300.0 if pc.timeout is None else pc.timeout + 5.0


def still_running(pc: PlannedCall) -> None:
    """Settle a call another worker has held for longer than `wait_limit` (not stored)."""
    call = pc.call
    pc.failed(f"{call.name} (call {call.id}) is still running in another worker; it was not "
              "started again. Its result will answer the next delivery")
    pc.recorded = True
