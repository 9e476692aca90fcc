"""`DialectRegistry`: the installed dialects by name, filled by the plugins."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..errors import PluginError, UnknownDialectError
from ._dialect import Dialect

__all__ = ["BLOCK_ENV", "DialectRegistry"]

BLOCK_ENV = "TOOLBRIDGE_BLOCK_PLUGINS"
"""Comma-separated entry-point names not to load (``*`` blocks every installed plugin)."""


class DialectRegistry(Mapping[str, Dialect]):
    """Installed dialects by name. Plugins add theirs from `toolbridge_register_dialects`."""

    def __init__(self) -> None:
        self._dialects: dict[str, Dialect] = {}
        self._providers: dict[str, str] = {}
        self._current_plugin = "<direct>"

    def add(self, dialect: Dialect) -> None:
        """Register ``dialect`` under ``dialect.name``; a name may be registered once."""
        if not isinstance(dialect, Dialect):
            raise PluginError(
                f"plugin {self._current_plugin!r} registered {dialect!r}, which is not a "
                "toolbridge.plugin.Dialect instance; subclass Dialect and register an instance"
            )
        name = getattr(dialect, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"plugin {self._current_plugin!r}: {dialect!r} has no name")
        if name in self._dialects:
            raise PluginError(
                f"dialect {name!r} registered twice: by {self._providers[name]!r} and by "
                f"{self._current_plugin!r}; uninstall one of them or block it with {BLOCK_ENV}"
            )
        self._dialects[name] = dialect
        self._providers[name] = self._current_plugin

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
