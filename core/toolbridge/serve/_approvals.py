"""A turn whose calls wait for a person ends ``awaiting_approval``, without invented results.

The toolbox answers what it may (`toolbridge.errors.AwaitingApproval` carries those results);
the driver submits them where the backend takes results one by one, and ends the turn with
the requests as its detail. The conversation is resumed by serving it again once decided
(from any process): the backend still lists the calls (or, for one that lists none, the
turn's checkpoint, kept for it, holds them), the store consumes the decisions.
"""

from __future__ import annotations

from typing import Any

from ..errors import AwaitingApproval
from ..model import ToolResult
from ..plugin import Step

__all__ = ["answered", "awaiting_step", "keeps"]


def answered(waiting: AwaitingApproval) -> list[ToolResult]:
    """The results of the calls that do not wait."""
    return [r for r in waiting.results if r is not None]


def awaiting_step(waiting: AwaitingApproval) -> Step:
    """The turn's final step: the requests, for the transcript and whoever decides."""
    detail: list[dict[str, Any]] = [
        {"call_id": r.key.call_id, "tool": r.tool, "arguments": dict(r.arguments),
         "conversation": r.key.conversation, "turn": r.key.turn, "expires_at": r.expires_at}
        for r in waiting.requests]
    return Step("awaiting_approval", error=str(waiting), detail=detail)


def keeps(final: Step) -> bool:
    """Whether a turn that ended with ``final`` keeps its checkpoint where the backend lists
    no pending calls: one awaiting approval resumes from it."""
    return final.status == "awaiting_approval"
