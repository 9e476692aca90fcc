"""The ``parameters`` of a function entry: the Gemini schema target's conversion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["gemini_parameters"]


def gemini_parameters(schema: Mapping[str, Any], *, policy: Any = "describe"
                      ) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """``schema`` as the function's ``parameters``, and the conversion's losses."""
    return dict(schema), ()
