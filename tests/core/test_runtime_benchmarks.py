"""Smoke tests of the benchmarks, and the fast validator's verdicts against jsonschema's.

The smoke tests only show that each benchmark still runs to its table at tiny sizes: their
figures and verdicts are not checked (at these sizes they mean nothing; docs/performance.md
has the measured ones, with their commands). Each runs in a child process, as its command
does, at its smallest size: the fewest payloads, rounds and warm-ups, one dialect where the
benchmark takes a list, conversations started at once (``--spread 0``). bench_handle runs in
this process (its ``main(argv)`` only prints): its child would spend seconds importing the
nine SDKs that this process has imported already.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from toolbridge.errors import ArgumentError
from toolbridge.tools import schema_validator

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

from _common import validation_cases  # noqa: E402

SMOKES = [
    ("bench_validation.py", ["--schemas", "4", "--repeat", "1"]),
    ("bench_store.py", ["--number", "4", "--rounds", "1"]),
    ("bench_floor.py", ["--number", "3", "--rounds", "1"]),
    ("bench_within.py", ["--number", "3", "--rounds", "1"]),
    ("bench_telemetry.py", ["--number", "3", "--rounds", "1"]),
    ("bench_import.py", ["--samples", "1"]),
    ("bench_instructions.py", ["--no-valgrind", "--payloads", "2", "--calls", "2",
                               "--warmup", "1"]),
    ("bench_transport.py", ["20", "5"]),
    ("bench_conversation_memory.py", ["--conversations", "2", "--dialects", "openai-chat",
                                      "--spread", "0"]),
]


@pytest.mark.parametrize(("script", "args"), [pytest.param(*smoke, id=smoke[0])
                                              for smoke in SMOKES])
def test_benchmark_smoke(script: str, args: list[str]) -> None:
    """It runs, and prints its table (the ratio line ends every one); nothing is judged."""
    out = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                         text=True, timeout=600)  # ends a hang only: a loaded machine is slow
    assert out.returncode == 0, out.stderr
    assert "ratio" in out.stdout


def test_benchmark_smoke_of_handle(capsys: pytest.CaptureFixture[str]) -> None:
    """bench_handle.py, every row (each dialect's too), in this process."""
    importlib.import_module("bench_handle").main(["--number", "3", "--rounds", "1"])
    out = capsys.readouterr().out
    assert "ratio" in out
    assert "gemini-interactions" in out  # the row per dialect ran


def test_benchmark_smoke_of_the_dialect_stages(capsys: pytest.CaptureFixture[str]) -> None:
    """bench_handle.py --stages: a row of stages per dialect, in this process."""
    importlib.import_module("bench_handle").main(["--stages", "--number", "3", "--rounds", "1"])
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()
            if line.startswith("  ") and not line.startswith("  dialect")}
    assert set(rows) == {"openai-agents", "openai-assistants", "google-ces", "openai-responses",
                         "openai-chat", "gemini", "anthropic-messages", "anthropic-sessions",
                         "gemini-interactions"}
    # 4 stages, own, vs agents, the store's part
    assert all(len(figures) == 7 for figures in rows.values())


def test_fast_validation_verdicts_match_jsonschema_on_the_corpus() -> None:
    cases = validation_cases()
    assert len(cases) > 1000
    compiled: dict[int, tuple[object, object]] = {}
    verdicts = set()
    for schema, instance in cases:
        if id(schema) not in compiled:
            cls = jsonschema.validators.validator_for(schema)
            compiled[id(schema)] = (schema_validator(schema), cls(schema))
        check, reference_validator = compiled[id(schema)]
        try:
            check(instance)  # type: ignore[operator]
            ours = True
        except ArgumentError:
            ours = False
        reference = reference_validator.is_valid(instance)  # type: ignore[attr-defined]
        assert ours == reference, (schema, instance)
        verdicts.add(ours)
    assert verdicts == {True, False}


@pytest.mark.parametrize(("schema", "instance", "valid"), [
    ({"properties": {"p": {"pattern": "^a$"}}}, {"p": "a\n"}, True),  # Python's $ allows \n
    ({"properties": {"p": {"pattern": "^\\d+$"}}}, {"p": "٣"}, True),  # Unicode digits
    ({"properties": {"n": {"multipleOf": 0.01}}}, {"n": 0.07}, False),  # float division
    ({"properties": {"f": {"format": "email"}}}, {"f": "not an email"}, True),  # annotation
    ({"properties": {"i": {"type": "integer"}}}, {"i": 1.0}, True),
    ({"properties": {"e": {"enum": [1]}}}, {"e": True}, False),
])
def test_edge_cases_follow_jsonschema(schema: dict, instance: dict, valid: bool) -> None:
    schema = {"type": "object", **schema}
    assert jsonschema.Draft202012Validator(schema).is_valid(instance) is valid
    check = schema_validator(schema)
    if valid:
        check(instance)
    else:
        with pytest.raises(ArgumentError):
            check(instance)
