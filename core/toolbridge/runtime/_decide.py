"""`Approvals`: list the calls waiting for a person, and decide them, from any process.

A decision goes to the result store (`ResultStore.decide`: once per request, bound to the
call and its arguments' digest); the call's next delivery, on any worker, consumes it with
its claim. `toolbox.approvals` is one over the toolbox's store and tools; the CLI's
``toolbridge approvals`` makes one over a store URL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, UsageError
from ..store import ApprovalRequest, Decision, ResultStore, StoreKey
from ._approvals import GRANTS, grant_key

if TYPE_CHECKING:
    from ..store._approvals import Scope
    from ..tools import RegisteredTool

__all__ = ["Approvals"]


class Approvals:
    """The approval requests of ``store`` and the decisions on them; ``tools`` (when given)
    validates edited arguments at once (the claim validates them again in any case)."""

    def __init__(self, store: ResultStore | None,
                 tools: Mapping[str, RegisteredTool] | None = None) -> None:
        self.store = store
        self.tools = tools

    def pending(self, *, conversation: str | None = None, decided: bool = False
                ) -> list[ApprovalRequest]:
        """The requests waiting for a decision (``decided=True``: also those decided whose
        call has not been delivered again yet), oldest first."""
        rows = self._store().awaiting()
        requests = [ApprovalRequest.from_json(request) for request, decision in rows
                    if decided or decision is None]
        return [r for r in requests if conversation is None or r.key.conversation == conversation]

    def approve(self, request: ApprovalRequest | StoreKey, *,
                arguments: Mapping[str, Any] | None = None, scope: Scope = "call",
                by: str = "") -> Decision:
        """Run the call (with ``arguments`` instead of the model's, when given)."""
        return self.decide(request, Decision("approve", scope, arguments, by=by))

    def deny(self, request: ApprovalRequest | StoreKey, message: str, *,
             scope: Scope = "call", by: str = "") -> Decision:
        """Answer the call with ``message`` as its error result (what the model sees)."""
        return self.decide(request, Decision("deny", scope, message=message, by=by))

    def answer(self, request: ApprovalRequest | StoreKey, output: Any, *,
               by: str = "") -> Decision:
        """Answer the call with ``output`` as its result, without running it."""
        return self.decide(request, Decision("answer", output=output, by=by))

    def decide(self, request: ApprovalRequest | StoreKey, decision: Decision) -> Decision:
        """Store ``decision`` for the request; `UsageError` when the call does not await one
        (unknown, decided already, expired) or awaits it for other arguments; `ArgumentError`
        naming the field when edited arguments do not fit the tool."""
        store = self._store()
        key = request.key if isinstance(request, ApprovalRequest) else StoreKey(*request)
        stored = store.get(key)
        where = f"call {key.call_id} (conversation {key.conversation!r}, turn {key.turn!r})"
        if stored is None or stored.state != "awaiting" or stored.request is None:
            raise UsageError(f"{where} does not await approval")
        current = ApprovalRequest.from_json(stored.request)
        if isinstance(request, ApprovalRequest) and request.digest != current.digest:
            raise UsageError(f"{where} awaits approval for other arguments than the request "
                             "given; list the requests again")
        if current.expired():
            raise UsageError(f"the approval request of {where} expired; it can no longer be "
                             "decided")
        if current.origin == "backend" and decision.kind == "answer":
            raise UsageError(f"{where} was asked for by the backend: approve or deny it")
        if decision.arguments is not None:
            self._check_arguments(current, dict(decision.arguments))
        if not store.decide(key, current.digest, decision.to_json()):
            raise UsageError(f"{where} was decided already; a decision is used once")
        if decision.scope == "tool":
            records = store.records()
            if records is None:
                raise UsageError(f"{type(store).__name__} keeps no records: decide per call")
            records.put(GRANTS, grant_key(key.dialect, key.conversation, current.tool),
                        decision.to_json())
        return decision

    def _check_arguments(self, request: ApprovalRequest, arguments: dict[str, Any]) -> None:
        tool = None if self.tools is None else self.tools.get(request.tool)
        if tool is None:
            return
        try:
            tool.bind(arguments, None)
        except ArgumentError as exc:
            raise ArgumentError(f"edited arguments for {request.tool}: {exc}") from None

    def _store(self) -> ResultStore:
        if self.store is None or not self.store.approvals:
            what = "no result store" if self.store is None else type(self.store).__name__
            raise UsageError(f"approvals need a result store that keeps them, not {what}: "
                             "use store='sqlite:///results.db' (or memory://, PostgreSQL)")
        return self.store
