"""Seeded mutations of every recorded payload of every installed dialect (issue 16 §4).

Each case is classified: ``answered`` (a body whose error results the agent can act on) or
``refused`` (a `WireFormatError` naming the dialect and the field). Anything else (a bare
exception, a body that is not JSON) fails the test with the case's seed and index. The default
size runs in seconds; ``TOOLBRIDGE_SLOW_SCALE=N`` runs N times as many cases.
"""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fuzz_cases import BIG_ARGUMENT, SCALE, PayloadMutator, payload_files

import toolbridge
from toolbridge import ToolDefinition, WireFormatError

FILES = payload_files()
CASES_PER_FILE = 150 * SCALE
SEED = 1616


def test_every_installed_dialect_has_recorded_payloads() -> None:
    assert {name for name, _ in FILES} == set(toolbridge.dialects())
    assert len(FILES) >= 12


def _schema_of(arguments: dict[str, Any]) -> dict[str, Any]:
    """A hand-written schema for arguments like these: their JSON types, all required."""
    kinds = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
             dict: "object", type(None): "null"}
    return {"type": "object", "required": list(arguments), "properties": {
        key: {"type": kinds.get(type(value), "string")} for key, value in arguments.items()}}


def _toolbox(dialect: str, payload: Any) -> toolbridge.Toolbox:
    """Tools for the calls the unmutated payload holds (typed schemas, so arguments are
    checked), with a handler that takes anything."""
    toolbox = toolbridge.Toolbox(store=None)
    try:
        calls = toolbridge.get_dialect(dialect).read_calls(payload).calls if isinstance(
            payload, dict) else ()
    except WireFormatError:
        calls = ()  # not a payload with calls: every mutation is read, nothing is run
    for call in calls:
        if call.name not in toolbox:
            toolbox.add(ToolDefinition(name=call.name, parameters=_schema_of(call.arguments)),
                        lambda **kwargs: {"got": sorted(kwargs)})
    return toolbox


def _handled(toolbox: toolbridge.Toolbox, dialect: str, payload: Any) -> str:
    try:
        body = toolbox.handle(dialect, payload)
    except WireFormatError as exc:
        assert exc.dialect == dialect and exc.field, exc
        return "refused"
    json.dumps(body, allow_nan=False)  # the body goes back on the wire as JSON
    return "answered"


def _imported(dialect: str, tools: Any) -> str:
    try:
        toolbridge.get_dialect(dialect).import_tools(tools)
    except WireFormatError as exc:
        assert exc.dialect == dialect and exc.field, exc
        return "refused"
    return "imported"


def _tool_list(dialect: str, payload: Any) -> Any:
    """The tool list a recording holds, if the dialect can read it."""
    tools = payload.get("tools") if isinstance(payload, dict) else None
    for candidate in (payload, tools, [payload]):
        try:
            toolbridge.get_dialect(dialect).import_tools(candidate)  # type: ignore[arg-type]
        except (WireFormatError, AttributeError, TypeError):
            continue
        return candidate
    return None


def _fuzz(dialect: str, path: Path, cases: int, seed: int) -> Counter[str]:
    payload = json.loads(path.read_text())
    toolbox = _toolbox(dialect, payload)
    outcomes: Counter[str] = Counter()
    rng = random.Random(f"{seed}:{path.name}")
    mutator = PayloadMutator(payload, rng)
    tools = _tool_list(dialect, payload)
    tool_mutator = PayloadMutator({"tools": tools}, rng) if tools is not None else None
    for index in range(cases):
        label, mutated = mutator.case()
        try:
            outcomes[_handled(toolbox, dialect, mutated)] += 1
            if tool_mutator is not None:
                _, mutated_tools = tool_mutator.case()
                if isinstance(mutated_tools, dict) and "tools" in mutated_tools:
                    outcomes["tools " + _imported(dialect, mutated_tools["tools"])] += 1
        except Exception as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"{dialect} {path.name} case {index} (seed {seed}): {label}: "
                        f"{type(exc).__name__}: {str(exc)[:300]}")
    return outcomes


@pytest.mark.slow
@pytest.mark.parametrize("dialect, path", FILES, ids=[p.name for _, p in FILES])
def test_mutated_payloads_are_answered_or_refused_by_field(
        dialect: str, path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="toolbridge"):
        outcomes = _fuzz(dialect, path, CASES_PER_FILE, SEED)
    # An error logged means an exception toolbridge did not expect (the handlers never fail).
    assert not caplog.records, caplog.records[0].getMessage()
    assert sum(outcomes.values()) >= CASES_PER_FILE
    assert outcomes["refused"] > 0, outcomes  # the mutations reach the reader's checks
    if _toolbox(dialect, json.loads(path.read_text())).names():
        assert outcomes["answered"] > 0, outcomes  # ...and some still get results


def test_pathological_arguments_fail_one_call_each() -> None:
    """Every bad argument form in one payload: each call gets its own error result."""
    from fuzz_cases import BAD_ARGUMENTS

    toolbox = toolbridge.Toolbox(store=None)
    toolbox.add(ToolDefinition(name="f", parameters={
        "type": "object", "properties": {"a": {"type": "string"}}}), lambda a="": a)
    texts = [a for a in BAD_ARGUMENTS if isinstance(a, str)] + [BIG_ARGUMENT, '{"a": "ok"}']
    run = {"id": "run_1", "thread_id": "thread_1", "status": "requires_action",
           "required_action": {"type": "submit_tool_outputs", "submit_tool_outputs": {
               "tool_calls": [{"id": f"call_{i}", "type": "function",
                               "function": {"name": "f", "arguments": text}}
                              for i, text in enumerate(texts)]}}}
    outputs = toolbox.handle("openai-assistants", run)["tool_outputs"]
    assert [o["tool_call_id"] for o in outputs] == [f"call_{i}" for i in range(len(texts))]
    assert outputs[-1]["output"] == "ok"
    failed = [o for o in outputs if o["output"].startswith('{"error"')]
    assert len(failed) >= len(texts) - 5  # "", "null"-like and dup keys may still fit
