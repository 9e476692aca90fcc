"""Every hook a toolbridge plugin can implement.

Plugins are modules or objects found through the ``toolbridge`` entry-point group (or registered
with `toolbridge.plugin_manager().register`). Mark implementations with `toolbridge.hookimpl`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .model import ToolCall, ToolDefinition, ToolResult
    from .registry import DialectRegistry

__all__ = ["hookimpl", "hookspec"]

hookspec = pluggy.HookspecMarker("toolbridge")
hookimpl = pluggy.HookimplMarker("toolbridge")


@hookspec
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    """Add dialects to ``registry`` with ``registry.add(MyDialect())``.

    Runs once, the first time any dialect is looked up, for every installed plugin. Returns
    nothing; adding a name that another plugin already added raises `PluginError`.
    """


@hookspec(firstresult=True)
def toolbridge_execute_call(
    call: ToolCall, tool: ToolDefinition, invoke: Callable[[], ToolResult]
) -> ToolResult | None:
    """Run one tool call and return its result; the first non-``None`` result wins.

    Runs for every call whose tool was found and whose arguments were valid, in a worker thread
    (so implementations may block). ``invoke()`` runs the handler with timeouts and error
    handling and returns its `ToolResult`; the core's own implementation, which runs last, just
    calls it. Cross-cutting work goes in wrappers::

        @hookimpl(wrapper=True)
        def toolbridge_execute_call(call, tool, invoke):
            started = time.perf_counter()
            result = yield                      # the result of the inner implementations
            log.info("%s took %.3fs", call.name, time.perf_counter() - started)
            return result                       # or a changed result (e.g. redacted)

    To refuse a call (approval, policy), implement it plainly, with ``tryfirst=True``, and
    return ``ToolResult.failed(call, "why")`` without calling ``invoke``; the handler then never
    runs. Never raise: an exception here becomes an error result with the exception's type.
    """
