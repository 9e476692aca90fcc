"""What OpenTelemetry costs ``Toolbox.handle``: no provider set (what a user gets without
configuring OpenTelemetry), a provider recording every span, and the SDK parse as baseline.

Run: ``python benchmarks/bench_telemetry.py [--number N] [--rounds R]``.

The payload and the toolbox are bench_handle.py's (the Agents sample session, 8 realistic
tools, 8 pending calls; ``Toolbox()``: worker threads, memory store). Rows, each the median
of paired rounds on fresh payloads, variants taking turns within a round:

- baseline: ``AgentSession.model_validate(payload)`` (the openai SDK), in the same run;
- no provider: ``handle`` with ``opentelemetry`` imported and no tracer provider set: the
  pipeline finds no provider (one module lookup and a type check per payload) and records
  nothing — the headline, what every user who did not configure OpenTelemetry gets;
- provider: the same with an SDK ``TracerProvider`` (a span processor that drops each span
  when it ends) and a ``MeterProvider``: 8 ``execute_tool`` spans and 8 duration
  measurements per payload.

Printed: each row per payload and as a ratio to the baseline, the provider row as a ratio to
the no-provider row, and what the no-provider row spends on telemetry at all: the per-payload
check (``toolbridge.telemetry._state.active``, timed alone) as a ratio to that row.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_handle import agents_payload, timed, toolbox
from openai.types.beta.agent_session import AgentSession
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

from toolbridge import telemetry
from toolbridge.telemetry._state import active


class _Drop(SpanProcessor):
    """Ends spans without exporting them: the cost of recording, not of an exporter."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200, help="payloads per timed loop")
    parser.add_argument("--rounds", type=int, default=7, help="paired rounds (median)")
    args = parser.parse_args(argv)

    box = toolbox()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(_Drop())
    meter_provider = MeterProvider()
    serial = iter(range(10**9))

    def fresh() -> list[dict[str, object]]:
        return [agents_payload(f"sess_{next(serial)}") for _ in range(args.number)]

    rows: dict[str, list[float]] = {"baseline": [], "no provider": [], "provider": []}
    try:
        for _ in range(args.rounds):
            rows["baseline"].append(timed(AgentSession.model_validate, fresh()))
            telemetry.configure()
            rows["no provider"].append(timed(lambda p: box.handle("openai-agents", p), fresh()))
            telemetry.configure(tracer_provider=tracer_provider, meter_provider=meter_provider)
            rows["provider"].append(timed(lambda p: box.handle("openai-agents", p), fresh()))
    finally:
        telemetry.configure()
        box.close()
    median = {name: statistics.median(values) for name, values in rows.items()}
    base = median["baseline"]
    print(f"handle of 8 calls, median of {args.rounds} rounds x {args.number} payloads")
    for name, value in median.items():
        print(f"  {name:<12} {value * 1e6:8.1f} us/payload  ratio {value / base:5.2f}x baseline")
    print(f"  provider / no provider: ratio {median['provider'] / median['no provider']:.2f}x")
    checks = 100_000
    started = time.perf_counter()
    for _ in range(checks):
        active()
    check = (time.perf_counter() - started) / checks
    print(f"  the no-provider check: {check * 1e6:.2f} us/payload, ratio "
          f"{check / median['no provider']:.5f} of the no-provider row")


if __name__ == "__main__":
    main()
