"""Responses' (and Foundry's) own approval items: an ``mcp_approval_request`` output item,
answered with an ``mcp_approval_response`` input item in the next request (with
``previous_response_id`` or in the conversation). Pure functions; see docs/approvals.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge.errors import WireFormatError
from toolbridge.plugin import BackendApproval, read_arguments

from .translate import response_of
from .wire import DIALECT

__all__ = ["answer_approval", "approval_body", "read_approval"]


def read_approval(action: Mapping[str, Any]) -> BackendApproval | None:
    """The approval an output item asks for; ``None`` when it is not an approval item."""
    if action.get("type") != "mcp_approval_request":
        return None
    request_id = action.get("id")
    if not isinstance(request_id, str) or not request_id:
        raise WireFormatError(DIALECT, "mcp_approval_request.id", "missing or not text")
    raw = action.get("arguments")
    decoded = read_arguments(raw)  # bounded; text that is not an object is shown as is
    arguments: Any = decoded.values if decoded.error is None else raw
    return BackendApproval(request_id, "mcp", "", str(action.get("name") or ""), arguments,
                           str(action.get("server_label", "")), "", dict(action))


def answer_approval(approval: BackendApproval, approve: bool, reason: str = ""
                    ) -> dict[str, Any]:
    """The input item answering ``approval`` (with the reason, which this wire carries)."""
    item: dict[str, Any] = {"type": "mcp_approval_response",
                            "approval_request_id": approval.request_id, "approve": approve}
    if reason:
        item["reason"] = reason
    return item


def approval_body(payload: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]
                  ) -> dict[str, Any]:
    """The next request's fields carrying ``answers`` (input items): in the response's
    conversation, else after it (``previous_response_id``)."""
    response, _ = response_of(payload)
    conversation = response.get("conversation")
    if isinstance(conversation, Mapping):
        conversation = conversation.get("id")
    continued = ({"conversation": conversation} if isinstance(conversation, str) and conversation
                 else {"previous_response_id": str(response.get("id") or "")})
    return {**continued, "input": [dict(a) for a in answers]}
