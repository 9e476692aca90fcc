"""The dialect registry and the plugin manager that fills it from entry points."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pluggy

from . import hookspecs
from .dialect import Dialect
from .errors import PluginError, UnknownDialectError

__all__ = ["DialectRegistry", "dialects", "get_dialect", "plugin_manager"]

log = logging.getLogger("toolbridge.plugins")

ENTRY_POINT_GROUP = "toolbridge"
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
                "toolbridge.Dialect instance; subclass Dialect and register an instance"
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


class _CorePlugin:
    """The core's own implementations: the innermost step of every call."""

    @hookspecs.hookimpl(trylast=True)
    def toolbridge_execute_call(self, invoke: Any) -> Any:
        return invoke()


class _Plugins:
    """Loads plugins once, lazily, and registers their dialects."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._pm: pluggy.PluginManager | None = None
        self._registry: DialectRegistry | None = None

    def manager(self) -> pluggy.PluginManager:
        pm = self._pm  # loaded: no lock needed to read it (every call of `handle` comes here)
        if pm is not None:
            return pm
        with self._lock:
            if self._pm is None:
                pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
                pm.add_hookspecs(hookspecs)
                pm.register(_CorePlugin(), name="toolbridge.core")
                blocked = {b.strip() for b in os.environ.get(BLOCK_ENV, "").split(",") if b.strip()}
                if "*" not in blocked:
                    for name in blocked:
                        pm.set_blocked(name)
                    try:
                        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
                    except Exception as exc:  # report which plugin, not a bare traceback
                        raise PluginError(f"a toolbridge plugin failed to load: {exc!r}") from exc
                pm.check_pending()
                self._pm = pm
            return self._pm

    def registry(self) -> DialectRegistry:
        registry = self._registry
        if registry is not None:
            return registry
        with self._lock:
            if self._registry is None:
                pm = self.manager()
                registry = DialectRegistry()
                for impl in reversed(pm.hook.toolbridge_register_dialects.get_hookimpls()):
                    registry._current_plugin = impl.plugin_name
                    impl.function(registry=registry)
                registry._current_plugin = "<direct>"
                log.debug("dialects loaded: %s", list(registry))
                self._registry = registry
            return self._registry

    def register(self, plugin: object, name: str | None = None) -> None:
        """Register a plugin object at run time (tests, applications without entry points)."""
        with self._lock:
            self.manager().register(plugin, name=name)
            self.manager().check_pending()
            self._registry = None

    def reset(self) -> None:
        """Forget loaded plugins; the next lookup loads them again."""
        with self._lock:
            self._pm = None
            self._registry = None


_PLUGINS = _Plugins()


def plugin_manager() -> pluggy.PluginManager:
    """The process-wide pluggy manager (plugins loaded on first use)."""
    return _PLUGINS.manager()


def register_plugin(plugin: object, name: str | None = None) -> None:
    """Register a plugin object directly, for applications that ship no entry point."""
    _PLUGINS.register(plugin, name)


def dialects() -> DialectRegistry:
    """Every installed dialect, by name."""
    return _PLUGINS.registry()


def get_dialect(name: str | Dialect) -> Dialect:
    """The installed dialect called ``name``; `UnknownDialectError` lists the installed ones."""
    if type(name) is not str and isinstance(name, Dialect):  # str first: the ABC check is slow
        return name
    registry = _PLUGINS._registry
    return (_PLUGINS.registry() if registry is None else registry)[name]
