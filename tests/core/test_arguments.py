"""`toolbridge.plugin.read_arguments`: every decoding failure is an error, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbridge.plugin import MAX_ARGUMENT_BYTES, MAX_NESTING_DEPTH, read_arguments


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


@pytest.mark.parametrize(("value", "expected"), [
    ('{"a": 1}', {"a": 1}), ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}), ("", {}),
    ("   ", {}), (None, {}), ('{"s": "' + "[" * 5000 + '"}', {"s": "[" * 5000}),
    ('{"d": ' + nested(MAX_NESTING_DEPTH - 1) + "}", None),
])
def test_good_arguments(value: Any, expected: Any) -> None:
    got = read_arguments(value)
    assert got.error is None
    assert got.values == (expected if expected is not None else json.loads(value))
    assert got.raw == (value if isinstance(value, str) else None)


@pytest.mark.parametrize(("value", "message"), [
    ('{"a": ', "not valid JSON"),
    ("[1, 2]", "must be a JSON object, got list"),
    (7, "must be a JSON object or its text, got int"),
    ('{"d": ' + nested(1000) + "}", f"more than {MAX_NESTING_DEPTH} levels"),
    ('{"d": ' + nested(100_000) + "}", f"more than {MAX_NESTING_DEPTH} levels"),
    ('{"d": ' + nested(MAX_NESTING_DEPTH) + "}", f"more than {MAX_NESTING_DEPTH} levels"),
    ('{"s": "' + "x" * MAX_ARGUMENT_BYTES + '"}', "over the 1,048,576-byte limit"),
    ('{"s": "' + "é" * (MAX_ARGUMENT_BYTES // 2) + '"}', "over the 1,048,576-byte limit"),
])
def test_bad_arguments_are_an_error(value: Any, message: str) -> None:
    got = read_arguments(value)
    assert got.values == {} and got.error is not None and message in got.error
    assert len(got.error) < 400  # never the whole text back


def test_a_deep_object_is_an_error_too() -> None:
    value: Any = 1
    for _ in range(MAX_NESTING_DEPTH + 5):
        value = [value]
    assert "levels deep" in str(read_arguments({"d": value}).error)


def test_none_is_an_error_where_arguments_are_required() -> None:
    assert "got NoneType" in str(read_arguments(None, none=False).error)


def test_any_failure_of_the_decoder_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(text: str) -> Any:
        raise MemoryError

    monkeypatch.setattr(json, "loads", explode)
    assert read_arguments('{"a": 1}').error == "arguments cannot be decoded: MemoryError"
