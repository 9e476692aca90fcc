"""`DriverSettings`: how the serve driver holds conversations (independent of the dialect)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..http import RetryPolicy

if TYPE_CHECKING:
    from ..model import ToolResult
    from ._transcript import Transcript

__all__ = ["DEFAULT_RECOVERY", "AnswerReport", "DriverSettings"]

AnswerReport = Callable[["Transcript", "ToolResult", float], None]
"""Called once per answered call: the conversation's transcript, the result, and the seconds
the call took (the progress line of ``toolbridge serve``)."""

DEFAULT_RECOVERY = RetryPolicy(max_attempts=6, backoff=0.2, max_delay=5.0)
"""Recoveries per conversation in a row (reset by every step that makes progress)."""


@dataclass(frozen=True)
class DriverSettings:
    """The driver's own options, for every dialect."""

    max_rounds: int = 32
    """Rounds of calls one turn may ask for; past it the turn ends ``incomplete``."""
    recovery: RetryPolicy = DEFAULT_RECOVERY
    """How often, and after what waits, a conversation recovers from failures in a row
    before the driver gives up (raising `toolbridge.errors.ServeError`)."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """Given to every handler (`ToolContext.extra`)."""
    keep: bool = True
    """Keep every transcript entry (``False``: status, error, reply and counts only)."""
    on_answer: AnswerReport | None = None
    """Called for each answered call (progress)."""
