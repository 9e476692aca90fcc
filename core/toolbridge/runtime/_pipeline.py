"""The execution pipeline: find the tool, check arguments, consult the store, run, shape, limit.

Every step but running an async handler is synchronous, so a payload whose tools are all sync
and cheap is answered without an event loop (`execute_calls_sync`); the rest goes through
`execute_calls` on one. The store's part (claim, replay, reconcile, record) is in `_replay`.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError
from ..model import ToolCall, ToolResult
from ..plugin import Dialect, plugin_manager
from ..store import MemoryStore, StoreClaim, StoreKey
from ..tools import ToolContext
from ._inline import answer_inline
from ._output import default_error_formatter, serialize_result
from ._replay import (
    Reconcile,
    Run,
    Wait,
    abandon,
    consult,
    new_tuple,
    reconcile,
    record,
    settle,
    still_running,
    tool_timeout,
    wait_limit,
    warn_side_effects,
)
from ._steps import (
    KEEP_ARGUMENTS,
    Dialects,
    check_unique,
    format_error,
    limited,
    log_failure,
    needs_loop,
    run_inline,
)
from ._threads import CALLS, TimedOut, run_with_timeout

if TYPE_CHECKING:
    import pluggy

    from ._view import ToolboxView

__all__ = ["execute_calls", "execute_calls_sync"]

log = logging.getLogger("toolbridge.runtime")


# ---------------------------------------------------------------------------- drivers
def execute_calls_sync(
    toolbox: ToolboxView, calls: Sequence[ToolCall], extra: Mapping[str, Any],
    dialect: Dialect | None = None,
) -> list[ToolResult] | None:
    """Answer ``calls`` in this thread, or ``None`` when one needs an event loop.

    That is the case for async handlers, and for sync handlers that are neither ``inline``
    nor the only call of the payload (those run concurrently in worker threads) or that have
    a timeout (which only a worker thread can enforce).
    """
    pm, store, dialects = _hooks(), toolbox.store, Dialects.of(dialect)
    if pm is None and (store is None or type(store) is MemoryStore):
        return answer_inline(toolbox, store, calls, dialects,
                             lambda call: _answer_sync(toolbox, call, extra, dialects, None))
    if len({c.id for c in calls}) != len(calls):  # distinct ids are enough, and quick to see
        check_unique(calls)  # raises when the same (conversation, turn, id) appears twice
    tools = toolbox._tools
    for call in calls:
        if needs_loop(toolbox, tools.get(call.name), len(calls)):
            return None
    if pm is not None:
        return [_answer_sync(toolbox, call, extra, dialects, pm) for call in calls]
    return [_answer_fast(toolbox, call, extra, dialects) for call in calls]


def _answer_fast(
    toolbox: ToolboxView, call: ToolCall, extra: Mapping[str, Any], dialects: Dialects
) -> ToolResult:
    """`_answer_sync` without plugins, for a call whose store claim is ours: everything
    inline; any other case (no tool, bad arguments, a replay, a wait) goes the general way."""
    tool = toolbox._tools.get(call.name)
    dialect = dialects[call.dialect]
    if tool is None or call.argument_error is not None or tool.context_param or (
            dialect is not None and type(dialect).decode_arguments is not KEEP_ARGUMENTS):
        return _answer_sync(toolbox, call, extra, dialects, None)
    try:
        kwargs = tool.bind(call.arguments, None)
    except Exception:  # the general path reports it
        return _answer_sync(toolbox, call, extra, dialects, None)
    store = toolbox.store
    if store is None or not call.id or not (call.conversation or call.turn):
        return run_inline(toolbox, call, tool, dialect, kwargs)
    key = new_tuple(StoreKey, (call.dialect, call.conversation, call.turn, call.id))
    run = Run(call, tool, kwargs, dialect, key)
    if tool.definition.side_effects and not store.durable and not store.warned_side_effects:
        warn_side_effects(store, call)
    try:
        claim = store.claim_call(key, call)
    except Exception:  # the general path reports it (and decides by side effects)
        return _answer_sync(toolbox, call, extra, dialects, None, run)
    if claim.state != "claimed":
        return _answer_sync(toolbox, call, extra, dialects, None, run, claim)
    run.owner = claim.owner
    try:
        result = run_inline(toolbox, call, tool, dialect, kwargs)
    except BaseException:
        abandon(toolbox, run)
        raise
    record(toolbox, run, result)
    return result


async def execute_calls(
    toolbox: ToolboxView, calls: Sequence[ToolCall], extra: Mapping[str, Any],
    dialect: Dialect | None = None,
) -> list[ToolResult]:
    """Answer every call, concurrently (bounded), one result per call, in the calls' order.

    A payload whose tools are all sync and ``inline`` is answered on the loop, without tasks,
    as the blocking form answers it (unless a plugin wraps calls, or the store does I/O).
    """
    pm, store, dialects = _hooks(), toolbox.store, Dialects.of(dialect)
    if pm is None and (store is None or type(store) is MemoryStore):
        results = answer_inline(toolbox, store, calls, dialects, lambda call: _answer_sync(
            toolbox, call, extra, dialects, None), in_loop=True)
        if results is not None:
            return results
    check_unique(calls)
    if len(calls) == 1:
        return [await _answer(toolbox, calls[0], extra, dialects, pm)]
    limit = asyncio.Semaphore(toolbox.max_concurrency)

    async def bounded(call: ToolCall) -> ToolResult:
        async with limit:
            return await _answer(toolbox, call, extra, dialects, pm)

    if sys.version_info >= (3, 12):  # a call that never suspends ends without a loop trip
        loop = asyncio.get_running_loop()
        tasks = [asyncio.Task(bounded(c), loop=loop, eager_start=True) for c in calls]
        return list(await asyncio.gather(*tasks))
    return list(await asyncio.gather(*(bounded(c) for c in calls)))



def _answer_sync(
    toolbox: ToolboxView, call: ToolCall, extra: Mapping[str, Any], dialects: Dialects,
    pm: pluggy.PluginManager | None, prepared: Run | None = None,
    claim: StoreClaim | None = None,
) -> ToolResult:
    """One call in this thread; ``prepared`` (and the ``claim`` the store gave it, if it is
    not ours) when `_answer_fast` already did those steps."""
    run = _prepare(toolbox, call, extra, dialects) if prepared is None else prepared
    if isinstance(run, ToolResult):
        return run
    try:
        if claim is not None:
            step = settle(toolbox, run, claim)
        else:
            step = None if run.key is None else consult(toolbox, run)
        waited, delay = 0.0, 0.002
        while isinstance(step, Wait):
            if waited > wait_limit(toolbox, run):
                return still_running(run, step.claim)
            time.sleep(delay)
            waited, delay = waited + delay, min(delay * 2, 0.1)
            step = consult(toolbox, run)
        if isinstance(step, ToolResult):
            return step
        if isinstance(step, Reconcile):
            return _finish(toolbox, run, reconcile(run, step.claim))
        if pm is None:
            return _finish(toolbox, run, _invoke_sync(toolbox, run))

        def invoke() -> ToolResult:
            return _invoke_sync(toolbox, run)

        return _finish(toolbox, run, _through_hooks(toolbox, pm, run, invoke))
    except BaseException:
        abandon(toolbox, run)
        raise


async def _answer(
    toolbox: ToolboxView, call: ToolCall, extra: Mapping[str, Any], dialects: Dialects,
    pm: pluggy.PluginManager | None,
) -> ToolResult:
    run = _prepare(toolbox, call, extra, dialects)
    if isinstance(run, ToolResult):
        return run
    blocking = toolbox.store is not None and toolbox.store.blocking
    threads = toolbox.max_concurrency  # blocking work runs on toolbridge's pools, this wide
    try:
        waited, delay = 0.0, 0.002
        while True:
            step = await CALLS.run(threads, consult, toolbox, run) if blocking else consult(
                toolbox, run)
            if not isinstance(step, Wait):
                break
            if waited > wait_limit(toolbox, run):
                return still_running(run, step.claim)
            await asyncio.sleep(delay)
            waited, delay = waited + delay, min(delay * 2, 0.1)
        if isinstance(step, ToolResult):
            return step
        if isinstance(step, Reconcile):
            result = await CALLS.run(threads, reconcile, run, step.claim)
        elif pm is None:
            result = await _invoke(toolbox, run)
        else:
            loop = asyncio.get_running_loop()

            def invoke() -> ToolResult:
                return asyncio.run_coroutine_threadsafe(_invoke(toolbox, run), loop).result()

            # Not `asyncio.to_thread`: the loop's default executor (min(32, cores + 4)
            # threads) would cap the concurrency of every payload once a plugin wraps calls.
            result = await CALLS.run(threads, _through_hooks, toolbox, pm, run, invoke)
        if blocking:
            return await CALLS.run(threads, _finish, toolbox, run, result)
        return _finish(toolbox, run, result)
    except BaseException:  # cancelled (or a bug): never leave the claim looking in flight
        abandon(toolbox, run)
        raise


# ---------------------------------------------------------------------------- stages
def _hooks() -> pluggy.PluginManager | None:
    """The plugin manager when a plugin wraps or replaces execution, else ``None``."""
    pm = plugin_manager()
    caller = pm.hook.toolbridge_execute_call
    # pluggy's own list, not `get_hookimpls()`'s copy (asked on every payload); the core's
    # implementation is always one of them.
    impls = getattr(caller, "_hookimpls", None)
    count = len(impls) if isinstance(impls, list) else len(caller.get_hookimpls())
    return pm if count > 1 else None


def _prepare(
    toolbox: ToolboxView, call: ToolCall, extra: Mapping[str, Any], dialects: Dialects
) -> Run | ToolResult:
    """Find the tool and bind the arguments; an error result when either fails."""
    tool = toolbox._tools.get(call.name)
    if tool is None:
        available = ", ".join(sorted(toolbox.names())) or "none"
        return ToolResult.failed(call, f"unknown tool {call.name!r}; available tools: {available}")
    if call.argument_error is not None:
        return ToolResult.failed(call, f"invalid arguments for {call.name}: {call.argument_error}")
    dialect = dialects[call.dialect]
    context = ToolContext(call, tool.definition, extra) if tool.context_param else None
    try:
        arguments = call.arguments if dialect is None or type(
            dialect).decode_arguments is KEEP_ARGUMENTS else dialect.decode_arguments(
            call, tool.definition)
        kwargs = tool.bind(arguments, context)
    except ArgumentError as exc:
        return ToolResult.failed(call, f"invalid arguments for {call.name}: {exc}")
    except Exception as exc:
        log.error("decoding the arguments of %s failed", call.name, exc_info=exc)
        return ToolResult.failed(call, f"invalid arguments for {call.name}: "
                                       f"{default_error_formatter(exc)}")
    key = None
    if toolbox.store is not None and call.id and (call.conversation or call.turn):
        key = new_tuple(StoreKey, (call.dialect, call.conversation, call.turn, call.id))
    return Run(call, tool, kwargs, dialect, key)


def _finish(toolbox: ToolboxView, run: Run, result: ToolResult) -> ToolResult:
    """Apply the size limit and store the final result."""
    result = limited(toolbox, result, run.dialect)
    if run.owner is not None:
        record(toolbox, run, result)
    return result


# ---------------------------------------------------------------------------- running
def _through_hooks(
    toolbox: ToolboxView, pm: pluggy.PluginManager, run: Run, invoke: Callable[[], ToolResult]
) -> ToolResult:
    call = run.call
    try:
        result = pm.hook.toolbridge_execute_call(call=call, tool=run.tool.definition,
                                                 invoke=invoke)
    except Exception as exc:
        log.error("a toolbridge_execute_call hook failed for %s", call.name, exc_info=exc)
        return ToolResult.failed(call, format_error(toolbox, exc))
    if not isinstance(result, ToolResult):
        return ToolResult.failed(call, "a plugin returned no result for this call")
    return result


def _invoke_sync(toolbox: ToolboxView, run: Run) -> ToolResult:
    try:
        value = run.tool.handler(**run.kwargs)
    except Exception as exc:
        log_failure(run.call, exc)
        return ToolResult.failed(run.call, format_error(toolbox, exc))
    return serialize_result(run.call, value)


async def _invoke(toolbox: ToolboxView, run: Run) -> ToolResult:
    """Run the handler with its timeout; exceptions become error results, logged in full."""
    call, tool = run.call, run.tool
    if tool.inline and not tool.is_async:
        return _invoke_sync(toolbox, run)
    timeout = tool_timeout(toolbox, tool)
    try:
        value = await run_with_timeout(tool.handler, run.kwargs, tool.is_async, timeout,
                                       toolbox.max_concurrency, call.name)
    except TimedOut:
        log.error("tool %s timed out after %g s (call %s)", call.name, timeout, call.id)
        return ToolResult.failed(call, f"{call.name} timed out after {timeout:g} s")
    except Exception as exc:
        log_failure(call, exc)
        return ToolResult.failed(call, format_error(toolbox, exc))
    return serialize_result(call, value)
