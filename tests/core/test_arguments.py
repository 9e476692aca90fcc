"""`toolbridge.plugin.read_arguments`: every decoding failure is an error, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbridge import _json_text
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


class Node(dict[str, Any]):
    """A dict subclass: a container all the same."""


def chain(depth: int, container: Any = list) -> Any:
    """``depth`` levels of ``container`` (``list`` or a dict type), a model's usual objects
    beside them so that the object is not one `shallow` accepts."""
    value: Any = {"leaf": 1}
    for _ in range(depth - 1):
        value = [value] if container is list else container(next=value, name="n")
    return value


@pytest.mark.parametrize("container", [list, dict, Node])
def test_a_decoded_object_nests_at_most_the_limit(container: Any) -> None:
    """Decoded objects are measured level by level, dict subclasses too: the limit itself is
    accepted (and the object copied), one level more is an error."""
    fits = {"d": chain(MAX_NESTING_DEPTH - 1, container), "items": [{"a": [1]}]}
    got = read_arguments(fits)
    assert got.error is None and got.values == fits and got.values is not fits
    deeper = {"d": chain(MAX_NESTING_DEPTH, container), "items": [{"a": [1]}]}
    assert f"more than {MAX_NESTING_DEPTH} levels" in str(read_arguments(deeper).error)


def test_a_cycle_is_an_error() -> None:
    looped: dict[str, Any] = {"name": "a", "items": [{"a": 1}]}
    looped["self"] = {"again": looped}
    assert f"more than {MAX_NESTING_DEPTH} levels" in str(read_arguments(looped).error)


def test_none_is_an_error_where_arguments_are_required() -> None:
    assert "got NoneType" in str(read_arguments(None, none=False).error)


def test_any_failure_of_the_decoder_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(text: str) -> Any:
        raise MemoryError

    monkeypatch.setattr(json, "loads", explode)
    monkeypatch.setattr(_json_text, "from_json", explode)  # the parser tried first
    assert read_arguments('{"a": 1}').error == "arguments cannot be decoded: MemoryError"

    def refuse(text: str) -> Any:
        raise ValueError("refused")

    monkeypatch.setattr(_json_text, "from_json", refuse)  # then `json` decides
    assert read_arguments('{"a": 1}').error == "arguments cannot be decoded: MemoryError"


EDGE_TEXTS = [
    '{"a": 1e400}', '{"a": -0}', '{"a": -0.0}', '{"a": 123456789012345678901234567890}',
    '{"a": 1, "a": 2, "b": 3}', '{"a": NaN}', '{"a": -Infinity}', '{"a": "\\ud800"}',
    '{"a": "\\udc00\\ud800"}', '{"\\ud83d\\ude00": "\\u00e9\\n"}', '{"a": 1.5e-320}',
    '{"a": 12345678901234567890.5}', '{"a": 9007199254740993}', '{"a": 1E2, "b": 1.0}',
    ' {"a": [1, 2, {"b": null}]}\n', '{"a": 1} x', '{"a": tru}', '{"a": "\x01"}', '{"a": 01}',
    '{"a": .5}', '{"a": 1.}', '{"a": 1,}', '[1]', '"x"', "\u00a0{}", '{"a": 1}\x00', "{}",
    '{"a": "\\/\\b\\f\\r\\t"}', '{"a": [], "b": {}}', "1", "null", "{'a': 1}",
]


def _same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (``1 == 1.0`` is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return repr(a) == repr(b)


@pytest.mark.parametrize("text", EDGE_TEXTS + [
    json.dumps({"k": chr(c) * 3, "n": c / 7, "i": c, "l": [c, None, True]})
    for c in range(0, 0x3000, 97)])
def test_the_fast_parser_reads_what_json_reads(text: str) -> None:
    """pydantic-core parses argument texts first; what it accepts, `json` reads the same, and
    what it refuses gets `json`'s verdict (a lone surrogate is JSON to `json`)."""
    got = read_arguments(text)
    try:
        expected = json.loads(text)
    except ValueError:
        assert got.error is not None and "not valid JSON" in got.error
        return
    if isinstance(expected, dict):
        assert got.error is None and _same(got.values, expected)
    else:
        assert got.error is not None and got.values == {}


@pytest.mark.parametrize("text", [*EDGE_TEXTS, '{"a": "\ud800"}', '{"a": "\udfff\ud83d"}'])
@pytest.mark.parametrize("form", ["str", "utf-8", "utf-8-sig", "utf-16", "utf-32-le"])
def test_loads_is_json_loads(text: str, form: str) -> None:
    """`toolbridge._json_text.loads` (payloads, arguments) gives `json.loads`'s value or error."""
    data: str | bytes = text if form == "str" else text.encode(form, "surrogatepass")
    try:
        expected: Any = json.loads(data)
    except ValueError as exc:
        with pytest.raises(type(exc)):
            _json_text.loads(data)
        return
    assert _same(_json_text.loads(data), expected)
