"""The one key rule: every key a backend is sent derives from the store's key of what it
carries, a user message (conversation, turn) or results (conversation, turn, call id).

The same message or the same results get the same key on every attempt, by this driver or a
successor (the Temporal workflow's handle is its workflow id), so a service that honours a
client key (an ``Idempotency-Key``) or a metadata value takes them once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

__all__ = ["message_key", "results_key"]


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]


def message_key(conversation: str, turn: int) -> str:
    """The key of the user message of turn ``turn`` (0-based) of ``conversation`` (the
    handle of the driver's conversation: unique per conversation a driver holds)."""
    return "tbm_" + _digest(conversation, str(turn))


def results_key(conversation: str, calls: Iterable[tuple[str, str]]) -> str:
    """The key of one submission of the results of ``calls`` ((turn, call id) each, the
    store's call key) in ``conversation``."""
    return "tbr_" + _digest(conversation, *sorted(f"{t}\x1e{i}" for t, i in calls))
