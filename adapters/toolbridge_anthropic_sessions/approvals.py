"""Tool confirmations of Managed Agents sessions as approval items: an ``agent.tool_use`` or
``agent.mcp_tool_use`` event that a ``requires_action`` idle names (its permission policy
evaluated ``ask``), answered with ``user.tool_confirmation`` (``allow``, or ``deny`` with a
``deny_message``). Pure functions; see docs/approvals.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge.errors import WireFormatError
from toolbridge.plugin import BackendApproval

from .wire import CONFIRMATION, DIALECT

__all__ = ["answer_approval", "approval_body", "read_approval"]

_KINDS = {"agent.mcp_tool_use": "mcp", "agent.tool_use": "agent_tool"}


def read_approval(action: Mapping[str, Any]) -> BackendApproval | None:
    """The confirmation a held tool use asks for; ``None`` for anything else."""
    kind = _KINDS.get(str(action.get("type")))
    if kind is None:
        return None
    event_id = action.get("id")
    if not isinstance(event_id, str) or not event_id:
        raise WireFormatError(DIALECT, f"{action['type']}.id", "missing or not text")
    return BackendApproval(event_id, kind, "", str(action.get("name") or ""),
                           action.get("input"), str(action.get("mcp_server_name") or ""),
                           "", dict(action))


def answer_approval(approval: BackendApproval, approve: bool, reason: str = ""
                    ) -> dict[str, Any]:
    """The ``user.tool_confirmation`` event answering ``approval`` (a denial carries its
    reason as ``deny_message``)."""
    event: dict[str, Any] = {"type": CONFIRMATION, "tool_use_id": approval.request_id,
                             "result": "allow" if approve else "deny"}
    if not approve and reason:
        event["deny_message"] = reason
    return event


def approval_body(payload: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]
                  ) -> dict[str, Any]:
    """The ``POST /v1/sessions/{id}/events`` body carrying ``answers``."""
    return {"events": [dict(a) for a in answers]}
