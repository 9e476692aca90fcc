"""`loads`: JSON text as data, by pydantic-core's parser, with `json`'s verdict on the rest.

Argument texts and payload texts are parsed on every call: pydantic-core's parser takes a
fraction of `json.loads`'s time on them. Whatever it refuses is decoded by `json`, which
decides (and words the error): `json` reads a lone surrogate (escaped, ``"\\ud800"``, valid
JSON, or in the text itself), UTF-16 and UTF-32 bytes, and a UTF-8 byte order mark, which
pydantic-core refuses.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json

__all__ = ["loads"]


def loads(text: str | bytes | bytearray) -> Any:
    """``json.loads(text)``'s value, or its exception (the same values: see the tests)."""
    try:
        return from_json(text)
    except (ValueError, TypeError):  # TypeError: a str holding a lone surrogate
        return json.loads(text)
