"""Payloads over the shared bounds are refused before they are parsed; one call's arguments past
them get an error result while the other calls are answered (issue 16 §2)."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge import WireFormatError
from toolbridge.plugin import (
    MAX_ARGUMENT_BYTES,
    MAX_NESTING_DEPTH,
    MAX_PAYLOAD_BYTES,
    nests_deeper_than,
)

ADAPTERS = Path(__file__).parent / "adapters"
AGENTS = ADAPTERS / "openai_agents/payloads/openai-agents-sessions.session.retrieve.response.json"
ASSISTANTS = (ADAPTERS / "openai_assistants/payloads/"
              "openai-assistants-runs.run.requires-action.response.json")
CES = ADAPTERS / "google_ces/payloads/google-ces.run-session.response.tool-calls.json"


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def echo_toolbox() -> toolbridge.Toolbox:
    """A tool for every call name in the samples, taking anything."""
    toolbox = toolbridge.Toolbox(store=None)
    for name in ("get_customer", "get_order", "get_weather", "get_time", "get_nearest_store"):
        toolbox.add(toolbridge.ToolDefinition(name=name), lambda **kwargs: "ok")
    return toolbox


# -- the whole payload ----------------------------------------------------------------------
@pytest.mark.parametrize("form", [str, bytes])
def test_oversized_text_is_refused_before_parsing(form: type, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    import toolbridge.runtime._payload as payload_module

    def no_parse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed a payload over the bound")

    toolbox = echo_toolbox()
    text = '{"x": "' + "a" * MAX_PAYLOAD_BYTES + '"}'
    monkeypatch.setattr(payload_module, "loads", no_parse)
    with pytest.raises(WireFormatError, match="MAX_PAYLOAD_BYTES") as info:
        toolbox.handle("openai-agents", text if form is str else text.encode())
    assert info.value.field == "<payload>"


def test_text_nested_past_the_bound_is_refused_before_parsing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    sample = load(AGENTS)
    toolbox = echo_toolbox()
    sample["metadata"] = nested(MAX_NESTING_DEPTH - 1)  # the payload itself is one level
    assert toolbox.handle("openai-agents", json.dumps(sample))["events"]
    sample["metadata"] = nested(MAX_NESTING_DEPTH)
    with pytest.raises(WireFormatError, match="MAX_NESTING_DEPTH"):
        toolbox.handle("openai-agents", json.dumps(sample))
    deep_text = '{"x":' + "[" * 100_000 + "]" * 100_000 + "}"  # json.loads would recurse
    with pytest.raises(WireFormatError, match="nested more than"):
        toolbox.handle("openai-agents", deep_text)


def test_invalid_utf8_and_json_are_wire_format_errors() -> None:
    toolbox = echo_toolbox()
    for text in (b'{"id": "\xff\xfe"}', b"\x80", "{nope", "[1, 2]", "NaN"):
        with pytest.raises(WireFormatError) as info:
            toolbox.handle("openai-agents", text)
        assert info.value.field == "<payload>"


def test_deep_value_in_an_unhandled_action_is_logged_not_raised(
        caplog: pytest.LogCaptureFixture) -> None:
    sample = load(AGENTS)
    sample["required_actions"][0]["type"] = nested(3000)  # formatted by the warning
    with caplog.at_level(logging.WARNING, logger="toolbridge"):
        body = echo_toolbox().handle("openai-agents", sample)
    assert [event["call_id"] for event in body["events"]] == ["call_002"]
    assert "left to the caller: <dict>" in caplog.text


# -- one call's arguments ---------------------------------------------------------------------
def _answers(dialect: str, body: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    if dialect == "openai-agents":
        return {e["call_id"]: (e["success"], e.get("error", e.get("output")))
                for e in body["events"]}
    if dialect == "openai-assistants":
        return {o["tool_call_id"]: ("error" not in o["output"], o["output"])
                for o in body["tool_outputs"]}
    return {r["id"]: ("output" in r["response"], str(r["response"]))
            for r in body["inputs"][0]["toolResponses"]["toolResponses"]}


def _with_bad_arguments(dialect: str, arguments: Any) -> tuple[dict[str, Any], str, str]:
    """A sample payload whose first call carries ``arguments``; (payload, bad id, good id)."""
    if dialect == "openai-agents":
        sample = load(AGENTS)
        sample["required_actions"][0]["arguments"] = arguments
        return sample, "call_001", "call_002"
    if dialect == "openai-assistants":
        sample = load(ASSISTANTS)
        calls = sample["required_action"]["submit_tool_outputs"]["tool_calls"]
        calls[0]["function"]["arguments"] = arguments
        return sample, "call_w1", "call_t1"
    sample = load(CES)
    calls = sample["outputs"][0]["toolCalls"]["toolCalls"]
    calls.append({**copy.deepcopy(calls[0]), "id": "good"})
    calls[0]["args"] = arguments
    return sample, calls[0]["id"], "good"


@pytest.mark.parametrize("dialect", ["openai-agents", "openai-assistants", "google-ces"])
@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH + 1, 3000])
def test_deeply_nested_argument_object_fails_only_its_call(dialect: str, depth: int) -> None:
    arguments = nested(depth)
    if dialect == "openai-assistants":
        arguments = '{"a":' * depth + "1" + "}" * depth  # the wire sends text
    payload, bad, good = _with_bad_arguments(dialect, arguments)
    answers = _answers(dialect, echo_toolbox().handle(dialect, payload))
    assert answers[good][0] is True
    assert answers[bad][0] is False and "nest more than 200 levels" in answers[bad][1]


@pytest.mark.parametrize("dialect", ["openai-agents", "openai-assistants"])
@pytest.mark.parametrize("text", [
    "[" * 1000 + "]" * 1000,
    '{"a":' + "[" * 3000 + "]" * 3000 + "}",
    '{"a": "' + "x" * MAX_ARGUMENT_BYTES + '"}',
    '[1, 2]',
])
def test_pathological_argument_text_fails_only_its_call(dialect: str, text: str) -> None:
    payload, bad, good = _with_bad_arguments(dialect, text)
    answers = _answers(dialect, echo_toolbox().handle(dialect, payload))
    assert answers[good][0] is True
    assert answers[bad][0] is False


def test_nesting_measure_agrees_on_data_and_text() -> None:
    value = {"s": "[[[\\\"{", "l": [[1], {"k": [None]}]}
    text = json.dumps(value)
    for limit in range(6):
        expected = limit < 4
        assert nests_deeper_than(value, limit) is expected
        assert nests_deeper_than(text, limit) is expected
        assert nests_deeper_than(text.encode(), limit) is expected
    assert not nests_deeper_than(1, 0) and nests_deeper_than([], 0)
