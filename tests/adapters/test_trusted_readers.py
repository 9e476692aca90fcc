"""The readers that build calls without validation (every built-in dialect's) build exactly what
the validating constructors build, on the recorded payloads and on mutations of them."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from fuzz_cases import PayloadMutator, payload_files

import toolbridge
from toolbridge import ToolCall, WireFormatError

DIALECTS = ("openai-assistants", "google-ces", "openai-agents", "openai-responses",
            "openai-chat", "gemini", "gemini-interactions", "anthropic-messages",
            "anthropic-sessions")


def validated(call: ToolCall) -> ToolCall:
    """The same call through the validating constructors."""
    fields = {name: getattr(call, name) for name in type(call).model_fields}
    correlation = call.correlation
    if correlation is not None:
        fields["correlation"] = type(correlation)(**{
            name: getattr(correlation, name) for name in type(correlation).model_fields})
    return ToolCall(**fields)


def payloads() -> list[tuple[str, Any]]:
    cases = []
    rng = random.Random(26)
    for dialect, path in payload_files():
        if dialect not in DIALECTS:
            continue
        payload = json.loads(path.read_text())
        cases.append((dialect, payload))
        mutator = PayloadMutator(payload, rng)
        cases.extend((dialect, mutator.case()[1]) for _ in range(40))
    return cases


@pytest.mark.parametrize("dialect", DIALECTS)
def test_trusted_calls_equal_the_validated_ones(dialect: str) -> None:
    reader = toolbridge.plugin.get_dialect(dialect)
    read = 0
    for name, payload in payloads():
        if name != dialect or not isinstance(payload, dict):  # (handle refuses the others)
            continue
        try:
            calls = reader.read_calls(payload).calls
        except WireFormatError:
            continue
        for call in calls:
            checked = validated(call)
            assert call == checked
            assert call.model_dump() == checked.model_dump()
            assert type(call.correlation) is type(checked.correlation)
            read += 1
    assert read > 0, "no payload of the dialect gave a call"


ANSWERS: list[tuple[bool, Any, str | None, str | None]] = [
    (True, "plain text", None, None),
    (True, {"n": 1, "items": ["a", "b"]}, None, '{"n":1,"items":["a","b"]}'),
    (True, {"n": 2}, None, None),  # JSON data whose text the runtime did not make
    (False, None, "the tool failed: bad input", None),
    (True, toolbridge.Content(parts=(toolbridge.TextPart(text="part"),)), None, None),
]


def _objects_of(dialect: str) -> Iterator[dict[str, Any]]:
    """The recorded and mutated payloads of ``dialect`` that are JSON objects."""
    for name, payload in payloads():
        if name == dialect and isinstance(payload, dict):
            yield payload


@pytest.mark.parametrize("dialect", DIALECTS)
def test_records_read_and_write_what_the_public_models_do(dialect: str) -> None:
    """The runtime's record-level reading and writing (`Dialect.read_records` /
    `write_records`: a built-in dialect's own, or the base's over `read_calls` and
    `write_results`) gives the calls `read_calls` gives and the body `write_results` writes
    of the same answers."""
    reader = toolbridge.plugin.get_dialect(dialect)
    compared = 0
    for payload in _objects_of(dialect):
        try:
            calls = reader.read_calls(payload).calls
        except WireFormatError as exc:
            with pytest.raises(WireFormatError) as raised:
                reader.read_records(payload)
            assert str(raised.value) == str(exc)
            continue
        pending = reader.read_records(payload)
        records = list(pending.records)
        assert [repr(r.call()) for r in records] == [repr(c) for c in calls]  # (NaN != NaN)
        assert pending.reason == reader.read_calls(payload).reason
        for i, record in enumerate(records):
            record.answer(*ANSWERS[i % len(ANSWERS)])
        results = [r.result() for r in records]
        assert all(r is not None and repr(r.call) == repr(c)
                   for r, c in zip(results, calls, strict=True))
        try:
            expected = reader.write_results(results)  # type: ignore[arg-type]
        except toolbridge.UsageError:
            continue
        assert reader.write_records(records) == expected
        compared += len(records)
    assert compared > 0, "no payload of the dialect gave a call"


DECODED_TOOLS = [toolbridge.ToolDefinition(
    name="decoded", description="d", strict=strict,
    parameters={"type": "object", "properties": {
        "n": {"type": "integer"}, "level": {"enum": [1, 2]},
        "note": {"type": ["string", "null"]}}})
    for strict in (None, True)]


def _decoded(decode: Any, *args: Any) -> str:
    try:
        return repr(decode(*args))  # repr: 2 and 2.0 are equal, the types are not
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_records_decode_what_the_calls_decode(dialect: str) -> None:
    """`Dialect.decode_record` (what the plan calls: a built-in dialect's own, or the base's
    over `decode_arguments`) decodes a record's arguments as `decode_arguments` decodes its
    `ToolCall`'s, on the recorded payloads' calls and on arguments the wire re-typed."""
    reader = toolbridge.plugin.get_dialect(dialect)
    compared = 0
    for payload in _objects_of(dialect):
        try:
            records = list(reader.read_records(payload).records)
        except WireFormatError:
            continue
        for record in records:
            for arguments in (record.arguments, {"n": 2.0, "level": "2", "note": None},
                              {"value": {"n": 3.0}}):
                record.arguments = arguments
                for tool in DECODED_TOOLS:
                    # the record's decode first: it must not need the `ToolCall`
                    by_record = _decoded(reader.decode_record, record, tool)
                    record._call = None
                    assert by_record == _decoded(reader.decode_arguments, record.call(), tool)
                    record._call = None
                    compared += 1
    assert compared > 0, "no payload of the dialect gave a call"
