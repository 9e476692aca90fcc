"""The step deadline rule, shared by the driver and the Temporal fleet's activities: a call
whose tool cannot finish before the backend stops taking results is answered with an error
instead of being started."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..model import ToolCall, ToolResult
from ..plugin import Step

if TYPE_CHECKING:
    from ..toolbox import Toolbox

__all__ = ["refuse_late", "tool_timeout"]


def tool_timeout(toolbox: Toolbox, name: str) -> float | None:
    """The seconds a call of ``name`` may take: its tool's timeout, else the toolbox's
    (``None``: unbounded, or no such tool)."""
    if name not in toolbox:
        return None
    timeout = toolbox.get(name).timeout
    value = timeout if timeout is not None else toolbox.timeout
    return float(value) if value is not None else None


def refuse_late(step: Step, calls: Sequence[ToolCall], toolbox: Toolbox
                ) -> tuple[list[ToolCall], list[ToolResult]]:
    """``calls`` split into those to start and error results for those whose tool cannot
    finish (its `tool_timeout` plus the step's margin) before the step's deadline."""
    if step.deadline is None:
        return list(calls), []
    left = step.deadline - time.time()
    startable, refused = [], []
    for call in calls:
        estimate = tool_timeout(toolbox, call.name) or 0.0
        if estimate + step.margin <= left:
            startable.append(call)
            continue
        refused.append(ToolResult.failed(call, (
            f"{call.name} was not started: {call.turn} expires in {max(left, 0):.0f} s, "
            f"too soon for it to finish (timeout {estimate:g} s plus a "
            f"{step.margin:g} s margin)")))
    return startable, refused
