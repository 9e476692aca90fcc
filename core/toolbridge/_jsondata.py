"""`json_problem`: whether a value is JSON data, bounded, without recursing (stdlib only).

The schema engine (`toolbridge.schema`'s bounds check) and `ToolDefinition` share it: a key
that is not text, a number that is not finite, a value of another type or nesting past a bound
(a cycle nests without end) is found here and named by its JSON pointer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from ._articles import a_value_of

__all__ = ["JsonProblem", "json_problem"]


class JsonProblem(NamedTuple):
    """What is wrong, and where."""

    pointer: str
    """JSON pointer to the value (``/a/0``; ``""`` for the root)."""
    problem: str
    """In a few words; ``too deep`` for nesting past the bound."""


def json_problem(value: Any, max_depth: int, *, text_keys: bool = True) -> JsonProblem | None:
    """The first problem that keeps ``value`` from being JSON data nested at most ``max_depth``
    levels, or ``None``. ``text_keys=False`` checks depth only (a YAML document keys by
    numbers)."""
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 0, ())]
    while stack:
        node, depth, path = stack.pop()
        if depth > max_depth:
            return JsonProblem(_pointer(path), "too deep")
        if isinstance(node, Mapping):
            items: Any = node.items()
        elif isinstance(node, (list, tuple)):
            items = enumerate(node)
        else:
            if text_keys and (found := _scalar_problem(node)):
                return JsonProblem(_pointer(path), found)
            continue
        for key, child in items:
            if text_keys and isinstance(node, Mapping) and type(key) is not str:
                return JsonProblem(_pointer(path), f"the key {key!r} is not text")
            if isinstance(child, (Mapping, list, tuple)):
                stack.append((child, depth + 1, (*path, key)))
            elif text_keys and (found := _scalar_problem(child)):
                return JsonProblem(_pointer((*path, key)), found)
    return None


def _scalar_problem(value: Any) -> str | None:
    if isinstance(value, float):
        return f"{value} is not a JSON number" if value - value != 0.0 else None
    if value is None or isinstance(value, (str, int)):  # bool is an int
        return None
    return f"{a_value_of(value)} is not a JSON value"


def _pointer(path: tuple[Any, ...]) -> str:
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in path)
