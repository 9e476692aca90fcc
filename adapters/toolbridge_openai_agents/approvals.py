"""Agents sessions' own approval items: ``mcp_approval_request`` and
``computer_use_approval_request`` required actions, answered with their ``..._result`` input
events (``POST /agents/sessions/{id}/events``). Pure functions; see docs/approvals.md.

The MCP answer carries a decision (``approve`` / ``deny``) and no reason: a denial's reason is
kept in toolbridge's records only. A computer-use request for browser origin access is
approved or denied; one for browser authentication needs credentials, so it can only be
denied (answered ``cancel``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge.errors import UsageError, WireFormatError
from toolbridge.plugin import BackendApproval

from .wire import DIALECT

__all__ = ["answer_approval", "approval_body", "read_approval"]

_KINDS = {"mcp_approval_request": "mcp", "computer_use_approval_request": "computer_use"}


def read_approval(action: Mapping[str, Any]) -> BackendApproval | None:
    """The approval a required action asks for; ``None`` when it is not an approval item."""
    kind = _KINDS.get(str(action.get("type")))
    if kind is None:
        return None
    request_id, request = action.get("request_id"), action.get("request")
    if not isinstance(request_id, str) or not request_id:
        raise WireFormatError(DIALECT, f"{action['type']}.request_id", "missing or not text")
    if not isinstance(request, Mapping):
        raise WireFormatError(DIALECT, f"{action['type']}.request", "missing or not an object")
    turn = action.get("turn_id")
    turn = turn if isinstance(turn, str) else ""
    if kind == "mcp":
        return BackendApproval(request_id, kind, turn, str(request.get("name") or ""),
                               request.get("arguments"), str(request.get("server_label", "")),
                               str(request.get("message", "")), dict(action))
    shown = {k: v for k, v in request.items() if k in ("origin", "credential_origin")}
    return BackendApproval(request_id, kind, turn, str(request.get("type", "")), shown, "",
                           str(request.get("reason") or ""), dict(action))


def answer_approval(approval: BackendApproval, approve: bool, reason: str = ""
                    ) -> dict[str, Any]:
    """The input event answering ``approval``."""
    if approval.kind == "mcp":
        return {"type": "agent.session.input.mcp_approval_request_result",
                "request_id": approval.request_id,
                "response": {"type": "mcp_tool_call",
                             "decision": "approve" if approve else "deny"}}
    if approval.tool == "browser_authentication":
        if approve:
            raise UsageError(f"computer-use request {approval.request_id} asks for browser "
                             "credentials: it cannot be approved with a yes, only denied")
        response: dict[str, Any] = {"type": "browser_authentication", "action": "cancel"}
    else:
        response = {"type": "browser_origin_access", "decision": "approve" if approve else "deny"}
    return {"type": "agent.session.input.computer_use_approval_request_result",
            "request_id": approval.request_id, "response": response}


def approval_body(payload: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]
                  ) -> dict[str, Any]:
    """The ``POST .../events`` body carrying ``answers`` (input events)."""
    return {"events": [dict(a) for a in answers]}
