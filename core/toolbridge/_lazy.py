"""Names a package imports on first use (PEP 562), keeping ``import`` light."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(module: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` importing each name of ``table`` (name → the module holding
    it, relative to ``module``) on first access, and keeping it in ``module``::

        __getattr__ = lazy_attributes(__name__, {"Client": ".client"})
    """

    def __getattr__(name: str) -> Any:
        source = table.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(source, module), name)
        setattr(sys.modules[module], name, value)
        return value

    return __getattr__
