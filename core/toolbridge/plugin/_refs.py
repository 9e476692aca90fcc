"""Lazy references a capability holds: an object, or ``"package.module:name"`` naming it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..errors import PluginError

__all__ = ["Ref", "resolve"]

Ref = str | Callable[..., Any]
"""An object, or ``"package.module:name"`` naming it (imported on first use; ``name`` may be
dotted, ``"package.module:Class.method"``)."""


def resolve(ref: Any) -> Any:
    """The object ``ref`` names (``"package.module:name"``, where ``name`` may be dotted:
    ``"package.module:Class.method"``), or ``ref`` itself."""
    if not isinstance(ref, str):
        return ref
    module, sep, name = ref.partition(":")
    if not sep:
        raise PluginError(f"capability reference {ref!r} must look like 'package.module:name'")
    found: Any = importlib.import_module(module)
    for attribute in name.split("."):
        found = getattr(found, attribute)
    return found
