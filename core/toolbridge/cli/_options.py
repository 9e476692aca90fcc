"""``key=value`` options from the command line, values read as JSON when they parse."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..errors import UsageError

__all__ = ["parse_key_values"]


def parse_key_values(pairs: Iterable[str], what: str = "option") -> dict[str, Any]:
    """``["a=1", "b-c=x"]`` -> ``{"a": 1, "b_c": "x"}``; `UsageError` for a pair without ``=``."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{what} {pair!r} must look like name=value")
        try:
            options[key.strip().replace("-", "_")] = json.loads(raw)
        except ValueError:
            options[key.strip().replace("-", "_")] = raw
    return options
