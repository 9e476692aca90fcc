"""Lazy references a capability holds: an object, or ``"package.module:name"`` naming it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..errors import PluginError

__all__ = ["Ref", "resolve"]

Ref = str | Callable[..., Any]
"""An object, or ``"package.module:name"`` naming it (imported on first use)."""


def resolve(ref: Any) -> Any:
    """The object ``ref`` names (``"package.module:name"``), or ``ref`` itself."""
    if not isinstance(ref, str):
        return ref
    module, sep, name = ref.partition(":")
    if not sep:
        raise PluginError(f"capability reference {ref!r} must look like 'package.module:name'")
    return getattr(importlib.import_module(module), name)
