"""What a dialect can do beyond its translations, each declared through its own hook.

A dialect's core contract is its translations (`Dialect`). Everything else is a capability
that a plugin declares by returning it from a hook, so the core never names a dialect:

=====================================  ==============================  =====================
hook                                   returns                         used by
=====================================  ==============================  =====================
``toolbridge_serve_backends``          `Serves` (a `ServeCapability`)  `toolbridge.serve`,
                                                                       ``toolbridge serve``
``toolbridge_emulators``               `Emulates`                      ``toolbridge emulate``,
                                                                       `toolbridge.testing`
``toolbridge_demos``                   `Demos`                         ``toolbridge demo``
``toolbridge_migration_targets``       `MigratesTo`                    ``migrate --to``
``toolbridge_migration_sources``       `MigratesFrom`                  ``migrate --from``
``toolbridge_approval_items``          `ApprovesItems`                 docs/approvals.md
=====================================  ==============================  =====================

Each capability is a small protocol; the classes here implement them with lazy references
(``"package.module:name"``), so declaring one imports nothing heavy. `capabilities` collects
what every installed plugin declares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._articles import a
from ..errors import PluginError, UsageError
from ._approval_items import ApprovalItemsCapability
from ._refs import Ref, resolve

if TYPE_CHECKING:
    from ..model import ToolDefinition
    from ._backend import Connection
    from ._dialect import Dialect
    from ._options import DialectOptions, ServeOptions

__all__ = [
    "Capabilities",
    "DemoCapability",
    "Demos",
    "Emulates",
    "EmulatorCapability",
    "MigratesFrom",
    "MigratesTo",
    "MigrationSourceCapability",
    "MigrationTargetCapability",
    "ServeCapability",
    "Serves",
]

@runtime_checkable
class ServeCapability(Protocol):
    """A dialect served by the one serve driver: its options and its `Connection`."""

    @property
    def dialect(self) -> str: ...
    @property
    def options(self) -> type[ServeOptions]: ...
    @property
    def waits(self) -> bool:
        """The service keeps a conversation's pending calls between requests, so a worker can
        serve a conversation that waits (Chat Completions keeps none)."""
        ...
    def connect(self, options: ServeOptions | Mapping[str, Any] | None,
                tools: Sequence[ToolDefinition]) -> Connection: ...


@runtime_checkable
class EmulatorCapability(Protocol):
    """A dialect's emulated backend (a `toolbridge.testing.emulators.Emulator`)."""

    @property
    def dialect(self) -> str: ...
    @property
    def options(self) -> type[DialectOptions]: ...
    def create(self, options: DialectOptions | Mapping[str, Any] | None = None) -> Any: ...
    def sdk_hint(self, base_url: str) -> str:
        """How the vendor's official SDK reaches an emulator at ``base_url`` (one line)."""
        ...


@runtime_checkable
class DemoCapability(Protocol):
    """A dialect shown by ``toolbridge demo`` (it also serves and is emulated)."""

    @property
    def dialect(self) -> str: ...
    @property
    def rank(self) -> int:
        """Where it comes in the demo (lower first; then by name)."""
        ...


@runtime_checkable
class MigrationTargetCapability(Protocol):
    """A backend that ``toolbridge migrate --to NAME`` writes assistants and threads to."""

    @property
    def name(self) -> str: ...
    @property
    def dialect(self) -> str: ...
    @property
    def summary(self) -> str: ...
    def open(self, options: Mapping[str, Any]) -> Any:
        """A `toolbridge.migration.MigrationTarget` for client ``options`` (``-o`` pairs)."""
        ...


@runtime_checkable
class MigrationSourceCapability(Protocol):
    """A live backend that ``toolbridge migrate --from NAME`` reads a workload from."""

    @property
    def name(self) -> str: ...
    @property
    def dialect(self) -> str: ...
    @property
    def summary(self) -> str: ...
    def open(self, options: Mapping[str, Any], *, assistant_ids: Sequence[str] | None = None,
             thread_ids: Sequence[str] | None = None, wait_runs: float | None = None) -> Any:
        """A `toolbridge.migration.Workload` read with client ``options`` (``wait_runs``:
        seconds to wait for unfinished runs to end)."""
        ...


@dataclass(frozen=True)
class Serves:
    """Declares a serve backend: ``connect`` (a reference to ``f(options, tools)`` returning
    the `Connection`; ``options`` already parsed) and its `ServeOptions` subclass ``options``."""

    dialect: str
    options_ref: Ref = field(repr=False)
    connect_ref: Ref = field(repr=False)
    waits: bool = True

    @property
    def options(self) -> type[ServeOptions]:
        return resolve(self.options_ref)  # type: ignore[no-any-return]

    def connect(self, options: ServeOptions | Mapping[str, Any] | None,
                tools: Sequence[ToolDefinition]) -> Connection:
        factory = resolve(self.connect_ref)
        return factory(self.options.parse(options), list(tools))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Emulates:
    """Declares an emulator: ``create`` (a reference to ``f(options)`` returning the
    `toolbridge.testing.emulators.Emulator`) and its options class ``options``; ``hint`` says
    how the vendor's SDK reaches it (``{base_url}`` is filled in)."""

    dialect: str
    options_ref: Ref = field(repr=False)
    create_ref: Ref = field(repr=False)
    hint: str = "SDK endpoint: {base_url}"

    @property
    def options(self) -> type[DialectOptions]:
        return resolve(self.options_ref)  # type: ignore[no-any-return]

    def create(self, options: DialectOptions | Mapping[str, Any] | None = None) -> Any:
        return resolve(self.create_ref)(self.options.parse(options))

    def sdk_hint(self, base_url: str) -> str:
        return self.hint.format(base_url=base_url)


@dataclass(frozen=True)
class Demos:
    """Declares that ``toolbridge demo`` shows this dialect, at ``rank``."""

    dialect: str
    rank: int = 100


@dataclass(frozen=True)
class MigratesTo:
    """Declares a migration target ``name`` written by ``dialect``: ``open`` references
    ``f(options)`` returning the `toolbridge.migration.MigrationTarget`."""

    name: str
    dialect: str
    open_ref: Ref = field(repr=False)
    summary: str = ""

    def open(self, options: Mapping[str, Any]) -> Any:
        return resolve(self.open_ref)(dict(options))


@dataclass(frozen=True)
class MigratesFrom:
    """Declares a live migration source ``name``: ``open`` references
    ``f(options, *, assistant_ids, thread_ids, wait_runs)`` returning the
    `toolbridge.migration.Workload`."""

    name: str
    dialect: str
    open_ref: Ref = field(repr=False)
    summary: str = ""

    def open(self, options: Mapping[str, Any], *, assistant_ids: Sequence[str] | None = None,
             thread_ids: Sequence[str] | None = None, wait_runs: float | None = None) -> Any:
        return resolve(self.open_ref)(dict(options), assistant_ids=assistant_ids,
                                      thread_ids=thread_ids, wait_runs=wait_runs)


_KINDS: dict[str, tuple[str, type]] = {
    # hook name: (what it is called in messages, the protocol its results follow)
    "toolbridge_serve_backends": ("serve backend", ServeCapability),
    "toolbridge_emulators": ("emulator", EmulatorCapability),
    "toolbridge_demos": ("demo", DemoCapability),
    "toolbridge_migration_targets": ("migration target", MigrationTargetCapability),
    "toolbridge_migration_sources": ("migration source", MigrationSourceCapability),
    "toolbridge_approval_items": ("approval items", ApprovalItemsCapability),
}
"""Every capability hook. Serve backends, emulators and demos are keyed by dialect;
migration targets and sources by their own name."""


class Capabilities:
    """What the installed plugins declare, by kind (see the module docs)."""

    def __init__(self, dialects: Mapping[str, Dialect]) -> None:
        self._dialects = dialects
        self._found: dict[str, dict[str, Any]] = {hook: {} for hook in _KINDS}
        self._providers: dict[tuple[str, str], str] = {}

    def add(self, hook: str, plugin: str, declared: object) -> None:
        """Record ``declared`` (returned by ``plugin``'s ``hook``), checking its protocol, its
        dialect and that nothing else declared the same."""
        what, protocol = _KINDS[hook]
        if not isinstance(declared, protocol):
            raise PluginError(f"plugin {plugin!r} declared {declared!r} as {a(what)}, but it is "
                              f"not a toolbridge.plugin.{protocol.__name__}")
        dialect = declared.dialect  # type: ignore[attr-defined]
        if dialect not in self._dialects:
            raise PluginError(f"plugin {plugin!r} declared {a(what)} for dialect {dialect!r}, "
                              "which no plugin registered")
        key = getattr(declared, "name", dialect) if hook.startswith(
            "toolbridge_migration") else dialect
        if key in self._found[hook]:
            raise PluginError(f"{what} {key!r} declared twice: by "
                              f"{self._providers[hook, key]!r} and by {plugin!r}")
        self._found[hook][key] = declared
        self._providers[hook, key] = plugin

    def serving(self, dialect: str) -> ServeCapability:
        """``dialect``'s serve backend; `UsageError` names the dialects that have one."""
        return self._get("toolbridge_serve_backends", dialect)  # type: ignore[no-any-return]

    def emulator(self, dialect: str) -> EmulatorCapability:
        """``dialect``'s emulator; `UsageError` names the dialects that ship one."""
        return self._get("toolbridge_emulators", dialect)  # type: ignore[no-any-return]

    def migration_target(self, name: str) -> MigrationTargetCapability:
        """The migration target ``name``; `UsageError` lists the declared ones."""
        return self._get("toolbridge_migration_targets", name)  # type: ignore[no-any-return]

    def migration_source(self, name: str) -> MigrationSourceCapability:
        """The migration source ``name``; `UsageError` lists the declared ones."""
        return self._get("toolbridge_migration_sources", name)  # type: ignore[no-any-return]

    def approval_items(self, dialect: str) -> ApprovalItemsCapability | None:
        """``dialect``'s approval items on its wire, if its backend asks for approvals."""
        return self._found["toolbridge_approval_items"].get(dialect)

    def serve_backends(self) -> list[ServeCapability]:
        return self._all("toolbridge_serve_backends")

    def emulators(self) -> list[EmulatorCapability]:
        return self._all("toolbridge_emulators")

    def migration_targets(self) -> list[MigrationTargetCapability]:
        return self._all("toolbridge_migration_targets")

    def migration_sources(self) -> list[MigrationSourceCapability]:
        return self._all("toolbridge_migration_sources")

    def demos(self) -> list[DemoCapability]:
        """The dialects ``toolbridge demo`` shows, in order: declared, served and emulated."""
        found = self._found
        shown = [d for d in found["toolbridge_demos"].values()
                 if d.dialect in found["toolbridge_serve_backends"]
                 and d.dialect in found["toolbridge_emulators"]]
        return sorted(shown, key=lambda d: (d.rank, d.dialect))

    def of(self, dialect: str) -> list[str]:
        """What ``dialect`` declares, in words (``toolbridge dialects`` lists them)."""
        said = [what for hook, (what, _) in _KINDS.items()
                if not hook.startswith("toolbridge_migration") and dialect in self._found[hook]]
        for hook in ("toolbridge_migration_targets", "toolbridge_migration_sources"):
            said += [f"{_KINDS[hook][0]} {key}" for key, d in sorted(self._found[hook].items())
                     if d.dialect == dialect]
        return said

    def _get(self, hook: str, key: str) -> Any:
        found = self._found[hook].get(key)
        if found is not None:
            return found
        what = _KINDS[hook][0]
        known = ", ".join(sorted(self._found[hook])) or "none"
        raise UsageError(f"no {what} {key!r} is declared by an installed plugin; installed: "
                         f"{known}")

    def _all(self, hook: str) -> list[Any]:
        return [self._found[hook][key] for key in sorted(self._found[hook])]
