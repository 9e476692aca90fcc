"""What a package loads on first use instead of on import: names, modules, class attributes.

Plugin discovery imports every installed dialect's package, and ``import toolbridge`` should
cost little more than pydantic: whatever only some paths need is loaded by one of these.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes", "lazy_module", "lazy_options", "moved_attributes"]


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


def moved_attributes(module: str, moved: Mapping[str, str],
                     then: Callable[[str], Any] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for names that moved: each of ``moved`` (old name → its new
    public path, ``"package.module.Name"``) is imported from there with a `DeprecationWarning`
    naming that path, on every access (never kept in ``module``); other names go to ``then``
    (e.g. a `lazy_attributes` table)::

        __getattr__ = moved_attributes(__name__, {"Old": "toolbridge.testing.New"})
    """

    def __getattr__(name: str) -> Any:
        target = moved.get(name)
        if target is None:
            if then is not None:
                return then(name)
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, attribute = target.rpartition(".")
        warnings.warn(f"{module}.{name} is deprecated: use {target}", DeprecationWarning,
                      stacklevel=2)
        return getattr(importlib.import_module(where), attribute)

    return __getattr__


def lazy_module(name: str) -> types.ModuleType:
    """The module ``name`` (absolute), executed on its first attribute access
    (`importlib.util.LazyLoader`); the module itself when it is already imported.

    For a module that a package's own functions use (they do not see a lazy attribute)::

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


def lazy_options(target: str) -> Any:
    """A class attribute named as ``"package.module:Class"``, imported when first read:
    plugin discovery imports every dialect's package, and only some paths need, e.g., its
    option classes (pydantic models)::

        options = lazy_options("my_dialect.options:MyServeOptions")
    """
    return _LazyClassAttribute(target)


class _LazyClassAttribute:
    """A class attribute that imports the object it names (``"module:name"``) when first read."""

    __slots__ = ("target", "value")

    def __init__(self, target: str) -> None:
        self.target = target
        self.value: Any = None

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if self.value is None:
            module, _, name = self.target.partition(":")
            self.value = getattr(importlib.import_module(module), name)
        return self.value
