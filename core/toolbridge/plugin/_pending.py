"""`PendingCalls`: what a backend payload asks of us (the dialects and the driver share it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..model import ToolCall

__all__ = ["PendingCalls"]


@dataclass(frozen=True)
class PendingCalls:
    """What a backend payload asks of us."""

    calls: tuple[ToolCall, ...]
    """Function calls to answer."""
    unhandled: tuple[Mapping[str, Any], ...] = ()
    """Other required actions (approvals, reconnections) left to the caller, never dropped."""
