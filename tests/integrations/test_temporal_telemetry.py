"""One trace from the code that starts a fleet conversation, through its Temporal workflow and
activities, to every call's ``execute_tool`` span (Temporal's OpenTelemetry interceptor on
toolbridge's tracer: `toolbridge_temporal.tracing_interceptors`)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import fleet_toolbox
import pytest

pytest.importorskip("opentelemetry.sdk")

from fleet_servers import temporal_address
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client

from toolbridge import telemetry
from toolbridge.testing import emulated_options, emulator
from toolbridge_temporal import FleetSettings, serve, tracing_interceptors, worker

SCRIPT = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}],
                                [{"name": "charge", "arguments": {"amount": 3}}]],
                     "reply": "done {outputs}"}]}
FAST = FleetSettings(heartbeat_timeout=2.0, task_timeout=2.0, recovery_backoff=0.05,
                     recovery_max_delay=0.2)


@pytest.fixture
def spans() -> Iterator[tuple[InMemorySpanExporter, TracerProvider]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.configure(tracer_provider=provider)
    yield exporter, provider
    telemetry.configure()


def test_no_interceptor_without_a_provider() -> None:
    telemetry.configure()
    assert tracing_interceptors() == []


async def test_a_call_is_traced_end_to_end(spans: tuple[InMemorySpanExporter, TracerProvider],
                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    exporter, provider = spans
    monkeypatch.setenv("TOOLBRIDGE_FLEET_LEDGER", str(tmp_path / "ledger"))
    (interceptor,) = tracing_interceptors()
    client = await Client.connect(temporal_address(), interceptors=[interceptor])
    queue = f"q-{uuid.uuid4().hex}"
    box = fleet_toolbox.make_toolbox(f"sqlite:///{tmp_path / 'store.db'}")
    dialect = "openai-agents"
    with emulator(dialect, script=SCRIPT) as emu:
        where = emulated_options(dialect, emu.base_url).model_dump(
            mode="json", exclude_unset=True, exclude={"api_key"})
        running, activities = worker(client, queue, box,
                                     dialect_options={dialect: {"api_key": "emulator"}})
        async with running:
            with provider.get_tracer("app").start_as_current_span("app request") as app:
                handle = await serve(client, dialect, messages=["go"], options=where,
                                     task_queue=queue, settings=FAST)
            outcome = await asyncio.wait_for(handle.result(), 60)
        await activities.aclose()
    assert outcome.status == "completed", outcome
    finished = exporter.get_finished_spans()
    calls = [s for s in finished if s.name.startswith("execute_tool ")]
    assert sorted(s.attributes["gen_ai.tool.name"] for s in calls) == ["charge", "lookup"]
    trace_id = app.get_span_context().trace_id
    assert all(s.context.trace_id == trace_id for s in calls), [
        (s.name, s.context.trace_id) for s in finished]
    by_id = {s.context.span_id: s for s in finished}
    for call in calls:  # its parent chain reaches the app's span through Temporal's spans
        chain, span = [], call
        while span.parent is not None and span.parent.span_id in by_id:
            span = by_id[span.parent.span_id]
            chain.append(span.name)
        assert chain and chain[-1] == "app request", chain
        assert any(name.startswith(("RunActivity", "StartActivity")) for name in chain), chain
