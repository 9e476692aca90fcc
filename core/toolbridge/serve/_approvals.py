"""A turn whose calls wait for a person ends ``awaiting_approval``, without invented results.

The toolbox answers what it may (`toolbridge.errors.AwaitingApproval` carries those results);
the driver submits them where the backend takes results one by one, and ends the turn with
the requests as its detail. The conversation is resumed by serving it again once decided
(from any process): the backend still lists the calls (or, for one that lists none, the
turn's checkpoint, kept for it, holds them), the store consumes the decisions.

The backend's own approval items (`toolbridge.plugin.ApprovalItemsCapability`) go through the
same store state: `BackendItems` claims each as a call whose `ApprovalRequest` has
``origin="backend"`` (no handler runs it), and a claim that consumes its decision sends the
wire's answer (`Backend.submit`) and completes the call with it, so it is sent once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import AwaitingApproval
from ..model import ToolResult
from ..plugin import Backend, BackendApproval, Step, capabilities
from ..runtime._approvals import expire
from ..store import (
    ApprovalRequest,
    Decision,
    ResultStore,
    StoreCall,
    StoreClaim,
    StoreCompletion,
    StoredResult,
    StoreKey,
)

if TYPE_CHECKING:
    from ..toolbox import Toolbox
    from ._transcript import Transcript

__all__ = ["BackendItems", "answered", "awaiting_step", "keeps"]

T = TypeVar("T")


def answered(waiting: AwaitingApproval) -> list[ToolResult]:
    """The results of the calls that do not wait."""
    return [r for r in waiting.results if r is not None]


def awaiting_step(waiting: AwaitingApproval) -> Step:
    """The turn's final step: the requests, for the transcript and whoever decides."""
    return _awaiting(waiting.requests, str(waiting))


def _awaiting(requests: Sequence[ApprovalRequest], error: str) -> Step:
    detail: list[dict[str, Any]] = [
        {"call_id": r.key.call_id, "tool": r.tool, "arguments": dict(r.arguments),
         "conversation": r.key.conversation, "turn": r.key.turn, "expires_at": r.expires_at,
         "origin": r.origin}
        for r in requests]
    return Step("awaiting_approval", error=error, detail=detail)


def keeps(final: Step) -> bool:
    """Whether a turn that ended with ``final`` keeps its checkpoint where the backend lists
    no pending calls: one awaiting approval resumes from it."""
    return final.status == "awaiting_approval"


class BackendItems:
    """A conversation's approval items asked by its backend, kept in the toolbox's store:
    `read` finds them among a step's unhandled actions, `settle` claims them and sends the
    decided ones' answers once (`key` names the call each is stored as); each answer sent is
    a note in ``transcript`` when given."""

    __slots__ = ("_backend", "_items", "_toolbox", "_transcript")

    def __init__(self, backend: Backend, toolbox: Toolbox,
                 transcript: Transcript | None = None) -> None:
        self._backend = backend
        self._toolbox = toolbox
        self._transcript = transcript
        self._items = capabilities().approval_items(backend.dialect.name)

    def read(self, actions: Sequence[Mapping[str, Any]]
             ) -> tuple[list[BackendApproval], list[Mapping[str, Any]]]:
        """The approval items among unhandled ``actions``, and the other actions."""
        approvals: list[BackendApproval] = []
        others: list[Mapping[str, Any]] = []
        for action in actions:
            found = None if self._items is None else self._items.read(action)
            if found is None:
                others.append(action)
            else:
                approvals.append(found)
        return approvals, others

    async def settle(self, step: Step, approvals: Sequence[BackendApproval]) -> Step | None:
        """Answer the decided ``approvals`` of ``step`` (each once: a call completed with its
        answer is never answered again); the step after them, an ``awaiting_approval`` one
        while some wait, or ``None`` when the next step arrives through `Backend.next`."""
        store = self._toolbox.store
        if store is None or not store.approvals:
            what = "no result store" if store is None else type(store).__name__
            return Step("incomplete", error=f"the backend asks for approvals, which need a "
                        f"result store that keeps them, not {what}",
                        detail=[dict(a.item) for a in approvals])
        keys = [self.key(a) for a in approvals]
        batch = tuple(a.request_id for a in approvals)
        calls = [StoreCall(k, a.tool, _arguments(a), ApprovalRequest.of(
            k, a.tool, _arguments(a), origin="backend", batch=batch,
            expires_in=self._toolbox.approval_expiry).to_json())
            for k, a in zip(keys, approvals, strict=True)]
        claims = await _io(store, lambda: self._claim(store, calls))
        waiting: list[ApprovalRequest] = []
        decided: list[tuple[BackendApproval, StoreKey, str, Decision]] = []
        elsewhere = False
        for approval, key, claim in zip(approvals, keys, claims, strict=True):
            if claim.state == "awaiting" and claim.request is not None:
                waiting.append(ApprovalRequest.from_json(claim.request))
            elif claim.state == "claimed" and claim.decision is not None:
                decided.append((approval, key, claim.owner,
                                Decision.from_json(claim.decision)))
            elif claim.state == "reused":
                return Step("incomplete", error=f"approval request {approval.request_id} "
                            "reuses the id of another call in the store", detail=dict(
                                approval.item))
            else:  # completed: answered once already; running: another worker answers it
                elsewhere = elsewhere or claim.state == "running"
        following: Step | None = None
        if decided:
            following = await self._send(store, step, decided)
        if waiting:
            names = ", ".join(f"{r.tool} ({r.key.call_id})" for r in waiting)
            return _awaiting(waiting, f"{len(waiting)} approval request(s) of the backend "
                                      f"wait for a decision: {names}")
        if decided or self._backend.streams:
            return following
        why = ("another worker is answering them" if elsewhere
               else "they were answered already")
        return Step("incomplete", error=f"the backend still lists approval requests; {why}",
                    detail=[dict(a.item) for a in approvals])

    def key(self, approval: BackendApproval) -> StoreKey:
        """The store key of ``approval``'s call: (dialect, conversation, turn, request id)."""
        return StoreKey(self._backend.dialect.name, self._backend.conversation, approval.turn,
                        approval.request_id)

    @staticmethod
    def _claim(store: ResultStore, calls: list[StoreCall]) -> list[StoreClaim]:
        """Claim the items; an expired undecided request is denied as expired, then claimed
        (so its denial is sent)."""
        claims = store.claim(calls)
        expired = [i for i, c in enumerate(claims) if c.state == "awaiting" and c.request
                   and ApprovalRequest.from_json(c.request).expired()]
        for i in expired:
            expire(store, calls[i].key, ApprovalRequest.from_json(str(claims[i].request)))
        if expired:
            again = store.claim([calls[i] for i in expired])
            for i, claim in zip(expired, again, strict=True):
                claims[i] = claim
        return claims

    async def _send(self, store: ResultStore, step: Step,
                    decided: list[tuple[BackendApproval, StoreKey, str, Decision]]
                    ) -> Step | None:
        """Send the decisions' answers in one submission, then complete their calls."""
        assert self._items is not None
        items = self._items
        held = [(key, owner) for _, key, owner, _ in decided]
        try:
            answers = [items.answer(a, d.kind == "approve", d.message)
                       for a, _, _, d in decided]
            await _io(store, lambda: store.write(started=held))
            following = await self._backend.submit(step, items.body(step.payload or {},
                                                                    answers))
        except BaseException:
            await _io(store, lambda: store.write(released=held))
            raise
        done = [StoreCompletion(key, owner, StoredResult(
            d.kind == "approve", {"approved": d.kind == "approve", "reason": d.message},
            None if d.kind == "approve" else d.message or "denied"))
            for _, key, owner, d in decided]
        await _io(store, lambda: store.write(completed=done))
        if self._transcript is None:
            return following
        for (approval, _, _, decision), answer in zip(decided, answers, strict=True):
            said = "approved" if decision.kind == "approve" else (
                f"denied: {decision.message}" if decision.message else "denied")
            self._transcript.add("note", f"approval request of {approval.tool}: {said}"
                                 + (f" (by {decision.by})" if decision.by else ""), answer,
                                 call=approval.request_id, tool=approval.tool)
        return following


def _arguments(approval: BackendApproval) -> dict[str, Any]:
    """What the person is shown, as the store's arguments (text that is no object, as is)."""
    shown = approval.arguments
    return dict(shown) if isinstance(shown, Mapping) else {"arguments": shown}


async def _io(store: ResultStore, work: Callable[[], T]) -> T:
    """``work`` on the store: in a worker thread for a blocking one."""
    if store.blocking:
        return await asyncio.to_thread(work)
    return work()
