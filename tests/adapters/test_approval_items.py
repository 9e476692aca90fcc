"""The backends' own approval items: read from what the official SDK's types describe, and
answered with what the SDK's input types accept (the SDK is the oracle)."""

from __future__ import annotations

import pytest
from openai.types.beta.agent_session import (
    RequiredActionSessionRequiredActionResourceComputerUseApprovalRequest,
    RequiredActionSessionRequiredActionResourceMcpApprovalRequest,
)
from openai.types.beta.agent_session_input_param import (
    SessionInputParamAgentSessionInputComputerUseApprovalRequestResult as ComputerUseResult,
)
from openai.types.beta.agent_session_input_param import (
    SessionInputParamAgentSessionInputMcpApprovalRequestResult as McpResult,
)
from openai.types.responses.response_input_item_param import McpApprovalResponse
from openai.types.responses.response_output_item import McpApprovalRequest
from openai_sdk_types import check_param

from toolbridge import UsageError, get_dialect
from toolbridge.plugin import capabilities


def test_only_backends_with_approval_items_declare_them() -> None:
    found = capabilities()
    assert found.approval_items("openai-agents") is not None
    assert found.approval_items("openai-responses") is not None
    for local in ("openai-assistants", "google-ces", "openai-chat"):  # local-only approvals
        assert found.approval_items(local) is None


def test_agents_mcp_approval_request_is_read_and_answered() -> None:
    action = RequiredActionSessionRequiredActionResourceMcpApprovalRequest.model_validate({
        "type": "mcp_approval_request", "request_id": "apr_1", "turn_id": "turn_1",
        "request": {"type": "mcp_tool_call", "server_label": "crm", "name": "delete_user",
                    "arguments": {"id": 7}, "message": "Delete user 7?"}}).model_dump()
    session = {"id": "sess_1", "status": "requires_action", "required_actions": [action]}
    pending = get_dialect("openai-agents").read_calls(session)
    assert pending.calls == () and len(pending.unhandled) == 1  # left to the approval items
    items = capabilities().approval_items("openai-agents")
    assert items is not None
    approval = items.read(pending.unhandled[0])
    assert approval is not None
    assert (approval.request_id, approval.kind, approval.turn, approval.tool, approval.arguments,
            approval.server, approval.message) == (
        "apr_1", "mcp", "turn_1", "delete_user", {"id": 7}, "crm", "Delete user 7?")
    for approve, decision in ((True, "approve"), (False, "deny")):
        event = items.answer(approval, approve, "not this one")
        assert check_param(event, McpResult) == []
        assert event == {"type": "agent.session.input.mcp_approval_request_result",
                         "request_id": "apr_1",
                         "response": {"type": "mcp_tool_call", "decision": decision}}
    assert items.read({"type": "function_call"}) is None


def test_agents_computer_use_requests_are_answered_by_their_kind() -> None:
    items = capabilities().approval_items("openai-agents")
    assert items is not None
    origin = RequiredActionSessionRequiredActionResourceComputerUseApprovalRequest.model_validate({
        "type": "computer_use_approval_request", "request_id": "cua_1", "turn_id": "turn_1",
        "request": {"type": "browser_origin_access", "origin": "https://bank.example",
                    "reason": "to log in"}}).model_dump()
    approval = items.read(origin)
    assert approval is not None and approval.kind == "computer_use"
    assert approval.arguments == {"origin": "https://bank.example"}
    event = items.answer(approval, True)
    assert check_param(event, ComputerUseResult) == []
    assert event["response"] == {"type": "browser_origin_access", "decision": "approve"}
    login = dict(origin, request_id="cua_2", request={
        "type": "browser_authentication", "fields": [], "options": []})
    asked = items.read(login)
    assert asked is not None
    with pytest.raises(UsageError, match="cannot be approved with a yes, only denied"):
        items.answer(asked, True)
    cancel = items.answer(asked, False)
    assert check_param(cancel, ComputerUseResult) == []
    assert cancel["response"] == {"type": "browser_authentication", "action": "cancel"}


def test_responses_mcp_approval_request_is_answered_with_a_response_item() -> None:
    item = McpApprovalRequest.model_validate({
        "type": "mcp_approval_request", "id": "mcpr_1", "server_label": "crm",
        "name": "delete_user", "arguments": '{"id": 7}'}).model_dump()
    response = {"id": "resp_1", "object": "response", "status": "completed", "output": [item]}
    pending = get_dialect("openai-responses").read_calls(response)
    assert pending.calls == () and len(pending.unhandled) == 1
    items = capabilities().approval_items("openai-responses")
    assert items is not None
    approval = items.read(pending.unhandled[0])
    assert approval is not None
    assert (approval.request_id, approval.tool, approval.arguments, approval.server) == (
        "mcpr_1", "delete_user", {"id": 7}, "crm")
    denied = items.answer(approval, False, "users are deleted by the admin team")
    assert check_param(denied, McpApprovalResponse) == []
    assert denied == {"type": "mcp_approval_response", "approval_request_id": "mcpr_1",
                      "approve": False, "reason": "users are deleted by the admin team"}
    approved = items.answer(approval, True)
    assert check_param(approved, McpApprovalResponse) == []
    assert approved == {"type": "mcp_approval_response", "approval_request_id": "mcpr_1",
                        "approve": True}
