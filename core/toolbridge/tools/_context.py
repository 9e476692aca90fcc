"""`ToolContext`: what a handler can learn about the call it is answering."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..model import ToolCall, ToolDefinition
from ..store import StoreKey, idempotency_key

__all__ = ["HeartbeatHook", "ToolContext", "heartbeats"]

HeartbeatHook = Callable[..., None]
"""Called with a handler's progress details (any JSON-compatible values)."""

_HEARTBEAT: ContextVar[HeartbeatHook | None] = ContextVar("toolbridge_heartbeat", default=None)


@contextmanager
def heartbeats(hook: HeartbeatHook | None) -> Iterator[None]:
    """Route `ToolContext.heartbeat` of the calls planned inside this block to ``hook``.

    What runs calls somewhere that watches them (a fleet worker's activity) sets it; the
    hook may be called from a worker thread.
    """
    token = _HEARTBEAT.set(hook)
    try:
        yield
    finally:
        _HEARTBEAT.reset(token)


@dataclass(frozen=True)
class ToolContext:
    """Injected into a handler parameter annotated ``ToolContext``; never part of the schema."""

    call: ToolCall
    """The pending call being answered."""
    tool: ToolDefinition
    """The definition of the tool being run."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """The ``context`` mapping given to `Toolbox.handle` / `execute` (e.g. a user id)."""
    on_heartbeat: HeartbeatHook | None = field(default_factory=_HEARTBEAT.get, repr=False,
                                               compare=False)
    """Where `heartbeat` reports (set by `heartbeats` where the call was planned)."""

    @property
    def call_id(self) -> str:
        """The call's id as the backend sent it."""
        return self.call.id

    @property
    def dialect(self) -> str:
        """Name of the dialect the call came from."""
        return self.call.dialect

    @property
    def conversation(self) -> str:
        """The session or thread of the call."""
        return self.call.conversation

    @property
    def idempotency_key(self) -> str:
        """A key to hand to the API the handler calls (a payment API's ``Idempotency-Key``):
        the same across re-delivery, driver retries, a resumed conversation, another worker
        and fleet retries of this call, distinct between calls. Derived from the call's store
        key (dialect, conversation, turn, call id; `toolbridge.store.idempotency_key`)."""
        call = self.call
        return idempotency_key(StoreKey(call.dialect, call.conversation, call.turn, call.id))

    def heartbeat(self, *details: Any) -> None:
        """Say the call is still making progress (a long tool, now and then).

        On a fleet worker this is the activity's heartbeat (``details`` are kept for the next
        attempt); elsewhere it does nothing.
        """
        if self.on_heartbeat is not None:
            self.on_heartbeat(*details)
