"""The tracer and meter of one provider, and the spans of one payload's calls."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._redact import redact_value

if TYPE_CHECKING:
    from ..model import ToolCall, ToolResult

PlannedCall = Any
"""A `toolbridge.runtime.PlannedCall` (the runtime imports this module, not the reverse)."""

__all__ = ["CallSpans", "Instruments"]

SCOPE = "toolbridge"
DURATION = "gen_ai.execute_tool.duration"
# The conventions' advice for GenAI durations, in seconds.
BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96,
           81.92)


class Instruments:
    """What toolbridge records with under one tracer provider."""

    def __init__(self, provider: Any, meter_provider: Any, capture: Callable[[], bool]) -> None:
        from importlib.metadata import version

        from opentelemetry import metrics, trace

        __version__ = version("toolbridge")
        self.provider = provider
        self.tracer = provider.get_tracer(SCOPE, __version__)
        meters = meter_provider or metrics.get_meter_provider()
        self.duration = meters.get_meter(SCOPE, __version__).create_histogram(
            DURATION, unit="s", description="Duration of tool execution operations.",
            explicit_bucket_boundaries_advisory=list(BUCKETS))
        self.trace = trace
        self.capture = capture
        """Whether content is recorded, asked once per payload."""

    def calls(self, dialect: str) -> CallSpans:
        """The spans of one payload's calls, children of the current span."""
        return CallSpans(self, dialect)


class CallSpans:
    """One payload's call spans: started when a handler starts, ended with the payload."""

    __slots__ = ("capture", "dialect", "instruments", "parent", "spans", "started")

    def __init__(self, instruments: Instruments, dialect: str) -> None:
        from opentelemetry import context

        self.instruments = instruments
        self.dialect = dialect
        self.parent = context.get_current()
        """The caller's context: worker threads do not inherit it."""
        self.capture = instruments.capture()
        self.started = time.time_ns()
        self.spans: dict[int, list[Any]] = {}
        """A started call's span, start and end times (ns), by the call's index."""

    def start(self, pc: PlannedCall) -> Any:
        """Start ``pc``'s span and make it current in this thread (handler code that traces
        becomes its child); returns the token that `leave` takes."""
        from opentelemetry import context

        started = time.time_ns()
        span = self._span(pc.call, pc.definition.description, started)
        self.spans[pc.index] = [span, started, None]
        return context.attach(self.instruments.trace.set_span_in_context(span, self.parent))

    def leave(self, pc: PlannedCall, token: Any) -> None:
        """``pc``'s handler returned: its span stops being current here."""
        from opentelemetry import context

        self.spans[pc.index][2] = time.time_ns()
        context.detach(token)

    def finish(self, results: Sequence[ToolResult | None], planned: Sequence[PlannedCall]) -> None:
        """End every call's span with its result (a call never run gets a span now: replayed
        from the store, reconciled, refused), and record the durations of those that ran."""
        by_index = {pc.index: pc for pc in planned}
        ended = time.time_ns()
        for index, result in enumerate(results):
            pc = by_index.get(index)
            if result is None:  # awaiting a person's decision: nothing ran
                assert pc is not None
                span = self._span(pc.call, pc.definition.description, ended)
                span.set_attribute("toolbridge.approval.decision", "awaiting")
                span.end(end_time=ended)
                continue
            found = self.spans.get(index)
            if found is None:
                description = pc.definition.description if pc is not None else ""
                span, started, stopped = self._span(result.call, description, ended), ended, ended
            else:
                span, started, stopped = found
            self._end(span, result, pc, started, stopped or ended, ran=found is not None)

    # ------------------------------------------------------------------ internals
    def _span(self, call: ToolCall, description: str, started: int) -> Any:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id, "gen_ai.tool.type": "function",
            "toolbridge.dialect": self.dialect or call.dialect}
        if description:
            attributes["gen_ai.tool.description"] = description
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = _json(redact_value(call.arguments))
        return self.instruments.tracer.start_span(
            f"execute_tool {call.name}", context=self.parent,
            kind=self.instruments.trace.SpanKind.INTERNAL, attributes=attributes,
            start_time=started)

    def _end(self, span: Any, result: ToolResult, pc: PlannedCall | None, started: int,
             ended: int, ran: bool) -> None:
        state = ("reconciled" if pc is not None and pc.resumed and pc.tool.reconciles
                 else "replayed" if not ran and pc is not None and pc.recorded else "new")
        span.set_attribute("toolbridge.store.state", state)
        if pc is not None and pc.decision:
            span.set_attribute("toolbridge.approval.decision", pc.decision)
        error = None
        if not result.success:
            error = (pc.failure if pc is not None and pc.failure else "tool_error")
            span.set_attribute("error.type", error)
            span.set_status(self.instruments.trace.Status(
                self.instruments.trace.StatusCode.ERROR, _short(result.error or "")))
        if self.capture:
            shown = result.output if result.success else {"error": result.error}
            span.set_attribute("gen_ai.tool.call.result", _json(redact_value(shown)))
        span.end(end_time=ended)
        if ran:
            measured = {"gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": result.call.name, "toolbridge.dialect": self.dialect}
            if error is not None:
                measured["error.type"] = error
            self.instruments.duration.record((ended - started) / 1e9, measured)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return json.dumps(str(value))


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:199] + "…"
