"""Names and modules a package loads on first use, keeping ``import`` light."""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes", "lazy_module"]


def lazy_attributes(module: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) importing each name of ``table`` (name → the module
    holding it, relative to ``module``) on first access, and keeping it in ``module``::

        __getattr__ = lazy_attributes(__name__, {"Client": ".client"})
    """

    def __getattr__(name: str) -> Any:
        source = table.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source, module), name)
        setattr(sys.modules[module], name, value)
        return value

    return __getattr__


def lazy_module(name: str) -> types.ModuleType:
    """The module ``name`` (absolute), executed on its first attribute access
    (`importlib.util.LazyLoader`); the module itself if it is already imported.

    For a module a package's own functions use (a lazy attribute is not seen by them)::

        if TYPE_CHECKING:
            from . import translate
        else:
            translate = lazy_module(f"{__name__}.translate")
    """
    found = sys.modules.get(name)
    if found is not None:
        return found
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}", name=name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
