"""OpenTelemetry: a span per call and per served turn, the duration metric, content opt-in,
and nothing at all without a provider — read with the SDK's in-memory exporter and reader."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from toolbridge import Toolbox, telemetry
from toolbridge.cli._demo import DEMO_MESSAGES, DEMO_SCRIPT
from toolbridge.telemetry._state import active
from toolbridge.testing import converse, installed_dialects

SESSION = {"id": "sess_otel", "status": "requires_action", "required_actions": [
    {"type": "function_call", "turn_id": "turn_1", "call_id": "call_a", "name": "lookup",
     "arguments": {"key": "a"}},
    {"type": "function_call", "turn_id": "turn_1", "call_id": "call_b", "name": "boom",
     "arguments": {}},
    {"type": "function_call", "turn_id": "turn_1", "call_id": "call_c", "name": "missing",
     "arguments": {}},
]}


class Recorded:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.meter_provider = MeterProvider(metric_readers=[self.metrics])

    def finished(self, name_prefix: str = "") -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if s.name.startswith(name_prefix)]

    def durations(self) -> list[Any]:
        data = self.metrics.get_metrics_data()
        points = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == "gen_ai.execute_tool.duration":
                        assert metric.unit == "s"
                        points.extend(metric.data.data_points)
        return points


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    found = Recorded()
    telemetry.configure(tracer_provider=found.tracer_provider,
                        meter_provider=found.meter_provider)
    yield found
    telemetry.configure()


def make_toolbox() -> Toolbox:
    toolbox = Toolbox(store="memory://")

    @toolbox.tool
    def lookup(key: str) -> dict[str, str]:
        """Look a key up."""
        return {"key": key, "value": key.upper()}

    @toolbox.tool
    def boom() -> str:
        raise KeyError("no such thing")

    return toolbox


def test_no_provider_no_telemetry() -> None:
    telemetry.configure()
    assert active() is None  # the pipeline then creates no span and reads no content
    toolbox = make_toolbox()
    toolbox.handle("openai-agents", SESSION)  # and runs as ever


def test_a_global_provider_set_later_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import trace

    from toolbridge.telemetry import _state

    telemetry.configure()
    assert active() is None
    provider = TracerProvider()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    assert active() is None  # looked less than RECHECK ago: not asked again yet
    later = _state.time.monotonic() + _state.RECHECK + 1
    monkeypatch.setattr(_state.time, "monotonic", lambda: later)
    found = active()
    assert found is not None and found.provider is provider
    telemetry.configure()


def test_a_span_per_call_with_the_conventions_attributes(recorded: Recorded) -> None:
    make_toolbox().handle("openai-agents", SESSION)
    spans = {s.attributes["gen_ai.tool.call.id"]: s for s in recorded.finished("execute_tool")}
    assert sorted(spans) == ["call_a", "call_b", "call_c"]
    ok = spans["call_a"]
    assert ok.name == "execute_tool lookup" and ok.kind is SpanKind.INTERNAL
    assert dict(ok.attributes) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.id": "call_a", "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Look a key up.", "toolbridge.dialect": "openai-agents",
        "toolbridge.store.state": "new"}
    assert ok.status.status_code is StatusCode.UNSET
    failed = spans["call_b"]
    assert failed.attributes["error.type"] == "KeyError"
    assert failed.status.status_code is StatusCode.ERROR
    unknown = spans["call_c"]  # never run: no such tool
    assert unknown.attributes["error.type"] == "tool_error"
    assert "gen_ai.tool.call.arguments" not in ok.attributes  # content is opt-in
    assert "gen_ai.tool.call.result" not in ok.attributes
    measured = {p.attributes["gen_ai.tool.name"]: p for p in recorded.durations()}
    assert sorted(measured) == ["boom", "lookup"]  # the calls that ran
    assert measured["boom"].attributes["error.type"] == "KeyError"
    assert measured["lookup"].count == 1 and measured["lookup"].sum >= 0


def test_a_replayed_call_says_so(recorded: Recorded) -> None:
    toolbox = make_toolbox()
    first = toolbox.handle("openai-agents", SESSION)
    assert toolbox.handle("openai-agents", SESSION) == first  # delivered again: from the store
    states = [(s.attributes["gen_ai.tool.call.id"], s.attributes["toolbridge.store.state"])
              for s in recorded.finished("execute_tool")
              if s.attributes["gen_ai.tool.call.id"] == "call_a"]
    assert states == [("call_a", "new"), ("call_a", "replayed")]
    assert len(recorded.durations()) == 2  # the replay ran nothing: no new measurement


def test_content_when_opted_in_with_secrets_masked(recorded: Recorded) -> None:
    telemetry.configure(capture_content=True, tracer_provider=recorded.tracer_provider,
                        meter_provider=recorded.meter_provider)
    toolbox = Toolbox(store=None)
    secret = "sk-live-0123456789abcdef"

    @toolbox.tool
    def fetch(url: str, api_key: str) -> dict[str, str]:
        return {"fetched": url, "token": api_key}

    session = {"id": "sess_c", "status": "requires_action", "required_actions": [
        {"type": "function_call", "turn_id": "t", "call_id": "c1", "name": "fetch",
         "arguments": {"url": f"https://user:{secret}@api.example/x?key={secret}",
                       "api_key": secret}}]}
    toolbox.handle("openai-agents", session)
    (span,) = recorded.finished("execute_tool")
    arguments = json.loads(span.attributes["gen_ai.tool.call.arguments"])
    result = json.loads(span.attributes["gen_ai.tool.call.result"])
    assert arguments["api_key"] == "***" and result["token"] == "***"
    assert arguments["url"].startswith("https://user:***@api.example/x")
    assert secret not in json.dumps([arguments, result])


def test_content_follows_the_environment(recorded: Recorded,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(telemetry.CAPTURE_ENV, "true")
    make_toolbox().handle("openai-agents", SESSION)
    spans = {s.attributes["gen_ai.tool.call.id"]: s for s in recorded.finished("execute_tool")}
    assert json.loads(spans["call_a"].attributes["gen_ai.tool.call.arguments"]) == {"key": "a"}
    assert json.loads(spans["call_a"].attributes["gen_ai.tool.call.result"]) == {
        "key": "a", "value": "A"}


@pytest.mark.parametrize("dialect", installed_dialects())
def test_every_served_turn_is_the_parent_of_its_calls(recorded: Recorded, dialect: str) -> None:
    from toolbridge.examples import toolbox

    transcript = converse(toolbox, dialect, DEMO_MESSAGES, script=DEMO_SCRIPT)
    assert transcript.status == "completed", transcript.render()
    (turn,) = recorded.finished("invoke_agent")
    assert turn.kind is SpanKind.CLIENT
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.conversation.id"] == transcript.conversation
    assert turn.attributes["gen_ai.provider.name"] in ("openai", "gcp.vertex_ai", "anthropic",
                                                       "gcp.gemini")
    assert turn.attributes["toolbridge.dialect"] == dialect
    calls = recorded.finished("execute_tool")
    assert sorted(s.attributes["gen_ai.tool.name"] for s in calls) == [
        "create_ticket", "get_customer", "get_weather"]
    for span in calls:
        assert span.context.trace_id == turn.context.trace_id
        assert span.parent is not None and span.parent.span_id == turn.context.span_id
        assert span.attributes["toolbridge.dialect"] == dialect


def test_a_call_that_needed_approval_says_its_decision(recorded: Recorded) -> None:
    toolbox = Toolbox(store="memory://")

    @toolbox.tool(needs_approval=True)
    def lookup(key: str) -> str:
        """Look a key up."""
        return key.upper()

    session = {"id": "sess_ap", "status": "requires_action", "required_actions": [
        {"type": "function_call", "turn_id": "turn_1", "call_id": call_id, "name": "lookup",
         "arguments": {"key": call_id}} for call_id in ("call_a", "call_b", "call_c")]}
    toolbox.handle("openai-agents", session)
    waiting = recorded.finished("execute_tool")
    assert [s.attributes["toolbridge.approval.decision"] for s in waiting] == ["awaiting"] * 3
    a, b, c = toolbox.approvals.pending()
    toolbox.approvals.approve(a)
    toolbox.approvals.deny(b, "not this one")
    toolbox.approvals.answer(c, "given by hand")
    recorded.spans.clear()
    toolbox.handle("openai-agents", session)
    spans = {s.attributes["gen_ai.tool.call.id"]: s for s in recorded.finished("execute_tool")}
    assert {k: s.attributes["toolbridge.approval.decision"] for k, s in spans.items()} == {
        "call_a": "approved", "call_b": "denied", "call_c": "answered"}
    assert spans["call_b"].status.status_code is StatusCode.ERROR
