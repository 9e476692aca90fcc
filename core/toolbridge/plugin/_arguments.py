"""`read_arguments`: one call's arguments from its wire value, never raising.

Every dialect whose wire carries arguments as JSON text (or may: the Agents API sends an
object but its SDK accepts a string) reads them here, so a malformed call becomes an error
result for that call alone and its payload's other calls are answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .._json_text import loads
from ._limits import (
    MAX_ARGUMENT_BYTES,
    MAX_NESTING_DEPTH,
    levels_deeper_than,
    nests_deeper_than,
    shallow,
)

__all__ = ["Arguments", "read_arguments"]


class Arguments(NamedTuple):
    """A call's decoded arguments, the text they came from, and why decoding failed."""

    values: dict[str, Any]
    """The arguments (empty when decoding failed)."""
    raw: str | None
    """The argument text as received, when the wire sent text."""
    error: str | None
    """Why the arguments cannot be used (give it to `ToolCall.argument_error`), else ``None``."""


def read_arguments(value: Any, *, none: bool = True, what: str = "arguments") -> Arguments:
    """Decode one call's ``value``: a JSON object's text, or an already decoded object.

    Empty text means no arguments, and so does ``None`` unless ``none`` is false (a wire
    where arguments are required). Text over `MAX_ARGUMENT_BYTES`, nesting deeper
    than `MAX_NESTING_DEPTH` (a cycle too), invalid JSON, JSON that is not an object, an object
    with a name that is not text (decoded data from Python), or any failure of the
    decoder itself (``RecursionError``, ``MemoryError``) gives ``Arguments({}, raw, error)``:
    never an exception. An object is copied (the payload stays the caller's).
    """
    if type(value) is dict:  # the common case (Agents, CES), first: the ABC check is slow
        if shallow(value):  # names and nesting checked in one pass
            return _new_arguments(Arguments, (value.copy(), None, None))
        if levels_deeper_than(value, MAX_NESTING_DEPTH):  # `shallow` is not asked twice
            return _new_arguments(Arguments, ({}, None, _too_deep(what)))
        for key in value:
            if type(key) is not str:
                return _new_arguments(Arguments, ({}, None, _not_text(what, key)))
        return _new_arguments(Arguments, (value.copy(), None, None))
    # Text next (Assistants, Chat, Responses), by exact type: a str fails the ABC check slowly.
    if type(value) is str or (not isinstance(value, Mapping) and isinstance(value, str)):
        raw = value
        if not value or value.isspace():
            return _new_arguments(Arguments, ({}, raw, None))
        size = len(value) if len(value) * 4 <= MAX_ARGUMENT_BYTES else len(value.encode(
            "utf-8", "surrogatepass"))
        if size > MAX_ARGUMENT_BYTES:
            return Arguments({}, raw, f"{what} are {size:,} bytes of text, over the "
                             f"{MAX_ARGUMENT_BYTES:,}-byte limit")
        if nests_deeper_than(value):
            return Arguments({}, raw, _too_deep(what))
        try:
            decoded: Any = loads(value)
        except ValueError as exc:
            return Arguments({}, raw, f"{what} are not valid JSON ({exc}): {value[:200]}")
        except Exception as exc:  # RecursionError, MemoryError: the text is pathological
            return Arguments({}, raw, f"{what} cannot be decoded: {type(exc).__name__}")
    elif isinstance(value, Mapping):
        decoded = value
        raw = None
    elif value is None and none:
        return Arguments({}, None, None)
    else:
        return Arguments({}, None, f"{what} must be a JSON object or its text, got "
                         f"{type(value).__name__}")
    if type(decoded) is dict and raw is not None:  # a new object, its text bounded already
        return _new_arguments(Arguments, (decoded, raw, None))
    if not isinstance(decoded, Mapping):
        return Arguments({}, raw, f"{what} must be a JSON object, got {type(decoded).__name__}")
    if raw is None and nests_deeper_than(decoded):
        return Arguments({}, raw, _too_deep(what))
    bad = next((key for key in decoded if not isinstance(key, str)), _TEXT_KEYS)
    if bad is not _TEXT_KEYS:
        return Arguments({}, raw, _not_text(what, bad))
    return Arguments(dict(decoded), raw, None)


_new_arguments = tuple.__new__  # Arguments(...) without its Python __new__


_TEXT_KEYS = object()


def _not_text(what: str, key: Any) -> str:
    return f"{what} must be a JSON object, whose names are text; got the key {key!r}"


def _too_deep(what: str) -> str:
    return f"{what} nest more than {MAX_NESTING_DEPTH} levels deep"
