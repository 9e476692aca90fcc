"""Argument strings decoded so that a bad one fails its own call, never the payload.

Until the shared bounded decoder lands in `toolbridge.plugin` (issue 13), this uses the shared
bounds: over `MAX_ARGUMENT_BYTES`, invalid JSON, deeper than `MAX_NESTING_DEPTH`, or anything
the decoder raises (`RecursionError` included) becomes that call's ``argument_error``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolbridge.plugin import MAX_ARGUMENT_BYTES, MAX_NESTING_DEPTH

__all__ = ["decode_arguments"]


def decode_arguments(raw: Any) -> tuple[dict[str, Any], str | None, str | None]:
    """``(arguments, raw text, why decoding failed)`` of one call's ``arguments`` field."""
    if isinstance(raw, Mapping):  # some SDK-built payloads already hold an object
        return dict(raw), None, None
    if raw is None:
        return {}, None, None
    if not isinstance(raw, str):
        return {}, None, f"arguments must be a JSON string, got {type(raw).__name__}"
    if not raw.strip():
        return {}, raw, None
    size = len(raw.encode("utf-8", "surrogatepass"))
    if size > MAX_ARGUMENT_BYTES:
        return {}, raw[:200], (f"arguments are {size:,} bytes, over the {MAX_ARGUMENT_BYTES:,}"
                               "-byte limit")
    try:
        value = json.loads(raw)
    except RecursionError:
        return {}, raw, f"arguments nest deeper than {MAX_NESTING_DEPTH} levels"
    except Exception as exc:  # anything the decoder raises fails this call only
        return {}, raw, f"arguments are not valid JSON ({exc}): {raw[:200]}"
    if not isinstance(value, dict):
        return {}, raw, f"arguments must be a JSON object, got {type(value).__name__}"
    if _deeper_than(value, MAX_NESTING_DEPTH):
        return {}, raw, f"arguments nest deeper than {MAX_NESTING_DEPTH} levels"
    return value, raw, None


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))
    return False
