"""The execution pipeline: find the tool, check arguments, consult the store, run, shape, limit.

Every step but running an async handler is synchronous, so a payload whose tools are all sync
and cheap is answered without an event loop (`execute_calls_sync`); the rest goes through
`execute_calls` on one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ._limits import enforce_limits
from ._output import default_error_formatter
from ._tools import TimedOut, new_result, run_with_timeout, serialize_result
from .context import ToolContext
from .dialect import Dialect
from .errors import ArgumentError, ToolError, UnknownDialectError, WireFormatError
from .model import ToolCall, ToolResult
from .registry import get_dialect, plugin_manager
from .store import StoreClaim, StoredResult, StoreKey, end_owner

if TYPE_CHECKING:
    import pluggy

    from ._tools import RegisteredTool
    from .toolbox import Toolbox

__all__ = ["execute_calls", "execute_calls_sync"]

log = logging.getLogger("toolbridge.runtime")


@dataclass
class _Run:
    """One call on its way through the pipeline."""

    call: ToolCall
    tool: RegisteredTool
    kwargs: dict[str, Any]
    dialect: Dialect | None
    key: StoreKey | None
    owner: str | None = None


@dataclass(frozen=True)
class _Wait:
    claim: StoreClaim


@dataclass(frozen=True)
class _Reconcile:
    claim: StoreClaim


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
    _check_unique(calls)
    for call in calls:
        tool = toolbox._registered(call.name)
        if tool is not None and (tool.is_async or not (tool.inline or (
                len(calls) == 1 and _timeout(toolbox, tool) is None))):
            return None
    pm, dialects = _hooks(), _Dialects(dialect)
    return [_answer_sync(toolbox, call, extra, dialects, pm) for call in calls]


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
    pm: pluggy.PluginManager | None,
) -> ToolResult:
    run = _prepare(toolbox, call, extra, dialects)
    if isinstance(run, ToolResult):
        return run
    try:
        waited, delay = 0.0, 0.002
        while True:
            step = _consult(toolbox, run)
            if not isinstance(step, _Wait):
                break
            if waited > _wait_limit(toolbox, run):
                return _still_running(run, step.claim)
            time.sleep(delay)
            waited, delay = waited + delay, min(delay * 2, 0.1)
        if isinstance(step, ToolResult):
            return step
        if isinstance(step, _Reconcile):
            return _finish(toolbox, run, _reconcile(run, step.claim))

        def invoke() -> ToolResult:
            return _invoke_sync(toolbox, run)

        result = invoke() if pm is None else _through_hooks(toolbox, pm, run, invoke)
        return _finish(toolbox, run, result)
    except BaseException:
        _abandon(toolbox, run)
        raise


async def _answer(
    toolbox: Toolbox, call: ToolCall, extra: Mapping[str, Any], dialects: _Dialects,
    pm: pluggy.PluginManager | None,
) -> ToolResult:
    run = _prepare(toolbox, call, extra, dialects)
    if isinstance(run, ToolResult):
        return run
    blocking = toolbox.store is not None and toolbox.store.blocking
    try:
        waited, delay = 0.0, 0.002
        while True:
            step = await asyncio.to_thread(_consult, toolbox, run) if blocking else _consult(
                toolbox, run)
            if not isinstance(step, _Wait):
                break
            if waited > _wait_limit(toolbox, run):
                return _still_running(run, step.claim)
            await asyncio.sleep(delay)
            waited, delay = waited + delay, min(delay * 2, 0.1)
        if isinstance(step, ToolResult):
            return step
        if isinstance(step, _Reconcile):
            result = await asyncio.to_thread(_reconcile, run, step.claim)
        elif pm is None:
            result = await _invoke(toolbox, run)
        else:
            loop = asyncio.get_running_loop()

            def invoke() -> ToolResult:
                return asyncio.run_coroutine_threadsafe(_invoke(toolbox, run), loop).result()

            result = await asyncio.to_thread(_through_hooks, toolbox, pm, run, invoke)
        if blocking:
            return await asyncio.to_thread(_finish, toolbox, run, result)
        return _finish(toolbox, run, result)
    except BaseException:  # cancelled (or a bug): never leave the claim looking in flight
        _abandon(toolbox, run)
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
) -> _Run | ToolResult:
    """Find the tool and bind the arguments; an error result when either fails."""
    tool = toolbox._registered(call.name)
    if tool is None:
        available = ", ".join(sorted(toolbox.names())) or "none"
        return ToolResult.failed(call, f"unknown tool {call.name!r}; available tools: {available}")
    if call.argument_error is not None:
        return ToolResult.failed(call, f"invalid arguments for {call.name}: {call.argument_error}")
    dialect = dialects[call.dialect]
    context = ToolContext(call, tool.definition, extra) if tool.context_param else None
    try:
        arguments = call.arguments if dialect is None else dialect.decode_arguments(
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
        key = StoreKey(call.dialect, call.conversation, call.turn, call.id)
    return _Run(call, tool, kwargs, dialect, key)


def fingerprint(call: ToolCall) -> str:
    """A call's content (tool and arguments), to catch a call id used for another call."""
    text = call.raw_arguments if call.raw_arguments is not None else json.dumps(
        call.arguments, sort_keys=True, separators=(",", ":"), default=str)
    return f"{call.name}\0{text}"


def _consult(toolbox: Toolbox, run: _Run) -> ToolResult | _Wait | _Reconcile | None:
    """Ask the store: ``None`` means run the call (the claim is ours)."""
    store, key, call = toolbox.store, run.key, run.call
    if store is None or key is None:
        return None
    side_effects = run.tool.definition.side_effects
    if side_effects and not store.durable and not getattr(store, "warned_side_effects", True):
        store.warned_side_effects = True  # type: ignore[attr-defined]
        log.warning("tool %s has side effects but the result store is in memory: a restart "
                    "forgets which calls ran; use Toolbox(store='sqlite:///results.db')",
                    call.name)
    fp = fingerprint(call)
    try:
        claim = store.claim(key, fp, call.name)
    except Exception as exc:
        log.error("the result store failed for %s (call %s)", call.name, call.id, exc_info=exc)
        if side_effects:
            return ToolResult.failed(call, f"{call.name} was not run: the result store failed "
                                           f"({default_error_formatter(exc)})")
        run.key = None
        return None
    if claim.state == "claimed":
        run.owner = claim.owner
        return None
    if claim.fingerprint != fp:
        return ToolResult.failed(call, (
            f"call id {call.id!r} was already used in this turn for a different call (another "
            "tool or other arguments); this call was not run"))
    if claim.state == "completed" and claim.result is not None:
        stored = claim.result
        return new_result(call, stored.success, stored.output, stored.error)
    if claim.state == "abandoned":
        owner = store.take_over(key, claim.owner)
        if owner is not None:
            run.owner = owner
            return _Reconcile(claim) if side_effects else None
    return _Wait(claim)


def _reconcile(run: _Run, claim: StoreClaim) -> ToolResult:
    """The answer for a side-effecting call that started in a dead worker: never a re-run."""
    call = run.call
    try:
        answer = plugin_manager().hook.toolbridge_reconcile_call(
            call=call, tool=run.tool.definition, started_at=claim.started_at)
    except Exception as exc:
        log.error("a toolbridge_reconcile_call hook failed for %s", call.name, exc_info=exc)
        answer = None
    if isinstance(answer, ToolResult):
        return answer.model_copy(update={"call": call}) if answer.call is not call else answer
    started = datetime.fromtimestamp(claim.started_at, timezone.utc).isoformat(timespec="seconds")
    return ToolResult.failed(call, (
        f"the outcome of {call.name} (call {call.id}) is unknown: it started at {started} but "
        "its worker stopped before it completed. It has side effects, so it was not repeated; "
        "check whether it took effect before calling it again"))


def _wait_limit(toolbox: Toolbox, run: _Run) -> float:
    timeout = _timeout(toolbox, run.tool)
    return 300.0 if timeout is None else timeout + 5.0


def _still_running(run: _Run, claim: StoreClaim) -> ToolResult:
    return ToolResult.failed(run.call, (
        f"{run.call.name} (call {run.call.id}) is still running in another worker "
        f"({claim.owner}); it was not started again. Its result will answer the next delivery"))


def _finish(toolbox: Toolbox, run: _Run, result: ToolResult) -> ToolResult:
    """Apply the size limit and store the final result."""
    if run.dialect is not None:
        result = enforce_limits(result, run.dialect.limits, run.dialect.name, toolbox.oversize)
    if run.owner is not None and toolbox.store is not None and run.key is not None:
        owner, run.owner = run.owner, None
        try:
            if not toolbox.store.complete(run.key, owner, StoredResult(
                    result.success, result.output, result.error)):
                log.warning("call %s of %s was taken over by another worker; its result was "
                            "not stored", run.call.id, run.call.name)
        except Exception as exc:
            log.error("storing the result of %s (call %s) failed", run.call.name, run.call.id,
                      exc_info=exc)
        finally:
            end_owner(owner)
    return result


def _abandon(toolbox: Toolbox, run: _Run) -> None:
    """Give up a claim on cancellation: a call without side effects may run again later."""
    owner, run.owner = run.owner, None
    if owner is None or toolbox.store is None or run.key is None:
        return
    try:
        if not run.tool.definition.side_effects:
            toolbox.store.release(run.key, owner)
    except Exception as exc:
        log.error("releasing call %s failed", run.call.id, exc_info=exc)
    finally:
        end_owner(owner)


# ---------------------------------------------------------------------------- running
def _timeout(toolbox: Toolbox, tool: RegisteredTool) -> float | None:
    return tool.definition.timeout if tool.definition.timeout is not None else toolbox.timeout


def _through_hooks(
    toolbox: Toolbox, pm: pluggy.PluginManager, run: _Run, invoke: Callable[[], ToolResult]
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


def _invoke_sync(toolbox: Toolbox, run: _Run) -> ToolResult:
    try:
        value = run.tool.handler(**run.kwargs)
    except Exception as exc:
        _log_failure(run.call, exc)
        return ToolResult.failed(run.call, _format(toolbox, exc))
    return serialize_result(run.call, value)


async def _invoke(toolbox: Toolbox, run: _Run) -> ToolResult:
    """Run the handler with its timeout; exceptions become error results, logged in full."""
    call, tool = run.call, run.tool
    if tool.inline and not tool.is_async:
        return _invoke_sync(toolbox, run)
    timeout = _timeout(toolbox, tool)
    try:
        value = await run_with_timeout(tool.handler, run.kwargs, tool.is_async, timeout)
    except TimedOut:
        log.error("tool %s timed out after %g s (call %s)", call.name, timeout, call.id)
        return ToolResult.failed(call, f"{call.name} timed out after {timeout:g} s")
    except Exception as exc:
        _log_failure(call, exc)
        return ToolResult.failed(call, _format(toolbox, exc))
    return serialize_result(call, value)
