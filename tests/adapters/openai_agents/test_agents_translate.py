"""Translation: recorded payloads in, wire payloads out, checked against the SDK's types."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents_support import payload
from openai.types.beta.agent_session import AgentSession
from openai.types.beta.agent_session_event import AgentSessionEvent
from openai.types.beta.agents.session_create_params import SessionCreateParamsNonStreaming
from openai_sdk_types import check_events_body, check_model, check_param, check_tools
from pydantic import TypeAdapter

import toolbridge
from toolbridge import Content, DocumentPart, ImagePart, TextPart, ToolDefinition, ToolResult
from toolbridge.testing import check_dialect
from toolbridge_openai_agents import OpenAIAgentsDialect

DIALECT = "openai-agents"


@pytest.fixture
def dialect() -> OpenAIAgentsDialect:
    d = toolbridge.get_dialect(DIALECT)
    assert isinstance(d, OpenAIAgentsDialect)
    return d


def test_registered_through_the_entry_point(dialect: OpenAIAgentsDialect) -> None:
    assert toolbridge.dialects().provider(DIALECT) == "openai_agents"
    assert dialect.limits.content_parts is True
    assert dialect.limits.max_tools_bytes == 3_145_728
    assert 4_000_000 < (dialect.limits.max_result_bytes or 0) < 4_194_304


def test_conformance(dialect: OpenAIAgentsDialect, toolbox: toolbridge.Toolbox) -> None:
    check_dialect(dialect, list(toolbox), payload("session.retrieve.response"))


# ------------------------------------------------------------------ definitions
def test_tools_match_the_recorded_create_request(dialect: OpenAIAgentsDialect) -> None:
    recorded = payload("session-create.request")
    tools = [ToolDefinition(name=t["name"], description=t["description"],
                            parameters=t["parameters"], defer_loading=t.get("defer_loading", False))
             for t in recorded["agent"]["tools"] if t["type"] == "function"]
    assert dialect.render_tools(tools).definitions == recorded["agent"]["tools"]


def test_rendered_tools_and_create_body_fit_the_sdk_types(toolbox: toolbridge.Toolbox) -> None:
    tools = toolbox.definitions(DIALECT)
    assert check_tools(tools) == []
    body = {"environment": {"type": "none"}, "agent": {"model": "gpt-5", "tools": tools},
            "input": "hi"}
    assert check_param(body, SessionCreateParamsNonStreaming) == []
    assert all("strict" not in t for t in tools)


def test_deferred_tool_adds_tool_search_once() -> None:
    tools = [ToolDefinition(name="a", description="A.", defer_loading=True),
             ToolDefinition(name="b", description="B.", defer_loading=True),
             ToolDefinition(name="c", description="C.")]
    wire = toolbridge.get_dialect(DIALECT).render_tools(tools).definitions
    assert [t.get("name", t["type"]) for t in wire] == ["a", "b", "c", "tool_search"]
    assert wire[0]["defer_loading"] is True and "defer_loading" not in wire[2]
    assert check_tools(wire) == []


def test_empty_description_gets_a_generated_one() -> None:
    wire = toolbridge.get_dialect(DIALECT).render_tools([ToolDefinition(name="ping")])
    assert wire.definitions[0]["description"] == "Calls the ping function."


def test_vendor_extras_pass_but_never_strict() -> None:
    tool = ToolDefinition(name="slow", description="Slow.", strict=True,
                          vendor_extras={DIALECT: {"async": True, "strict": True}})
    wire = toolbridge.get_dialect(DIALECT).render_tools([tool]).definitions[0]
    assert wire["async"] is True and "strict" not in wire
    assert check_tools([wire]) == []


def test_tool_list_over_3_mib_is_refused_with_its_size() -> None:
    text = {"type": "string", "description": "y" * 1_100_000}
    big = {"type": "object", "properties": {"x": text}}
    tools = [ToolDefinition(name=f"t{i}", description="d", parameters=big) for i in range(3)]
    with pytest.raises(toolbridge.UsageError, match=r"3,3\d\d,\d{3} bytes .*3,145,728"):
        toolbridge.get_dialect(DIALECT).render_tools(tools)


# ------------------------------------------------------------------ pending calls
@pytest.mark.parametrize("name", ["session.retrieve.response", "requires-action.event"])
def test_reads_calls_of_recorded_payloads(dialect: OpenAIAgentsDialect, name: str) -> None:
    pending = dialect.read_calls(payload(name))
    assert [(c.id, c.turn, c.conversation, c.name) for c in pending.calls] == [
        ("call_001", "turn_abc123", "sess_abc123", "get_customer"),
        ("call_002", "turn_abc123", "sess_abc123", "get_order"),
    ]
    assert pending.calls[1].arguments == {"order_id": "987", "include_items": True}
    assert pending.calls[0].correlation == toolbridge.Correlation()  # the ids say it all
    assert pending.unhandled == ()


def test_reads_calls_of_sdk_objects(toolbox: toolbridge.Toolbox) -> None:
    session = AgentSession.model_validate(payload("session.retrieve.response"))
    event = TypeAdapter(AgentSessionEvent).validate_python(payload("requires-action.event"))
    toolbox.add(ToolDefinition(name="get_order"), lambda **kw: {"visible": False})
    for obj in (session, event):
        body = toolbox.handle(DIALECT, obj)
        assert [e["call_id"] for e in body["events"]] == ["call_001", "call_002"]
        assert check_events_body(body) == []


def test_string_arguments_are_decoded(dialect: OpenAIAgentsDialect) -> None:
    data = payload("session.retrieve.response")
    data["required_actions"][0]["arguments"] = '{"customer_id": "9"}'
    call = dialect.read_calls(data).calls[0]
    assert call.arguments == {"customer_id": "9"} and call.raw_arguments == '{"customer_id": "9"}'


@pytest.mark.parametrize("bad", ['{"customer_id": ', "[1, 2]", None, 7])
def test_bad_arguments_become_an_error_result(toolbox: toolbridge.Toolbox, bad: Any) -> None:
    data = payload("session.retrieve.response")
    data["required_actions"] = data["required_actions"][:1]
    data["required_actions"][0]["arguments"] = bad
    call = toolbridge.get_dialect(DIALECT).read_calls(data).calls[0]
    assert call.argument_error
    event = toolbox.handle(DIALECT, data)["events"][0]
    assert event["success"] is False and "invalid arguments for get_customer" in event["error"]


def test_other_required_actions_are_returned_unhandled(dialect: OpenAIAgentsDialect) -> None:
    data = payload("session.retrieve.response")
    approval = {"type": "mcp_approval_request", "request_id": "r1", "turn_id": "turn_abc123",
                "request": {"type": "mcp_tool_call", "arguments": {}, "message": "ok?",
                            "server_label": "docs"}}
    reconnect = {"type": "environment_connection", "environment_id": "env_1"}
    data["required_actions"] += [approval, reconnect]
    assert check_model(data, AgentSession) == []
    pending = dialect.read_calls(data)
    assert len(pending.calls) == 2 and pending.unhandled == (approval, reconnect)


def test_function_call_item_alone_is_not_pending(dialect: OpenAIAgentsDialect) -> None:
    with pytest.raises(toolbridge.WireFormatError, match="required_actions"):
        dialect.read_calls(payload("item-added.event"))


@pytest.mark.parametrize(("field", "where"), [
    ("call_id", "session.required_actions[1].call_id"),
    ("turn_id", "session.required_actions[1].turn_id"),
    ("name", "session.required_actions[1].name"),
])
def test_missing_ids_name_the_field(dialect: OpenAIAgentsDialect, field: str, where: str) -> None:
    data = payload("requires-action.event")
    del data["session"]["required_actions"][1][field]
    with pytest.raises(toolbridge.WireFormatError) as info:
        dialect.read_calls(data)
    assert info.value.field == where and info.value.dialect == DIALECT
    assert info.value.body is data


def test_session_with_tool_search_is_read_leniently(dialect: OpenAIAgentsDialect) -> None:
    data = payload("session.retrieve.response")
    data["agent"]["tools"].append({"type": "tool_search"})
    assert check_model(data, AgentSession) != []  # the SDK's strict model refuses it
    assert len(dialect.read_calls(data).calls) == 2


# ------------------------------------------------------------------ results
def _calls() -> tuple[toolbridge.ToolCall, ...]:
    return toolbridge.get_dialect(DIALECT).read_calls(payload("session.retrieve.response")).calls


def test_results_match_the_recorded_request(dialect: OpenAIAgentsDialect) -> None:
    first, second = _calls()
    body = dialect.write_results([
        ToolResult.ok(first, {"found": True, "customer": {"name": "Example Customer",
                                                          "plan": "pro"}}),
        ToolResult.failed(second, "Order 987 is not visible to this account."),
    ])
    assert body == payload("tool-results.request")
    assert check_events_body(body) == []


def test_content_result_matches_the_recorded_request(dialect: OpenAIAgentsDialect) -> None:
    recorded = payload("tool-result-content.request")
    event = recorded["events"][0]
    call = toolbridge.ToolCall(id=event["call_id"], turn=event["turn_id"], name="photo",
                               dialect=DIALECT)
    content = Content(parts=(TextPart(text=event["output"][0]["text"]),
                             ImagePart(url=event["output"][1]["image_url"])))
    body = dialect.write_results([ToolResult.ok(call, content)])
    assert body == recorded and check_events_body(body) == []


def test_a_document_is_described_in_text(dialect: OpenAIAgentsDialect) -> None:
    box = toolbridge.Toolbox()
    box.tool(lambda: [TextPart(text="see"), DocumentPart(data="JVBERi0=", title="q3.pdf")],
             name="photo")
    call = toolbridge.ToolCall(id="call_1", turn="turn_1", name="photo", dialect=DIALECT)
    body = dialect.write_results(box.execute([call]))
    assert body["events"][0]["output"] == [
        {"type": "input_text", "text": "see"},
        {"type": "input_text", "text": "[document: q3.pdf (application/pdf)]"}]
    assert check_events_body(body) == []


@pytest.mark.parametrize(("output", "text"), [
    ("plain", "plain"), ({"a": [1, 2]}, '{"a":[1,2]}'), (3, "3"), (None, "null"),
])
def test_outputs_are_strings(dialect: OpenAIAgentsDialect, output: Any, text: str) -> None:
    event = dialect.write_results([ToolResult.ok(_calls()[0], output)])["events"][0]
    assert event["output"] == text and json.dumps(event)


def test_the_batch_writer_equals_the_one_result_writer() -> None:
    from toolbridge_openai_agents.translate import result_to_wire, results_to_wire

    first = _calls()[0]
    no_turn = toolbridge.ToolCall(id="c9", name="photo", dialect=DIALECT)
    results = [ToolResult.ok(first, "text"), ToolResult.ok(first, {"a": 1}),
               ToolResult.ok(first, Content(parts=(TextPart(text="t"),))),
               ToolResult.failed(first, "no"), ToolResult.ok(first, "")]
    assert results_to_wire(results) == {"events": [result_to_wire(r) for r in results]}
    with pytest.raises(toolbridge.UsageError, match="no turn id"):
        results_to_wire([ToolResult.ok(no_turn, "text")])  # the fast case checks it too


def test_handle_answers_a_recorded_session(toolbox: toolbridge.Toolbox) -> None:
    data = payload("requires-action.event")
    body = toolbox.handle(DIALECT, data)
    first, second = body["events"]
    assert first["success"] is True and json.loads(first["output"])["id"] == "123"
    assert second["success"] is False and "unknown tool 'get_order'" in second["error"]
    assert check_events_body(body) == []
