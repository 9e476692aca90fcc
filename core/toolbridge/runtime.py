"""The execution pipeline: find the tool, check arguments, consult the store, run, shape, limit.

Every step but running an async handler is synchronous, so a payload whose tools are all sync
and cheap is answered without an event loop (`execute_calls_sync`); the rest goes through
`execute_calls` on one. The store's part (claim, replay, reconcile, record) is in `_replay`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._limits import enforce_limits
from ._output import default_error_formatter
from ._replay import (
    Reconcile,
    Run,
    Wait,
    _complete_again,
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
from ._replay import fingerprint as fingerprint
from ._tools import CALLS, TimedOut, run_with_timeout, serialize_result
from .context import ToolContext
from .dialect import Dialect, DialectLimits
from .errors import ArgumentError, ToolError, UnknownDialectError, WireFormatError
from .model import ToolCall, ToolResult
from .registry import get_dialect, plugin_manager
from .store import ResultStore, StoreClaim, StoredResult, StoreKey, end_owner

if TYPE_CHECKING:
    import pluggy

    from ._tools import RegisteredTool
    from .toolbox import Toolbox

__all__ = ["execute_calls", "execute_calls_sync", "fingerprint"]

log = logging.getLogger("toolbridge.runtime")


# ---------------------------------------------------------------------------- drivers
def execute_calls_sync(
    toolbox: Toolbox, calls: Sequence[ToolCall], extra: Mapping[str, Any],
    dialect: Dialect | None = None,
) -> list[ToolResult] | None:
    """Answer ``calls`` in this thread, or ``None`` when one needs an event loop.

    That is the case for async handlers, and for sync handlers that are neither ``inline``
    nor the only call of the payload (those run concurrently in worker threads) or that have
    a timeout (which only a worker thread can enforce).
    """
    tools = toolbox._tools
    if len({(c.conversation, c.turn, c.id) for c in calls}) != len(calls):
        _check_unique(calls)  # raises, naming the repeated id
    single = len(calls) == 1
    for call in calls:
        tool = tools.get(call.name)
        if tool is not None and (tool.is_async or not (tool.inline or (
                single and tool_timeout(toolbox, tool) is None))):
            return None
    pm, dialects = _hooks(), _Dialects(dialect)
    if pm is not None:
        return [_answer_sync(toolbox, call, extra, dialects, pm) for call in calls]
    store = toolbox.store
    if store is not None and len(calls) > 1 and not store.durable and (
            type(store).claim_calls is not ResultStore.claim_calls):
        return _answer_batch(toolbox, store, calls, extra, dialects)
    return [_answer_fast(toolbox, call, extra, dialects) for call in calls]


def _answer_batch(
    toolbox: Toolbox, store: ResultStore, calls: Sequence[ToolCall], extra: Mapping[str, Any],
    dialects: _Dialects,
) -> list[ToolResult]:
    """A payload on a store that claims in one step (not durable: a crash forgets it all).

    The calls still run one by one in order; the store is asked once for every claim and
    once for every completion. A call the fast path cannot take goes the general way.
    """
    tools = toolbox._tools
    plans: list[tuple[RegisteredTool, Dialect | None, dict[str, Any]] | None] = []
    keys: list[StoreKey] = []
    keyed: list[ToolCall] = []
    for call in calls:
        tool = tools.get(call.name)
        dialect = dialects[call.dialect]
        kwargs = None
        if tool is not None and call.argument_error is None and not tool.context_param and (
                dialect is None or type(dialect).decode_arguments is _KEEP_ARGUMENTS):
            try:
                kwargs = tool.bind(call.arguments, None)
            except Exception:  # the general path reports it
                kwargs = None
        if kwargs is None or tool is None:
            plans.append(None)
            continue
        plans.append((tool, dialect, kwargs))
        if call.id and (call.conversation or call.turn):
            if tool.definition.side_effects and not store.warned_side_effects:
                warn_side_effects(store, call)
            keys.append(new_tuple(StoreKey, (call.dialect, call.conversation, call.turn,
                                             call.id)))
            keyed.append(call)
    claims = store.claim_calls(keys, keyed) if keys else []
    unstarted = {key: claim.owner for key, claim in zip(keys, claims, strict=True)
                 if claim.state == "claimed"}
    owners = set(unstarted.values())
    position = 0
    results: list[ToolResult] = []
    runs: list[tuple[ToolCall, RegisteredTool]] = []  # run and finished, in `done`'s order
    done: list[tuple[StoreKey, str, StoredResult]] = []
    current: tuple[ToolCall, RegisteredTool, StoreKey, str] | None = None
    try:
        for call, plan in zip(calls, plans, strict=True):
            if plan is None:
                results.append(_answer_sync(toolbox, call, extra, dialects, None))
                continue
            tool, dialect, kwargs = plan
            if not call.id or not (call.conversation or call.turn):
                results.append(_finish_fast(toolbox, call, tool, dialect, kwargs))
                continue
            key, claim = keys[position], claims[position]
            position += 1
            if claim.state != "claimed":
                results.append(_answer_sync(toolbox, call, extra, dialects, None,
                                            Run(call, tool, kwargs, dialect, key), claim))
                continue
            del unstarted[key]
            current = (call, tool, key, claim.owner)
            result = _finish_fast(toolbox, call, tool, dialect, kwargs)
            current = None
            runs.append((call, tool))
            done.append((key, claim.owner, new_tuple(StoredResult, (
                result.success, result.output, result.error))))
            results.append(result)
    except BaseException:
        try:
            if current is not None and not current[1].definition.side_effects:
                unstarted[current[2]] = current[3]  # as `abandon`: it may run again
            for key, owner in unstarted.items():  # claimed, never started: never ran
                _quietly(store.release, key, owner)
            _complete_batch(store, runs, done)
        finally:
            for owner in owners:
                end_owner(owner)
        raise
    try:
        _complete_batch(store, runs, done)
    finally:
        for owner in owners:
            end_owner(owner)
    return results


def _quietly(release: Callable[[StoreKey, str], None], key: StoreKey, owner: str) -> None:
    try:
        release(key, owner)
    except Exception as exc:
        log.error("releasing call %s failed", key.call_id, exc_info=exc)


def _complete_batch(store: ResultStore, runs: list[tuple[ToolCall, RegisteredTool]],
                    done: list[tuple[StoreKey, str, StoredResult]]) -> None:
    """Store the results of a batch; a failure is retried call by call, as `record` does."""
    if not done:
        return
    try:
        answers: list[bool | None] = list(store.complete_many(done))
    except Exception as exc:
        answers = [_complete_again(store.complete, Run(call, tool, {}, None, key, owner),
                                   owner, stored, exc)
                   for (call, tool), (key, owner, stored) in zip(runs, done, strict=True)]
    for (call, _), answer in zip(runs, answers, strict=True):
        if answer is False:
            log.warning("call %s of %s was taken over by another worker; its result was "
                        "not stored", call.id, call.name)


def _answer_fast(
    toolbox: Toolbox, call: ToolCall, extra: Mapping[str, Any], dialects: _Dialects
) -> ToolResult:
    """`_answer_sync` without plugins, for a call whose store claim is ours: everything
    inline; any other case (no tool, bad arguments, a replay, a wait) goes the general way."""
    tool = toolbox._tools.get(call.name)
    dialect = dialects[call.dialect]
    if tool is None or call.argument_error is not None or tool.context_param or (
            dialect is not None and type(dialect).decode_arguments is not _KEEP_ARGUMENTS):
        return _answer_sync(toolbox, call, extra, dialects, None)
    try:
        kwargs = tool.bind(call.arguments, None)
    except Exception:  # the general path reports it
        return _answer_sync(toolbox, call, extra, dialects, None)
    store = toolbox.store
    if store is None or not call.id or not (call.conversation or call.turn):
        return _finish_fast(toolbox, call, tool, dialect, kwargs)
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
        result = _finish_fast(toolbox, call, tool, dialect, kwargs)
    except BaseException:
        abandon(toolbox, run)
        raise
    record(toolbox, run, result)
    return result


def _finish_fast(
    toolbox: Toolbox, call: ToolCall, tool: RegisteredTool, dialect: Dialect | None,
    kwargs: dict[str, Any],
) -> ToolResult:
    """Run the handler and shape its result (`_invoke_sync` and `_finish` without a store)."""
    try:
        value = tool.handler(**kwargs)
    except Exception as exc:
        _log_failure(call, exc)
        result = ToolResult.failed(call, _format(toolbox, exc))
    else:
        result = serialize_result(call, value)
    if dialect is not None and not _fits_surely(result, dialect.limits):
        result = enforce_limits(result, dialect.limits, dialect.name, toolbox.oversize)
    return result


async def execute_calls(
    toolbox: Toolbox, calls: Sequence[ToolCall], extra: Mapping[str, Any],
    dialect: Dialect | None = None,
) -> list[ToolResult]:
    """Answer every call, concurrently (bounded), one result per call, in the calls' order."""
    _check_unique(calls)
    pm, dialects = _hooks(), _Dialects(dialect)
    if len(calls) == 1:
        return [await _answer(toolbox, calls[0], extra, dialects, pm)]
    limit = asyncio.Semaphore(toolbox.max_concurrency)

    async def bounded(call: ToolCall) -> ToolResult:
        async with limit:
            return await _answer(toolbox, call, extra, dialects, pm)

    return list(await asyncio.gather(*(bounded(c) for c in calls)))


def _answer_sync(
    toolbox: Toolbox, call: ToolCall, extra: Mapping[str, Any], dialects: _Dialects,
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
    toolbox: Toolbox, call: ToolCall, extra: Mapping[str, Any], dialects: _Dialects,
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
def _check_unique(calls: Sequence[ToolCall]) -> None:
    seen: set[tuple[str, str, str]] = set()
    for index, call in enumerate(calls):
        key = (call.conversation, call.turn, call.id)
        if key in seen:
            raise WireFormatError(
                call.dialect, f"calls[{index}].id",
                f"call id {call.id!r} appears twice in one payload; each call is run once",
            )
        seen.add(key)


def _hooks() -> pluggy.PluginManager | None:
    """The plugin manager when a plugin wraps or replaces execution, else ``None``."""
    pm = plugin_manager()
    return pm if len(pm.hook.toolbridge_execute_call.get_hookimpls()) > 1 else None


class _Dialects(dict[str, "Dialect | None"]):
    """The dialect of each call, looked up once per batch (calls may come from any dialect)."""

    def __init__(self, given: Dialect | None) -> None:
        super().__init__({} if given is None else {given.name: given})

    def __missing__(self, name: str) -> Dialect | None:
        try:
            found: Dialect | None = get_dialect(name)
        except UnknownDialectError:
            found = None
        self[name] = found
        return found


def _prepare(
    toolbox: Toolbox, call: ToolCall, extra: Mapping[str, Any], dialects: _Dialects
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
            dialect).decode_arguments is _KEEP_ARGUMENTS else dialect.decode_arguments(
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


_KEEP_ARGUMENTS = Dialect.decode_arguments  # a dialect that keeps it needs no call


def _finish(toolbox: Toolbox, run: Run, result: ToolResult) -> ToolResult:
    """Apply the size limit and store the final result."""
    if run.dialect is not None and not _fits_surely(result, run.dialect.limits):
        result = enforce_limits(result, run.dialect.limits, run.dialect.name, toolbox.oversize)
    if run.owner is not None:
        record(toolbox, run, result)
    return result


def _fits_surely(result: ToolResult, limits: DialectLimits) -> bool:
    """A successful text output short enough that no limit can be exceeded (the common case,
    decided without `enforce_limits`' general measurement)."""
    output, cap = result.output, limits.max_result_bytes
    return (result.success and type(output) is str and limits.max_result_chars is None
            and (cap is None or len(output) * 4 <= cap))


# ---------------------------------------------------------------------------- running
def _through_hooks(
    toolbox: Toolbox, pm: pluggy.PluginManager, run: Run, invoke: Callable[[], ToolResult]
) -> ToolResult:
    call = run.call
    try:
        result = pm.hook.toolbridge_execute_call(call=call, tool=run.tool.definition,
                                                 invoke=invoke)
    except Exception as exc:
        log.error("a toolbridge_execute_call hook failed for %s", call.name, exc_info=exc)
        return ToolResult.failed(call, _format(toolbox, exc))
    if not isinstance(result, ToolResult):
        return ToolResult.failed(call, "a plugin returned no result for this call")
    return result


def _format(toolbox: Toolbox, exc: BaseException) -> str:
    """The agent's error text: a `ToolError` verbatim, anything else through the formatter."""
    if isinstance(exc, ToolError):
        return str(exc)
    try:
        return str(toolbox.error_formatter(exc))
    except Exception as failure:
        log.error("the error formatter failed", exc_info=failure)
        return default_error_formatter(exc)


def _log_failure(call: ToolCall, exc: Exception) -> None:
    """A `ToolError` is a message for the agent (logged briefly); anything else in full."""
    if isinstance(exc, ToolError):
        log.info("tool %s answered an error (call %s): %s", call.name, call.id, exc)
    else:
        log.error("tool %s failed (call %s)", call.name, call.id, exc_info=exc)


def _invoke_sync(toolbox: Toolbox, run: Run) -> ToolResult:
    try:
        value = run.tool.handler(**run.kwargs)
    except Exception as exc:
        _log_failure(run.call, exc)
        return ToolResult.failed(run.call, _format(toolbox, exc))
    return serialize_result(run.call, value)


async def _invoke(toolbox: Toolbox, run: Run) -> ToolResult:
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
        _log_failure(call, exc)
        return ToolResult.failed(call, _format(toolbox, exc))
    return serialize_result(call, value)
