"""Fault injection settings shared by every emulator (same names where they apply)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FailRule", "Faults", "faults_from"]


class FailRule(BaseModel):
    """Fail the ``nth`` request (1-based, counting every request the emulator receives)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    nth: int = Field(ge=1)
    status: Literal[429, 500, 502, 503] = 500
    retry_after: float | None = None
    """Seconds to put in a ``Retry-After`` header."""


class Faults(BaseModel):
    """Faults to inject. Dialect-specific ones are extra fields (e.g. ``expire_after``)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    drop_stream_after: int | None = Field(default=None, ge=0)
    """Close each event stream, without ending it properly, after this many events."""
    fail_requests: tuple[FailRule, ...] = ()
    duplicate_events: int | None = Field(default=None, ge=1)
    """Send every Nth event twice."""
    latency_ms: int = Field(default=0, ge=0)
    """Delay every response by this many milliseconds."""

    def extra(self, name: str, default: Any = None) -> Any:
        """A dialect-specific fault setting."""
        return (self.model_extra or {}).get(name, default)


def faults_from(value: Faults | Mapping[str, Any] | None) -> Faults:
    """Accept a `Faults`, a dict of settings, or ``None``."""
    if value is None:
        return Faults()
    if isinstance(value, Faults):
        return value
    return Faults.model_validate(dict(value))
