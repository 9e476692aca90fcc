"""Fault injection settings: the ones every emulator offers, and each emulator's own.

`Faults` holds what every emulator applies to every request (``latency_ms``,
``fail_requests``); `StreamFaults` adds what emulators with event streams apply to them; an
emulator declares its own subclass (`Emulator.faults_type`) for dialect-specific faults. A
name no field declares is refused, listing the emulator's valid ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import UsageError

__all__ = ["FailRule", "Faults", "StreamFaults", "faults_from"]

F = TypeVar("F", bound="Faults")


class FailRule(BaseModel):
    """Fail the ``nth`` request (1-based, counting every request the emulator receives, or
    only those that ``method`` and ``matching`` select)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)
    nth: int = Field(ge=1)
    method: str | None = None
    """Count only requests with this method (``POST``)."""
    matching: str | None = None
    """Count only requests whose path or body text contains this (``"again"``: the request
    that carries that user message, whatever else the client sent before it)."""
    status: Literal[429, 500, 502, 503] = 500
    retry_after: float | None = None
    """Seconds to put in a ``Retry-After`` header."""
    after_processing: bool = False
    """Process the request first, then answer ``status`` instead of its reply: the reply is
    lost (without it, the failure comes before the request is processed)."""
    hold: float = Field(default=0.0, ge=0.0)
    """Seconds to wait before answering the failure (after processing, with
    ``after_processing``): a window to lose the client in, e.g. a worker killed while the
    backend has taken its request."""


class Faults(BaseModel):
    """Faults every emulator applies to every request."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)
    fail_requests: tuple[FailRule, ...] = ()
    """Requests to fail, by their number (see `FailRule`)."""
    latency_ms: int = Field(default=0, ge=0)
    """Delay every response by this many milliseconds."""

    @classmethod
    def names(cls) -> list[str]:
        """The fault names this kind of emulator accepts."""
        return sorted(cls.model_fields)


class StreamFaults(Faults):
    """Faults of emulators that answer with event streams (SSE)."""

    drop_stream_after: int | None = Field(default=None, ge=0)
    """Close each event stream, without ending it properly, after this many events."""
    duplicate_events: int | None = Field(default=None, ge=1)
    """Send every Nth event twice."""


@overload
def faults_from(value: Faults | Mapping[str, Any] | None) -> Faults: ...
@overload
def faults_from(value: Faults | Mapping[str, Any] | None, kind: type[F],
                dialect: str = "") -> F: ...


def faults_from(value: Faults | Mapping[str, Any] | None, kind: type[Faults] = Faults,
                dialect: str = "") -> Faults:
    """``value`` (a `Faults`, a dict of settings, or ``None``) as faults of ``kind``.

    `UsageError` for a name ``kind`` does not declare (listing the valid ones) or a bad value.
    """
    where = f"{dialect} emulator" if dialect else "emulator"
    if value is None:
        return kind()
    if isinstance(value, kind):
        return value
    given = value.model_dump(exclude_defaults=True) if isinstance(value, Faults) else dict(value)
    unknown = sorted(set(given) - set(kind.model_fields))
    if unknown:
        raise UsageError(f"unknown fault(s) {', '.join(unknown)} for the {where}; valid: "
                         f"{', '.join(kind.names())}")
    try:
        return kind.model_validate(given)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                             for e in exc.errors(include_url=False))
        raise UsageError(f"invalid fault settings for the {where}: {problems}") from None
