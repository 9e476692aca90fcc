"""The span of one turn the serve driver holds: the parent of its calls' spans."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._state import active

__all__ = ["Turn", "turn_span"]


class Turn:
    """What the driver tells the turn's span as the turn goes (no-op without telemetry)."""

    __slots__ = ("span",)

    def __init__(self, span: Any) -> None:
        self.span = span

    def ended(self, status: str, conversation: str, error: str | None = None) -> None:
        """The turn ended ``status`` in ``conversation`` (known once the first send made it)."""
        if self.span is None:
            return
        from opentelemetry import trace

        if conversation:
            self.span.set_attribute("gen_ai.conversation.id", conversation)
        self.span.set_attribute("toolbridge.turn.status", status)
        if status != "completed":
            self.span.set_attribute("error.type", status)
            self.span.set_status(trace.Status(trace.StatusCode.ERROR, (error or status)[:200]))


@contextmanager
def turn_span(dialect: str, provider: str, conversation: str) -> Iterator[Turn]:
    """An ``invoke_agent`` span (kind CLIENT) current for the turn, when telemetry is on."""
    instruments = active()
    if instruments is None:
        yield Turn(None)
        return
    trace = instruments.trace
    attributes = {"gen_ai.operation.name": "invoke_agent", "toolbridge.dialect": dialect}
    if provider:
        attributes["gen_ai.provider.name"] = provider
    if conversation:
        attributes["gen_ai.conversation.id"] = conversation
    span = instruments.tracer.start_span("invoke_agent", kind=trace.SpanKind.CLIENT,
                                         attributes=attributes)
    with trace.use_span(span, end_on_exit=True, record_exception=True):
        yield Turn(span)
