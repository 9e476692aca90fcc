"""Approval items on a dialect's wire: what a backend asks a person to approve, and the answer.

Some backends ask for approvals themselves (no handler of ours runs, nothing is claimed): an
Agents session's ``mcp_approval_request`` / ``computer_use_approval_request`` required
actions, a Responses (or Foundry) ``mcp_approval_request`` output item. A dialect that has
them declares an `ApprovalItemsCapability` (`ApprovesItems`, through the
``toolbridge_approval_items`` hook): ``read`` makes a `BackendApproval` of an unhandled
action, ``answer`` writes the wire's answer to it, ``body`` the `Backend.submit` body
carrying answers to a step's items. Only approve or deny (with a reason, where the wire
carries one) apply to them. The serve driver keeps each as an `ApprovalRequest` with
``origin="backend"`` in the result store (docs/approvals.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ._refs import Ref, resolve

__all__ = ["ApprovalItemsCapability", "ApprovesItems", "BackendApproval"]


@dataclass(frozen=True)
class BackendApproval:
    """One approval a backend asks for, in neutral terms."""

    request_id: str
    """The id to echo when answering."""
    kind: str
    """``mcp`` (an MCP tool call) or ``computer_use`` (a browser request)."""
    turn: str = ""
    """The turn that asked, where the wire says."""
    tool: str = ""
    """The tool's name (MCP), or the request's type (computer use)."""
    arguments: Any = None
    """The tool's decoded arguments, or what the request shows (an origin)."""
    server: str = ""
    """The MCP server's label."""
    message: str = ""
    """The backend's words for the person, when it gives any."""
    item: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """The wire item as received."""


@runtime_checkable
class ApprovalItemsCapability(Protocol):
    """A dialect whose backend asks for approvals on its wire."""

    @property
    def dialect(self) -> str: ...
    def read(self, action: Mapping[str, Any]) -> BackendApproval | None:
        """The approval ``action`` (an unhandled pending action) asks for; ``None``: it is
        not an approval item."""
        ...
    def answer(self, approval: BackendApproval, approve: bool, reason: str = ""
               ) -> dict[str, Any]:
        """The wire's answer (an input event or item) approving or denying ``approval``."""
        ...
    def body(self, payload: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]
             ) -> dict[str, Any]:
        """The `Backend.submit` body sending ``answers`` to the step whose payload is
        ``payload`` (what `Dialect.write_results` is for results)."""
        ...


@dataclass(frozen=True)
class ApprovesItems:
    """Declares ``dialect``'s approval items: ``read_ref``, ``answer_ref`` and ``body_ref``
    name the functions (``"package.module:name"``) that `ApprovalItemsCapability` describes."""

    dialect: str
    read_ref: Ref
    answer_ref: Ref
    body_ref: Ref

    def read(self, action: Mapping[str, Any]) -> BackendApproval | None:
        return resolve(self.read_ref)(action)  # type: ignore[no-any-return]

    def answer(self, approval: BackendApproval, approve: bool, reason: str = ""
               ) -> dict[str, Any]:
        return resolve(self.answer_ref)(approval, approve, reason)  # type: ignore[no-any-return]

    def body(self, payload: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]
             ) -> dict[str, Any]:
        return resolve(self.body_ref)(payload, answers)  # type: ignore[no-any-return]
