"""Every hook a toolbridge plugin can implement.

Plugins are modules or objects found through the ``toolbridge`` entry-point group (or registered
with `toolbridge.plugin.register_plugin`). Mark implementations with `toolbridge.plugin.hookimpl`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from ..model import ToolCall, ToolDefinition, ToolResult
    from ._approval_items import ApprovalItemsCapability
    from ._capabilities import (
        DemoCapability,
        EmulatorCapability,
        MigrationSourceCapability,
        MigrationTargetCapability,
        ServeCapability,
    )
    from ._registry import DialectRegistry

__all__ = ["hookimpl", "hookspec"]

hookspec = pluggy.HookspecMarker("toolbridge")
"""Marks a hook specification of the ``toolbridge`` project (this module's functions)."""
hookimpl = pluggy.HookimplMarker("toolbridge")
"""Marks a plugin's implementation of a toolbridge hook (``@hookimpl``)."""


@hookspec
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    """Add dialects to ``registry`` with ``registry.add(MyDialect())``.

    Runs once, the first time any dialect is looked up, for every installed plugin. Returns
    nothing; adding a name that another plugin already added raises `PluginError`. This is a
    dialect's core contract (its translations); what else it can do is declared by the
    capability hooks below, each returning a list (empty: not this plugin's).
    """


@hookspec
def toolbridge_serve_backends() -> Sequence[ServeCapability]:
    """Serve backends: ``[Serves("my-dialect", "my_pkg.options:MyServeOptions",
    "my_pkg.backend:connect")]``, where ``connect(options, tools)`` returns the
    `Connection` the one serve driver holds conversations through (``waits=False`` for a
    backend that keeps no pending calls between requests: ``toolbridge serve`` then needs a
    message). Used by `toolbridge.serve`, ``toolbridge serve`` and ``toolbridge worker``.
    """
    return []


@hookspec
def toolbridge_emulators() -> Sequence[EmulatorCapability]:
    """Emulated backends: ``[Emulates("my-dialect", "my_pkg.options:MyEmulatorOptions",
    "my_pkg.emulator:create")]``, where ``create(options)`` returns a
    `toolbridge.testing.emulators.Emulator`; ``hint`` tells how the vendor SDK reaches it. Used
    by ``toolbridge emulate``, ``toolbridge demo`` and `toolbridge.testing`.
    """
    return []


@hookspec
def toolbridge_demos() -> Sequence[DemoCapability]:
    """Dialects ``toolbridge demo`` shows: ``[Demos("my-dialect", rank=60)]``. A dialect is
    shown when it also declares a serve backend and an emulator; lower ranks come first.
    """
    return []


@hookspec
def toolbridge_migration_targets() -> Sequence[MigrationTargetCapability]:
    """Targets of ``toolbridge migrate --to NAME``: ``[MigratesTo("my-target", "my-dialect",
    "my_pkg.migration:open_target", summary="...")]``, where ``open_target(options)`` returns
    a `toolbridge.migration.MigrationTarget` for the ``-o KEY=VALUE`` client options.
    """
    return []


@hookspec
def toolbridge_migration_sources() -> Sequence[MigrationSourceCapability]:
    """Live sources of ``toolbridge migrate --from NAME``: ``[MigratesFrom("my-source",
    "my-dialect", "my_pkg.migration:read", summary="...")]``, where ``read(options, *,
    assistant_ids, thread_ids)`` returns the `toolbridge.migration.Workload` it reads with the
    ``--source-option KEY=VALUE`` client options.
    """
    return []


@hookspec
def toolbridge_approval_items() -> Sequence[ApprovalItemsCapability]:
    """Approval items on a dialect's wire: ``[ApprovesItems("my-dialect",
    "my_pkg.translate:read_approval", "my_pkg.translate:answer_approval")]``, where
    ``read(action)`` makes a `BackendApproval` of an unhandled pending action (``None`` for
    anything else) and ``answer(approval, approve, reason)`` writes the wire's answer. See
    docs/approvals.md.
    """
    return []


@hookspec(firstresult=True)
def toolbridge_execute_call(
    call: ToolCall, tool: ToolDefinition, invoke: Callable[[], ToolResult]
) -> ToolResult | None:
    """Run one tool call and return its result; the first non-``None`` result wins.

    Runs for every call whose tool was found and whose arguments were valid, and that the
    result store let run (not a replay). ``invoke()`` runs the handler with its timeout and
    error handling and returns its `ToolResult`; the core's own implementation, which runs
    last, just calls it. Cross-cutting work goes in wrappers::

        @hookimpl(wrapper=True)
        def toolbridge_execute_call(call, tool, invoke):
            started = time.perf_counter()
            result = yield                      # the result of the inner implementations
            log.info("%s took %.3fs", call.name, time.perf_counter() - started)
            return result                       # or a changed result (e.g. redacted)

    Where it runs: never on an event loop, so an implementation may block. The hook chain
    runs in the thread that runs the handler: a toolbridge worker thread, or the calling
    thread of the blocking entry points (``handle``, ``execute``) for the calls they run
    there (``inline`` tools, and calls without a timeout that no worker took). ``invoke()``
    calls a sync handler in that same thread, or, when the call has a timeout, in another
    worker thread it waits for (up to the timeout); an async handler runs on the event loop
    while ``invoke()`` waits for it. While any implementation other than the core's is
    registered, ``inline`` tools under ``ahandle`` run in a worker thread too.

    To refuse a call (approval, policy), implement it plainly, with ``tryfirst=True``, and
    return ``ToolResult.failed(call, "why")`` without calling ``invoke``; the handler then never
    runs. Never raise: an exception here becomes an error result with the exception's type.
    """


@hookspec(firstresult=True)
def toolbridge_reconcile_call(
    call: ToolCall, tool: ToolDefinition, started_at: float
) -> ToolResult | None:
    """Answer a ``side_effects=True`` call that started but never completed; first result wins.

    Runs when the result store holds the call as started (its handler was entered) by a
    worker that is gone (it died mid-call, at ``started_at``, a Unix time); a call claimed but
    never started is simply run. Never on an event loop: in a worker thread, or the calling
    thread of ``handle`` / ``execute`` (implementations may block, e.g. to ask the downstream
    system whether the effect happened). The call is never run again: return the
    `ToolResult` to send (and store) for it, or ``None`` to leave it to the next
    implementation. Without an answer the result is an error saying the outcome is
    unknown and the call was not repeated::

        @hookimpl
        def toolbridge_reconcile_call(call, tool, started_at):
            if tool.name == "send_invoice" and invoices.exists(call.id):
                return ToolResult.ok(call, "invoice sent")
            return None
    """
