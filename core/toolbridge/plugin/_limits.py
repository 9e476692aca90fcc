"""Bounds on what toolbridge parses from a backend, shared by every dialect and the runtime.

A payload or an argument text past one of these is refused with a typed error (the payload) or
answered with an error result (the one call), before it is parsed.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

__all__ = ["MAX_ARGUMENT_BYTES", "MAX_NESTING_DEPTH", "MAX_PAYLOAD_BYTES", "levels_deeper_than",
           "nests_deeper_than", "shallow"]

MAX_ARGUMENT_BYTES = 1 << 20
"""Largest argument text of one call (UTF-8 bytes): 1 MiB."""
MAX_NESTING_DEPTH = 200
"""Deepest nesting of arrays and objects in a payload or in one call's arguments."""
MAX_PAYLOAD_BYTES = 32 << 20
"""Largest backend payload (UTF-8 bytes of its JSON text): 32 MiB."""

_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'[]{}"')
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}.__getitem__
_CONTAINERS = (dict, list)  # what JSON decodes to (a Mapping from elsewhere counts as a leaf)
_SCALARS = frozenset((str, int, float, bool, type(None)))  # the leaves, seen by exact type first


def shallow(value: dict[Any, Any]) -> bool:
    """Whether ``value`` is the usual arguments: text names, each value a scalar or a list or
    object of scalars (so it nests at most 2 levels)."""
    for key, child in value.items():
        if type(key) is not str:
            return False
        kind = type(child)
        if kind in _SCALARS:
            continue
        if kind is not dict and kind is not list:
            return False
        for leaf in child.values() if kind is dict else child:
            if type(leaf) not in _SCALARS:
                return False
    return True


def nests_deeper_than(value: Any, limit: int = MAX_NESTING_DEPTH) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels deep in ``value``.

    ``value`` is decoded data, or JSON text (``str`` or ``bytes``) measured without parsing
    it: escapes and strings are taken out and the brackets counted, at C speed, so a hostile
    text is refused before ``json.loads`` could recurse on it. ``{"a": [1]}`` nests 2 levels, a
    scalar 0. For text that is not JSON the answer means nothing (its parse fails anyway).
    """
    if type(value) is str and value.count("[") + value.count("{") <= limit:
        return False  # too few brackets to nest deeper (counted without encoding the text)
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
        if data.count(b"[") + data.count(b"{") <= limit:
            return False  # too few brackets to nest deeper
        if b"\\" in data:
            data = _ESCAPE.sub(b"", data)
        structure = b"".join(data.translate(None, _NOT_STRUCTURE).split(b'"')[::2])
        return max(accumulate(map(_STEP, structure)), default=0) > limit
    kind = type(value)
    if kind is dict and limit >= 2 and shallow(value):
        return False
    if kind is not dict and kind is not list and not isinstance(value, _CONTAINERS):
        return limit < 0
    return levels_deeper_than(value, limit)


def levels_deeper_than(value: dict[Any, Any] | list[Any], limit: int) -> bool:
    """`nests_deeper_than` of decoded data, ``value`` a dict or list (or a subclass of one),
    counted level by level: each level's containers, no recursion (a caller may be deep
    already). For a reader that saw `shallow` refuse ``value`` (it is not asked again)."""
    level, depth = [value], 1
    while level:
        if depth > limit:
            return True
        inner = []
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                if type(child) not in _SCALARS and isinstance(child, _CONTAINERS):
                    inner.append(child)
        level, depth = inner, depth + 1
    return False
