"""`Payload`: one payload's run, the settings it runs with and what its calls share."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ._limits import SizePolicy
from ._output import _message, default_error_formatter

if TYPE_CHECKING:
    import pluggy

    from ..store import ResultStore, StoreKey
    from ..telemetry._instruments import CallSpans
    from ._journal import Journal

__all__ = ["Columns", "Payload"]

log = logging.getLogger("toolbridge.runtime")

Columns = tuple[list["StoreKey"], list[str], list[dict[str, Any]], bool]
"""A claim's calls as columns (`Payload.columns`)."""


class Payload:
    """One payload's run: the settings it runs with and what its calls share."""

    __slots__ = ("approvals", "columns", "distinct_ids", "error_formatter", "extra", "hooks",
                 "journal", "lock", "loop", "max_concurrency", "oversize", "spans", "store",
                 "timeout")

    def __init__(self, store: ResultStore | None, timeout: float | None, max_concurrency: int,
                 error_formatter: Callable[[BaseException], str], oversize: SizePolicy,
                 hooks: pluggy.PluginManager | None, extra: Mapping[str, Any]) -> None:
        self.store = store
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.error_formatter = error_formatter
        self.oversize = oversize
        self.hooks = hooks
        """The plugin manager when a plugin wraps calls (`toolbridge_execute_call`)."""
        self.extra = extra
        self.journal: Journal | None = None
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        """The running loop, for hook chains around async handlers."""
        self.distinct_ids = False
        """Whether the plan found every call id distinct (no result is a repeat's)."""
        self.approvals = False
        """Whether a planned call's tool may need a person's approval (the plan found one)."""
        self.columns: Columns | None = None
        """What the claim of every planned call takes, made by the plan when each of them has
        a store key: keys, tool names, decoded arguments, and whether a tool has side
        effects."""
        self.spans: CallSpans | None = None
        """The calls' OpenTelemetry spans, when a tracer provider is set
        (`toolbridge.telemetry`)."""

    def format_error(self, exc: BaseException) -> str:
        """The agent's error text: a `ToolError` verbatim, anything else through the formatter."""
        if isinstance(exc, ToolError):
            return _message(exc)
        try:
            return str(self.error_formatter(exc))
        except Exception as failure:
            log.error("the error formatter failed", exc_info=failure)
            return default_error_formatter(exc)
