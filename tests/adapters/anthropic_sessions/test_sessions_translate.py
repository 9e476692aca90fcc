"""The sessions dialect's translations on session events, checked against the anthropic
SDK's types (our bodies parse as its params; its objects read as payloads)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types.beta.beta_managed_agents_custom_tool_params import (
    BetaManagedAgentsCustomToolParams,
)
from anthropic.types.beta.sessions.beta_managed_agents_agent_custom_tool_use_event import (
    BetaManagedAgentsAgentCustomToolUseEvent,
)
from anthropic.types.beta.sessions.beta_managed_agents_session_status_idle_event import (
    BetaManagedAgentsSessionStatusIdleEvent,
)
from anthropic.types.beta.sessions.beta_managed_agents_user_custom_tool_result_event_params import (
    BetaManagedAgentsUserCustomToolResultEventParams,
)
from anthropic.types.beta.sessions.beta_managed_agents_user_tool_confirmation_event_params import (
    BetaManagedAgentsUserToolConfirmationEventParams,
)
from openai_sdk_types import check_param  # structural TypedDict checks (any SDK)

import toolbridge
from toolbridge import Content, DocumentPart, ImagePart, TextPart, ToolResult, WireFormatError
from toolbridge.plugin import capabilities

DIALECT = "anthropic-sessions"
STAMP = "2026-04-01T10:00:00Z"


def use(event_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": event_id, "type": "agent.custom_tool_use", "name": name, "input": arguments,
            "processed_at": STAMP}


def idle(event_id: str, *ids: str) -> dict[str, Any]:
    return {"id": event_id, "type": "session.status_idle", "processed_at": STAMP,
            "stop_reason": {"type": "requires_action", "event_ids": list(ids)}}


def toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"sunny in {city}"

    @box.tool
    def chart(city: str) -> Content:
        """A chart."""
        return Content(parts=(TextPart(text=city), ImagePart(url="data:image/png;base64,AAAA")))

    @box.tool
    def report() -> list[DocumentPart]:
        """The quarterly report."""
        return [DocumentPart(data="JVBERi0xLjQ=", title="q3.pdf"),
                DocumentPart(media_type="text/plain", data="bm90ZXM="),
                DocumentPart(url="https://example.com/q3.pdf")]

    return box


PAGE = {"session_id": "sesn_1", "data": [
    {"id": "sevt_0", "type": "user.message", "processed_at": STAMP,
     "content": [{"type": "text", "text": "weather?"}]},
    use("sevt_1", "get_weather", {"city": "Paris"}),
    use("sevt_2", "get_weather", {"city": "Lima"}),
    idle("sevt_3", "sevt_1", "sevt_2")]}


def test_several_custom_tool_uses_of_one_idle_are_read_and_answered() -> None:
    for event in PAGE["data"][1:3]:
        BetaManagedAgentsAgentCustomToolUseEvent.model_validate(event)
    BetaManagedAgentsSessionStatusIdleEvent.model_validate(PAGE["data"][3])
    calls = toolbridge.get_dialect(DIALECT).read_calls(PAGE).calls
    assert [(c.id, c.arguments, c.conversation) for c in calls] == [
        ("sevt_1", {"city": "Paris"}, "sesn_1"), ("sevt_2", {"city": "Lima"}, "sesn_1")]
    body = toolbox().handle(DIALECT, json.dumps(PAGE))
    assert body == {"events": [
        {"type": "user.custom_tool_result", "custom_tool_use_id": "sevt_1",
         "content": [{"type": "text", "text": "sunny in Paris"}]},
        {"type": "user.custom_tool_result", "custom_tool_use_id": "sevt_2",
         "content": [{"type": "text", "text": "sunny in Lima"}]}]}
    for event in body["events"]:
        assert check_param(event, BetaManagedAgentsUserCustomToolResultEventParams) == []


def test_answered_calls_are_no_longer_pending_and_a_reused_id_is_again() -> None:
    answered = {"id": "sevt_4", "type": "user.custom_tool_result",
                "custom_tool_use_id": "sevt_1", "content": []}
    page = {"data": [*PAGE["data"], answered, idle("sevt_5", "sevt_2")]}
    assert [c.id for c in toolbridge.get_dialect(DIALECT).read_calls(page).calls] == ["sevt_2"]
    reused = {"data": [*page["data"][:-1], use("sevt_1", "get_weather", {"city": "Rome"}),
                       idle("sevt_6", "sevt_1", "sevt_2")]}
    calls = toolbridge.get_dialect(DIALECT).read_calls(reused).calls
    assert [(c.id, c.arguments["city"]) for c in calls] == [("sevt_1", "Rome"),
                                                          ("sevt_2", "Lima")]


def test_one_event_and_the_sdk_objects_are_payloads() -> None:
    event = BetaManagedAgentsAgentCustomToolUseEvent.model_validate(
        use("sevt_9", "get_weather", {"city": "Oslo"}))
    body = toolbox().handle(DIALECT, event, conversation="sesn_2")
    assert body["events"][0]["custom_tool_use_id"] == "sevt_9"
    [call] = toolbridge.get_dialect(DIALECT).read_calls_in(event.model_dump(mode="json"),
                                                           "sesn_2").calls
    assert call.conversation == "sesn_2"


def test_errors_and_content_results() -> None:
    [call] = toolbridge.get_dialect(DIALECT).read_calls(
        {"data": [use("sevt_1", "chart", {"city": "Oslo"})]}).calls
    dialect = toolbridge.get_dialect(DIALECT)
    ok = dialect.write_results([ToolResult(call=call, success=True, output=Content(parts=(
        TextPart(text="Oslo"), ImagePart(url="https://example.com/c.png"),
        ImagePart(url="data:image/png;base64,AAAA"))))])["events"][0]
    assert ok["content"] == [
        {"type": "text", "text": "Oslo"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/c.png"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "AAAA"}}]
    failed = dialect.write_results([ToolResult(call=call, success=False, error="boom")])
    assert failed["events"][0] == {"type": "user.custom_tool_result",
                                   "custom_tool_use_id": "sevt_1",
                                   "content": [{"type": "text", "text": "boom"}],
                                   "is_error": True}
    for event in (ok, failed["events"][0]):
        assert check_param(event, BetaManagedAgentsUserCustomToolResultEventParams) == []


def test_a_handler_returning_documents_writes_document_blocks() -> None:
    dialect = toolbridge.get_dialect(DIALECT)
    calls = dialect.read_calls({"data": [use("sevt_1", "report", {})]}).calls
    [event] = dialect.write_results(toolbox().execute(calls))["events"]
    assert event["content"] == [
        {"type": "document", "title": "q3.pdf", "source": {
            "type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                        "data": "notes"}},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/q3.pdf"}}]
    assert check_param(event, BetaManagedAgentsUserCustomToolResultEventParams) == []


@pytest.mark.parametrize(("payload", "field"), [
    ({"events": []}, "data"),
    ({"type": "session.status_idle"}, "data"),
    ({"data": [1]}, "data[0]"),
    ({"data": [{"id": "x"}]}, "data[0].type"),
    ({"data": [{"type": "session.status_idle", "stop_reason": {
        "type": "requires_action", "event_ids": "sevt_1"}}]}, "data[0].stop_reason.event_ids"),
    ({"data": [{"type": "agent.custom_tool_use", "id": "sevt_1", "input": {}}]},
     "agent.custom_tool_use.name"),
])
def test_malformed_payloads_name_the_field(payload: dict[str, Any], field: str) -> None:
    with pytest.raises(WireFormatError) as caught:
        toolbridge.get_dialect(DIALECT).read_calls(payload)
    assert caught.value.field == field and caught.value.dialect == DIALECT


def test_arguments_that_are_not_an_object_are_an_error_result() -> None:
    body = toolbox().handle(DIALECT, {"data": [use("sevt_1", "get_weather", "Paris")]})
    assert body["events"][0]["is_error"] is True


def test_tools_render_as_custom_tools_and_import_back() -> None:
    dialect = toolbridge.get_dialect(DIALECT)
    rendered = dialect.render_tools(list(toolbox())).definitions
    for tool in rendered:  # input_schema takes any JSON Schema keyword (extra_items=object)
        problems = check_param(tool, BetaManagedAgentsCustomToolParams)
        assert [p for p in problems if not p.startswith("$.input_schema: unknown key")] == []
        assert tool["input_schema"]["type"] == "object"
    imported = dialect.import_tools([*rendered, {"type": "agent_toolset_20260401"}])
    assert [t.name for t in imported.definitions] == ["get_weather", "chart", "report"]
    assert [s.kind for s in imported.skipped] == ["agent_toolset_20260401"]
    assert dialect.render_tools(imported.definitions).definitions == rendered


def test_confirmations_are_approval_items() -> None:
    items = capabilities().approval_items(DIALECT)
    assert items is not None
    held = {"id": "sevt_7", "type": "agent.mcp_tool_use", "name": "delete_user",
            "input": {"id": 7}, "mcp_server_name": "crm", "evaluated_permission": "ask",
            "processed_at": STAMP}
    pending = toolbridge.get_dialect(DIALECT).read_calls({"data": [held, idle("sevt_8",
                                                                               "sevt_7")]})
    assert pending.calls == () and list(pending.unhandled) == [held]
    approval = items.read(held)
    assert approval is not None
    assert (approval.request_id, approval.tool, approval.server) == ("sevt_7", "delete_user",
                                                                    "crm")
    allow, deny = items.answer(approval, True), items.answer(approval, False, "not today")
    assert allow == {"type": "user.tool_confirmation", "tool_use_id": "sevt_7",
                     "result": "allow"}
    assert deny["deny_message"] == "not today" and deny["result"] == "deny"
    for event in (allow, deny):
        assert check_param(event, BetaManagedAgentsUserToolConfirmationEventParams) == []
    assert items.body({}, [allow]) == {"events": [allow]}
    assert items.read(use("sevt_1", "get_weather", {})) is None
