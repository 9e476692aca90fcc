"""`read_arguments`: one call's arguments from its wire value, never raising.

Every dialect whose wire carries arguments as JSON text (or may: the Agents API sends an
object but its SDK accepts a string) reads them here, so a malformed call becomes an error
result for that call alone and its payload's other calls are answered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from ._limits import MAX_ARGUMENT_BYTES, MAX_NESTING_DEPTH

__all__ = ["Arguments", "read_arguments"]


class Arguments(NamedTuple):
    """A call's decoded arguments, the text they came from, and why decoding failed."""

    values: dict[str, Any]
    """The arguments (empty when decoding failed)."""
    raw: str | None
    """The argument text as received, when the wire sent text."""
    error: str | None
    """Why the arguments cannot be used (give it to `ToolCall.argument_error`), else ``None``."""


def read_arguments(value: Any, *, what: str = "arguments") -> Arguments:
    """Decode one call's ``value``: a JSON object's text, or an already decoded object.

    Empty text and ``None`` mean no arguments. Text over `MAX_ARGUMENT_BYTES`, nesting deeper
    than `MAX_NESTING_DEPTH`, invalid JSON, JSON that is not an object, or any failure of the
    decoder itself (``RecursionError``, ``MemoryError``) gives ``Arguments({}, raw, error)``:
    never an exception. An object is copied (the payload stays the caller's).
    """
    if isinstance(value, Mapping):
        decoded: Any = value
        raw = None
    elif value is None:
        return Arguments({}, None, None)
    elif isinstance(value, str):
        raw = value
        if not value.strip():
            return Arguments({}, raw, None)
        size = len(value) if len(value) * 4 <= MAX_ARGUMENT_BYTES else len(value.encode(
            "utf-8", "surrogatepass"))
        if size > MAX_ARGUMENT_BYTES:
            return Arguments({}, raw, f"{what} are {size:,} bytes of text, over the "
                             f"{MAX_ARGUMENT_BYTES:,}-byte limit")
        if _brackets(value) > MAX_NESTING_DEPTH and _text_depth(value) > MAX_NESTING_DEPTH:
            return Arguments({}, raw, _too_deep(what))
        try:
            decoded = json.loads(value)
        except ValueError as exc:
            return Arguments({}, raw, f"{what} are not valid JSON ({exc}): {value[:200]}")
        except Exception as exc:  # RecursionError, MemoryError: the text is pathological
            return Arguments({}, raw, f"{what} cannot be decoded: {type(exc).__name__}")
    else:
        return Arguments({}, None, f"{what} must be a JSON object or its text, got "
                         f"{type(value).__name__}")
    if not isinstance(decoded, Mapping):
        return Arguments({}, raw, f"{what} must be a JSON object, got {type(decoded).__name__}")
    if raw is None and _value_depth(decoded) > MAX_NESTING_DEPTH:
        return Arguments({}, raw, _too_deep(what))
    return Arguments(dict(decoded), raw, None)


def _too_deep(what: str) -> str:
    return f"{what} nest deeper than {MAX_NESTING_DEPTH} levels of arrays and objects"


def _brackets(text: str) -> int:
    """How many arrays and objects ``text`` opens at most (a bound on its depth, found fast)."""
    return text.count("[") + text.count("{")


def _text_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (brackets in strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_NESTING_DEPTH:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def _value_depth(value: Any) -> int:
    """The deepest nesting of lists and mappings in ``value``, walked without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING_DEPTH:
                return deepest
        children = node.values() if isinstance(node, Mapping) else node
        for child in children:
            if isinstance(child, (Mapping, list)):
                stack.append((child, depth + 1))
    return deepest
