"""The approval step of the pipeline: which calls wait for a person, and what a decision does.

Before the claim, each call of a tool with ``needs_approval`` (a bool or a predicate over the
call) gets its `ApprovalRequest`, unless a decision with ``scope="tool"`` already covers its
tool in its conversation (kept in the store's records). The claim stores a new request as
``awaiting``; a claim that finds the call decided consumes the decision in its transaction,
and `apply` then runs the call (approved, arguments perhaps edited and validated again) or
settles it (denied, answered) without running it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ArgumentError
from ..model import ToolResult
from ..store import ApprovalRequest, Decision, ResultStore, StoreKey
from ..tools import ToolContext
from ._output import default_error_formatter

if TYPE_CHECKING:
    from ..model import ToolCall
    from ..tools import RegisteredTool

__all__ = ["GRANTS", "apply", "expire", "grant_key", "prepare"]

log = logging.getLogger("toolbridge.runtime")

GRANTS = "toolbridge.approvals"
"""The records namespace of decisions taken for a tool (``scope="tool"``)."""


class Extra(Protocol):
    extra: Mapping[str, Any]


class PlannedCall(Protocol):
    """What this step reads and sets of a `toolbridge.runtime.PlannedCall`."""

    tool: RegisteredTool
    kwargs: dict[str, Any]
    arguments: dict[str, Any]
    key: StoreKey | None
    approval: str | None
    decision: str
    recorded: bool

    @property
    def call(self) -> ToolCall: ...

    @property
    def result(self) -> ToolResult | None: ...

    @property
    def payload(self) -> Extra: ...

    def failed(self, error: str) -> None: ...

    def settle(self, result: ToolResult, text: str | None = None) -> bool: ...


def grant_key(dialect: str, conversation: str, tool: str) -> str:
    """The record key of a tool's standing decision in a conversation (JSON: no NUL, which
    PostgreSQL text cannot hold)."""
    return json.dumps([dialect, conversation, tool], separators=(",", ":"), ensure_ascii=False)


def prepare(planned: Sequence[PlannedCall], store: ResultStore | None,
            expires_in: float | None) -> None:
    """Give each call that needs approval its request (``pc.approval``), or its answer: the
    tool's standing decision in this conversation, or why it cannot wait for one."""
    waiting = []
    for pc in planned:
        rule = pc.tool.needs_approval
        if rule is False:
            continue
        try:
            needed = rule is True or bool(rule(pc.call))
        except Exception as exc:
            log.error("the needs_approval predicate of %s failed", pc.call.name, exc_info=exc)
            pc.failed(f"{pc.call.name} was not run: deciding whether it needs approval failed "
                      f"({default_error_formatter(exc)})")
            pc.recorded = True
            continue
        if not needed:
            continue
        if pc.key is None or store is None or not store.approvals:
            why = ("the call has no conversation or turn to keep its request under"
                   if store is not None and store.approvals else
                   f"the result store ({type(store).__name__}) keeps no approvals")
            pc.failed(f"{pc.call.name} needs approval, but {why}; it was not run")
            pc.recorded = True
            continue
        waiting.append(pc)
    if not waiting:
        return
    records = store.records() if store is not None else None
    batch = tuple(pc.call.id for pc in planned)
    for pc in waiting:
        key = pc.key
        assert key is not None
        standing = None if records is None else records.get(
            GRANTS, grant_key(key.dialect, key.conversation, pc.call.name))
        if standing is not None:
            decision = Decision.from_json(standing)
            pc.decision = decision.outcome
            if decision.kind == "deny":
                pc.failed(decision.message or f"{pc.call.name} was denied")
                pc.recorded = True
            continue  # approved for the tool: runs as any call
        pc.approval = ApprovalRequest.of(key, pc.call.name, pc.arguments, batch=batch,
                                         expires_in=expires_in).to_json()


def apply(pc: PlannedCall, decision_json: str) -> bool:
    """Apply the decision a claim consumed; whether the call is still to run."""
    decision = Decision.from_json(decision_json)
    pc.decision = decision.outcome
    call = pc.call
    if decision.kind == "deny":
        pc.failed(decision.message or f"{call.name} was denied")
        return False
    if decision.kind == "answer":
        pc.settle(ToolResult.ok(call, decision.output))
        return False
    if decision.arguments is not None:
        try:
            pc.kwargs = rebind(pc, dict(decision.arguments))
        except ArgumentError as exc:
            pc.failed(f"invalid arguments for {call.name} (as edited in its approval): {exc}")
            return False
    return True


def rebind(pc: PlannedCall, arguments: dict[str, Any]) -> dict[str, Any]:
    """The handler's keywords for ``arguments`` (validated against the tool's schema)."""
    tool = pc.tool
    context = (ToolContext(pc.call, tool.definition, pc.payload.extra) if tool.context_param
               else None)
    return tool.bind(arguments, context)


def expire(store: ResultStore, key: StoreKey, request: ApprovalRequest) -> None:
    """Deny an expired request (its next claim answers the call with the reason)."""
    when = request.expires_at or 0.0
    stamp = datetime.fromtimestamp(when, timezone.utc).isoformat(timespec="seconds")
    store.decide(key, request.digest, Decision(
        "deny", message=f"the approval request for {request.tool} (call {key.call_id}) "
                        f"expired at {stamp} without a decision; it was not run",
        by="toolbridge").to_json())
