"""`DriverSettings`: how the serve driver holds conversations (independent of the dialect)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..http import RetryPolicy

if TYPE_CHECKING:
    from ..model import ToolResult
    from ._transcript import Transcript

__all__ = ["DEFAULT_RECOVERY", "DEFAULT_TURN_TIMEOUT", "AnswerReport", "DriverSettings"]

AnswerReport = Callable[["Transcript", "ToolResult", float], None]
"""Called once per answered call: the conversation's transcript, the result, and the seconds
the call took (the progress line of ``toolbridge serve``)."""

DEFAULT_RECOVERY = RetryPolicy(max_attempts=6, backoff=0.2, max_delay=5.0)
"""Recoveries per conversation in a row (reset by every step that makes progress)."""
DEFAULT_TURN_TIMEOUT = 600.0
"""Seconds a turn may take before the driver ends it (`DriverSettings.turn_timeout`)."""


@dataclass(frozen=True)
class DriverSettings:
    """The driver's own options, for every dialect."""

    max_rounds: int = 32
    """Rounds of calls one turn may ask for; past it the turn ends ``incomplete``."""
    turn_timeout: float | None = DEFAULT_TURN_TIMEOUT
    """Seconds one turn may take, from sending its user message (or resuming it from a
    checkpoint) to its end; past it the turn ends ``failed`` with
    `toolbridge.errors.TurnTimeoutError` (``None``: no deadline)."""
    recovery: RetryPolicy = DEFAULT_RECOVERY
    """How often, and after what waits, a conversation recovers from failures in a row
    before the driver gives up (raising `toolbridge.errors.ServeError`)."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """Given to every handler (`ToolContext.extra`)."""
    keep: bool = True
    """Keep every transcript entry (``False``: status, error, reply and counts only)."""
    on_answer: AnswerReport | None = None
    """Called for each answered call (progress)."""

    def __post_init__(self) -> None:
        if self.turn_timeout is not None and not self.turn_timeout > 0:
            raise UsageError(f"turn_timeout must be a positive number of seconds or None, "
                             f"not {self.turn_timeout!r}")
