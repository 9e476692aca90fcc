"""The execution pipeline: find the tool, check arguments, run the handler, shape the result."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._output import serialize_output
from .context import ToolContext
from .dialect import Dialect
from .errors import ArgumentError, WireFormatError
from .model import ToolCall, ToolResult
from .registry import plugin_manager

if TYPE_CHECKING:
    from ._tools import RegisteredTool
    from .toolbox import Toolbox

__all__ = ["execute_calls"]

log = logging.getLogger("toolbridge.runtime")


async def execute_calls(
    toolbox: Toolbox, calls: Sequence[ToolCall], extra: Mapping[str, Any],
    dialect: Dialect | None = None,
) -> list[ToolResult]:
    """Answer every call, concurrently (bounded), one result per call, in the calls' order."""
    seen: set[tuple[str, str, str]] = set()
    for index, call in enumerate(calls):
        key = (call.conversation, call.turn, call.id)
        if key in seen:
            raise WireFormatError(
                call.dialect, f"calls[{index}].id",
                f"call id {call.id!r} appears twice in one payload; each call is run once",
            )
        seen.add(key)
    if len(calls) == 1:
        return [await _answer(toolbox, calls[0], extra, dialect)]
    limit = asyncio.Semaphore(toolbox.max_concurrency)

    async def bounded(call: ToolCall) -> ToolResult:
        async with limit:
            return await _answer(toolbox, call, extra, dialect)

    return list(await asyncio.gather(*(bounded(c) for c in calls)))


async def _answer(
    toolbox: Toolbox, call: ToolCall, extra: Mapping[str, Any], dialect: Dialect | None
) -> ToolResult:
    tool = toolbox._registered(call.name)
    if tool is None:
        available = ", ".join(sorted(toolbox.names())) or "none"
        return ToolResult.failed(call, f"unknown tool {call.name!r}; available tools: {available}")
    if call.argument_error is not None:
        return ToolResult.failed(call, f"invalid arguments for {call.name}: {call.argument_error}")
    context = ToolContext(call=call, tool=tool.definition, extra=extra)
    try:
        kwargs = tool.bind(call.arguments, context)
    except ArgumentError as exc:
        return ToolResult.failed(call, f"invalid arguments for {call.name}: {exc}")
    pm = plugin_manager()
    if len(pm.hook.toolbridge_execute_call.get_hookimpls()) == 1:
        return await _invoke(toolbox, call, tool, kwargs)
    loop = asyncio.get_running_loop()

    def invoke() -> ToolResult:
        future = asyncio.run_coroutine_threadsafe(_invoke(toolbox, call, tool, kwargs), loop)
        return future.result()

    def through_hooks() -> ToolResult:
        try:
            result = pm.hook.toolbridge_execute_call(call=call, tool=tool.definition, invoke=invoke)
        except Exception as exc:
            log.error("a toolbridge_execute_call hook failed for %s", call.name, exc_info=exc)
            return ToolResult.failed(call, toolbox.error_formatter(exc))
        if not isinstance(result, ToolResult):
            return ToolResult.failed(call, "a plugin returned no result for this call")
        return result

    return await asyncio.to_thread(through_hooks)


async def _invoke(
    toolbox: Toolbox, call: ToolCall, tool: RegisteredTool, kwargs: dict[str, Any]
) -> ToolResult:
    """Run the handler with its timeout; exceptions become error results, logged in full."""
    timeout = tool.definition.timeout if tool.definition.timeout is not None else toolbox.timeout
    try:
        if tool.inline and not tool.is_async:
            value = tool.handler(**kwargs)
        else:
            value = await _run_with_timeout(tool.handler, kwargs, tool.is_async, timeout)
    except _TimedOut:
        return ToolResult.failed(call, f"{call.name} timed out after {timeout:g} s")
    except Exception as exc:
        log.error("tool %s failed (call %s)", call.name, call.id, exc_info=exc)
        return ToolResult.failed(call, toolbox.error_formatter(exc))
    try:
        return ToolResult.ok(call, serialize_output(value))
    except Exception as exc:
        log.error("tool %s returned a value that is not JSON-compatible", call.name, exc_info=exc)
        return ToolResult.failed(call, f"{call.name} returned a {type(value).__name__}, which "
                                       "cannot be sent as a result")


class _TimedOut(Exception):
    pass


async def _run_with_timeout(
    handler: Callable[..., Any], kwargs: dict[str, Any], is_async: bool, timeout: float | None
) -> Any:
    awaitable = handler(**kwargs) if is_async else asyncio.to_thread(handler, **kwargs)
    if timeout is None:
        return await awaitable
    task = asyncio.ensure_future(awaitable)
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        task.cancel()  # an async handler is cancelled; a thread cannot be, it is abandoned
        raise _TimedOut
    return task.result()
