"""`DialectRegistry`: the installed dialects by name, filled by the plugins."""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import PluginError, UnknownDialectError
from ._dialect import Dialect

__all__ = ["BLOCK_ENV", "DialectRegistry"]

BLOCK_ENV = "TOOLBRIDGE_BLOCK_PLUGINS"
"""Comma-separated entry-point names not to load (``*`` blocks every installed plugin)."""


class DialectRegistry(Mapping[str, Dialect]):
    """Installed dialects by name. Plugins add theirs from `toolbridge_register_dialects`."""

    def __init__(self, implementers: Mapping[Any, str] | None = None) -> None:
        self._dialects: dict[str, Dialect] = {}
        self._providers: dict[str, str] = {}
        self._implementers: dict[Any, str] = dict(implementers or {})
        """The hook implementations' code objects, to their plugins' names."""

    def add(self, dialect: Dialect) -> None:
        """Register ``dialect`` under ``dialect.name``; a name may be registered once."""
        plugin = self._caller()
        if not isinstance(dialect, Dialect):
            raise PluginError(
                f"plugin {plugin!r} registered {dialect!r}, which is not a "
                "toolbridge.plugin.Dialect instance; subclass Dialect and register an instance"
            )
        name = getattr(dialect, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"plugin {plugin!r}: {dialect!r} has no name")
        if name in self._dialects:
            raise PluginError(
                f"dialect {name!r} registered twice: by {self._providers[name]!r} and by "
                f"{plugin!r}; uninstall one of them or block it with {BLOCK_ENV}"
            )
        self._dialects[name] = dialect
        self._providers[name] = plugin

    def _caller(self) -> str:
        """The plugin whose `toolbridge_register_dialects` is calling `add` (found on the
        call stack, the hook having been called through pluggy)."""
        frame = inspect.currentframe()
        while frame is not None:
            found = self._implementers.get(frame.f_code)
            if found is not None:
                return found
            frame = frame.f_back
        return "<direct>"

    def provider(self, name: str) -> str:
        """The plugin that registered dialect ``name``."""
        self[name]
        return self._providers[name]

    def __getitem__(self, name: str) -> Dialect:
        try:
            return self._dialects[name]
        except KeyError:
            raise UnknownDialectError(name, sorted(self._dialects)) from None

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._dialects))

    def __len__(self) -> int:
        return len(self._dialects)
