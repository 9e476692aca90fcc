"""The plugin manager: loads plugins once, lazily, and fills the dialect registry."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

import pluggy

from ..errors import PluginError
from . import hookspecs
from ._capabilities import _KINDS, Capabilities
from ._dialect import Dialect
from ._registry import BLOCK_ENV, DialectRegistry

__all__ = ["capabilities", "dialects", "get_dialect", "plugin_manager", "register_plugin"]

log = logging.getLogger("toolbridge.plugins")

ENTRY_POINT_GROUP = "toolbridge"


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
        self._capabilities: Capabilities | None = None

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
                caller = pm.hook.toolbridge_register_dialects
                registry = DialectRegistry(_implementers(caller.get_hookimpls()))
                caller(registry=registry)
                log.debug("dialects loaded: %s", list(registry))
                self._registry = registry
            return self._registry

    def capabilities(self) -> Capabilities:
        found = self._capabilities
        if found is not None:
            return found
        with self._lock:
            if self._capabilities is None:
                found = Capabilities(self.registry())
                pm = self.manager()
                for hook in _KINDS:
                    caller = getattr(pm.hook, hook)
                    for plugin, declared in _declarations(hook, caller.get_hookimpls(),
                                                          caller()):
                        found.add(hook, plugin, declared)
                self._capabilities = found
            return self._capabilities

    def register(self, plugin: object, name: str | None = None) -> None:
        """Register a plugin object at run time (tests, applications without entry points)."""
        with self._lock:
            self.manager().register(plugin, name=name)
            self.manager().check_pending()
            self._registry = None
            self._capabilities = None

    def reset(self) -> None:
        """Forget loaded plugins; the next lookup loads them again."""
        with self._lock:
            self._pm = None
            self._registry = None
            self._capabilities = None


def _implementers(impls: list[Any]) -> dict[Any, str]:
    """Each implementation's code object, to the name of its plugin (for error messages)."""
    codes = {}
    for impl in impls:
        function = getattr(impl.function, "__func__", impl.function)
        code = getattr(function, "__code__", None)
        if code is not None:
            codes[code] = impl.plugin_name
    return codes


def _declarations(hook: str, impls: list[Any], results: list[Any]
                  ) -> Iterator[tuple[str, object]]:
    """The capabilities in a hook call's results (one list per implementation, in pluggy's
    call order: the reverse of `get_hookimpls`), each with the plugin that declared it."""
    order = [impl.plugin_name for impl in reversed(impls)]
    plugins = order if len(order) == len(results) else ["<a plugin>"] * len(results)
    for plugin, result in zip(plugins, results, strict=True):
        if not isinstance(result, (list, tuple)):
            raise PluginError(f"plugin {plugin!r}: {hook} must return a list, not "
                              f"{type(result).__name__}")
        for declared in result:
            yield plugin, declared


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


def capabilities() -> Capabilities:
    """What the installed dialects can do beyond their translations: serve backends,
    emulators, demos, migration targets and sources (`Capabilities`)."""
    found = _PLUGINS._capabilities
    return _PLUGINS.capabilities() if found is None else found


def get_dialect(name: str | Dialect) -> Dialect:
    """The installed dialect called ``name``; `UnknownDialectError` lists the installed ones."""
    if type(name) is not str and isinstance(name, Dialect):  # str first: the ABC check is slow
        return name
    registry = _PLUGINS._registry
    return (_PLUGINS.registry() if registry is None else registry)[name]
