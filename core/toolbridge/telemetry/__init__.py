"""OpenTelemetry for toolbridge: a span per call and per served turn, and a duration metric.

Following the GenAI semantic conventions (``open-telemetry/semantic-conventions-genai``,
status Development): every tool call gets an ``execute_tool {gen_ai.tool.name}`` span (kind
INTERNAL) and a ``gen_ai.execute_tool.duration`` measurement; every turn the serve driver
holds gets an ``invoke_agent`` span (kind CLIENT) that the call spans are children of.

Nothing to switch on: with the ``otel`` extra (``opentelemetry-api``) installed and a tracer
provider set by the application (``opentelemetry.trace.set_tracer_provider``), spans are
emitted; without either, the pipeline checks one module lookup per payload and does nothing
else (benchmarks/bench_telemetry.py measures it). Arguments and results are recorded only
when opted in (`configure`, or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``),
with secrets masked. See docs/observability.md.
"""

from __future__ import annotations

from ._state import CAPTURE_ENV, configure, tracer

__all__ = ["CAPTURE_ENV", "configure", "tracer"]
