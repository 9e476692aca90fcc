"""Pipeline steps shared by the general path (`_pipeline`) and the inline batch path (`_inline`)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ToolError, UnknownDialectError, WireFormatError
from ..model import ToolCall, ToolResult, new_result
from ..plugin import Dialect, DialectLimits, get_dialect
from ._limits import enforce_limits
from ._output import default_error_formatter, serialize_result

if TYPE_CHECKING:
    from ..tools import RegisteredTool
    from ._view import ToolboxView

__all__ = [
    "KEEP_ARGUMENTS", "Dialects", "check_unique", "failed", "format_error", "limited",
    "log_failure", "needs_loop", "run_inline", "shaped", "sure_length",
]

log = logging.getLogger("toolbridge.runtime")

KEEP_ARGUMENTS = Dialect.decode_arguments
"""The base `decode_arguments`: a dialect that keeps it needs no call."""


class Dialects(dict[str, "Dialect | None"]):
    """The dialect of each call, looked up once per batch (calls may come from any dialect).

    Built with `Dialects.of`; no ``__init__`` of its own, so building one costs a dict's.
    """

    @classmethod
    def of(cls, given: Dialect | None) -> Dialects:
        """The lookup for one batch, ``given`` known in advance."""
        return cls() if given is None else cls({given.name: given})

    def __missing__(self, name: str) -> Dialect | None:
        try:
            found: Dialect | None = get_dialect(name)
        except UnknownDialectError:
            found = None
        self[name] = found
        return found


def check_unique(calls: Sequence[ToolCall]) -> None:
    """Raise `WireFormatError` naming a call whose (conversation, turn, id) came before."""
    seen: set[tuple[str, str, str]] = set()
    for index, call in enumerate(calls):
        key = (call.conversation, call.turn, call.id)
        if key in seen:
            raise WireFormatError(
                call.dialect, f"calls[{index}].id",
                f"call id {call.id!r} appears twice in one payload; each call is run once",
            )
        seen.add(key)


def needs_loop(toolbox: ToolboxView, tool: RegisteredTool | None, calls: int) -> bool:
    """Whether a call of ``tool`` in a payload of ``calls`` calls needs the event loop: async
    handlers, and sync ones that are neither ``inline`` nor alone in the payload (those run
    concurrently in worker threads) or that have a timeout (only a worker thread enforces it).
    """
    if tool is None or (tool.inline and not tool.is_async):
        return False
    timeout = tool.definition.timeout if tool.definition.timeout is not None else toolbox.timeout
    return tool.is_async or calls > 1 or timeout is not None


def format_error(toolbox: ToolboxView, exc: BaseException) -> str:
    """The agent's error text: a `ToolError` verbatim, anything else through the formatter."""
    if isinstance(exc, ToolError):
        return str(exc)
    try:
        return str(toolbox.error_formatter(exc))
    except Exception as failure:
        log.error("the error formatter failed", exc_info=failure)
        return default_error_formatter(exc)


def log_failure(call: ToolCall, exc: Exception) -> None:
    """A `ToolError` is a message for the agent (logged briefly); anything else in full."""
    if isinstance(exc, ToolError):
        log.info("tool %s answered an error (call %s): %s", call.name, call.id, exc)
    else:
        log.error("tool %s failed (call %s)", call.name, call.id, exc_info=exc)


_SURE_LENGTHS: dict[int, tuple[DialectLimits, int]] = {}
"""By ``id`` of the limits (a dataclass hashes in Python, slowly), kept alive with them."""


def sure_length(dialect: Dialect) -> int:
    """The longest text output that fits ``dialect``'s limits whatever its characters."""
    limits = dialect.limits
    known = _SURE_LENGTHS.get(id(limits))
    if known is not None and known[0] is limits:
        return known[1]
    chars, cap = limits.max_result_chars, limits.max_result_bytes
    bounds = [n for n in (chars, None if cap is None else cap // 4) if n is not None]
    sure = min(bounds, default=sys.maxsize)
    _SURE_LENGTHS[id(limits)] = (limits, sure)
    return sure


def limited(toolbox: ToolboxView, result: ToolResult, dialect: Dialect | None) -> ToolResult:
    """``result`` within ``dialect``'s size limits, by the toolbox's oversize policy.

    A successful text output short enough that no limit can be exceeded (the common case) is
    decided without `enforce_limits`' general measurement.
    """
    if dialect is None:
        return result
    output = result.output
    if result.success and type(output) is str and len(output) <= sure_length(dialect):
        return result
    return enforce_limits(result, dialect.limits, dialect.name, toolbox.oversize)


def run_inline(toolbox: ToolboxView, call: ToolCall, tool: RegisteredTool, dialect: Dialect | None,
               kwargs: dict[str, Any]) -> ToolResult:
    """Run a sync handler in this thread and shape its result, within the size limits."""
    try:
        value = tool.handler(**kwargs)
    except Exception as exc:
        return failed(toolbox, call, exc, dialect)
    return shaped(toolbox, call, value, dialect)


def failed(toolbox: ToolboxView, call: ToolCall, exc: Exception, dialect: Dialect | None
           ) -> ToolResult:
    """The error result for a handler's exception (logged), within the size limits."""
    log_failure(call, exc)
    return limited(toolbox, ToolResult.failed(call, format_error(toolbox, exc)), dialect)


def shaped(toolbox: ToolboxView, call: ToolCall, value: Any, dialect: Dialect | None) -> ToolResult:
    """A handler's return value as a result, within the size limits."""
    if type(value) is str:  # the common case: text is sent as it is
        result = new_result(call, True, value, None)
    else:
        result = serialize_result(call, value)
    return limited(toolbox, result, dialect)
