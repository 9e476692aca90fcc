"""The ``mcp`` dialect's translations, on payloads recorded with the SDK's own types and
servers (``payloads/``); the SDK's types are the oracle of what we write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from toolbridge import (
    Content,
    DocumentPart,
    ImagePart,
    TextPart,
    Toolbox,
    ToolDefinition,
    ToolDefinitionError,
    ToolResult,
    UsageError,
    WireFormatError,
    get_dialect,
)
from toolbridge.testing import check_dialect
from toolbridge_mcp import IDEMPOTENCY_META, translate

PAYLOADS = Path(__file__).parent / "payloads"
MCP = get_dialect("mcp")


def recorded(name: str) -> Any:
    return json.loads((PAYLOADS / name).read_text())


def forecast_tool(**options: Any) -> ToolDefinition:
    return ToolDefinition(name="forecast", description="A forecast.", parameters={
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        **options)


def test_the_conformance_kit() -> None:
    check_dialect("mcp", [forecast_tool(), ToolDefinition(name="book_room")],
                  recorded("mcp.tools-call.request.json"))
    check_dialect("mcp", [ToolDefinition(name="book_room")],
                  recorded("mcp.tools-call.unkeyed.request.json"))


def test_definitions_are_sdk_tools_with_annotations() -> None:
    tools = [forecast_tool(read_only=True, returns={"type": "object", "properties": {}}),
             ToolDefinition(name="charge", side_effects=True, idempotent=True),
             ToolDefinition(name="count", returns={"type": "integer"}),
             ToolDefinition(name="plain", vendor_extras={"mcp": {
                 "title": "Plain", "annotations": {"openWorldHint": False}}})]
    rendered = MCP.render_tools(tools)
    assert rendered.losses == {}
    parsed = [types.Tool.model_validate(d) for d in rendered.definitions]
    forecast, charge, count, plain = parsed
    assert forecast.annotations is not None and forecast.annotations.read_only_hint is True
    assert forecast.output_schema == {"type": "object", "properties": {}}
    assert charge.annotations is not None
    assert (charge.annotations.read_only_hint, charge.annotations.destructive_hint,
            charge.annotations.idempotent_hint) == (False, True, True)
    assert count.output_schema is None  # not an object: text only, on every revision
    assert count.annotations is None
    assert plain.title == "Plain" and plain.annotations is not None
    assert plain.annotations.open_world_hint is False


def test_read_only_with_side_effects_is_refused() -> None:
    with pytest.raises(ValueError, match="read_only"):
        forecast_tool(read_only=True, side_effects=True)
    toolbox = Toolbox(store=None)
    with pytest.raises(ToolDefinitionError, match="read_only"):
        @toolbox.tool(read_only=True, side_effects=True)
        def both() -> None:
            """Both."""


def test_a_recorded_tool_list_reads_back() -> None:
    tools = MCP.read_tools(recorded("mcp.tools-list.result.json")["tools"])
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"forecast", "book_room", "explode", "slow", "die"}
    assert by_name["forecast"].read_only and by_name["forecast"].returns is not None
    assert by_name["book_room"].vendor_extras["mcp"]["name"] == "book.room"
    assert by_name["book_room"].side_effects
    again = MCP.render_tools([by_name["book_room"]]).definitions[0]
    assert again["name"] == "book.room"  # renders back under its MCP name


@pytest.mark.parametrize("schema", [{"type": "object"}, {}, {"properties": {"a": {}}}])
def test_bare_object_schemas_are_normalised(schema: dict[str, Any]) -> None:
    tool, = translate.read_tools([{"name": "bare", "inputSchema": schema}])
    assert tool.parameters["type"] == "object" and "properties" in tool.parameters


def test_a_keyed_call_is_stored_under_its_key() -> None:
    call, = MCP.read_calls(recorded("mcp.tools-call.request.json")).calls
    assert (call.id, call.name, call.arguments) == ("order-77-forecast", "forecast",
                                                    {"city": "Lima"})
    assert (call.conversation, call.turn) == ("", translate.KEYED_TURN)
    unkeyed, = MCP.read_calls(recorded("mcp.tools-call.unkeyed.request.json")).calls
    assert (unkeyed.id, unkeyed.turn, unkeyed.conversation) == ("req-7", "", "")


def test_results_are_sdk_responses() -> None:
    call, = MCP.read_calls(recorded("mcp.tools-call.request.json")).calls
    ok = MCP.write_results([ToolResult.ok(call, {"temp_c": 14})])
    response = types.JSONRPCResponse.model_validate(ok)
    assert response.id == 3
    result = types.CallToolResult.model_validate(response.result)
    assert result.structured_content == {"temp_c": 14} and not result.is_error
    assert result.meta is not None and result.meta[IDEMPOTENCY_META] == "order-77-forecast"
    failed = types.CallToolResult.model_validate(
        MCP.write_results([ToolResult.failed(call, "no such city")])["result"])
    assert failed.is_error and failed.content[0].text == "no such city"  # type: ignore[union-attr]
    parts = Content(parts=(TextPart(text="map"), ImagePart(url="data:image/png;base64,iVBO")))
    image = types.CallToolResult.model_validate(
        MCP.write_results([ToolResult.ok(call, parts)])["result"])
    assert [b.type for b in image.content] == ["text", "image"]


def test_a_linked_document_is_a_resource_link_and_an_inline_one_its_description() -> None:
    call, = MCP.read_calls(recorded("mcp.tools-call.request.json")).calls
    box = Toolbox()
    box.tool(lambda city: [DocumentPart(url="https://example.com/q3.pdf", title="Q3"),
                           DocumentPart(data="JVBERi0=", title="q4.pdf")], name=call.name)
    result = types.CallToolResult.model_validate(MCP.write_results(box.execute([call]))["result"])
    link, described = result.content
    assert isinstance(link, types.ResourceLink) and link.name == "Q3"
    assert str(link.uri) == "https://example.com/q3.pdf" and link.mime_type == "application/pdf"
    assert isinstance(described, types.TextContent)
    assert described.text == "[document: q4.pdf (application/pdf)]"


def test_a_recorded_result_is_what_the_sdk_server_sends() -> None:
    sent = types.CallToolResult.model_validate(recorded("mcp.call-tool.structured.result.json"))
    call, = MCP.read_calls(recorded("mcp.tools-call.request.json")).calls
    ours = types.CallToolResult.model_validate(translate.call_tool_result(
        ToolResult.ok(call, sent.structured_content)))
    assert ours.structured_content == sent.structured_content


@pytest.mark.parametrize(("payload", "field"), [
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, "params"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}, "params.name"),
    ({"jsonrpc": "2.0", "id": [1], "method": "tools/call", "params": {"name": "a"}}, "id"),
    ({"name": "a", "_meta": []}, "params._meta"),
    ({"name": "a", "_meta": {IDEMPOTENCY_META: 7}}, f"params._meta[{IDEMPOTENCY_META!r}]"),
    ({"name": "a", "_meta": {IDEMPOTENCY_META: "k" * 257}},
     f"params._meta[{IDEMPOTENCY_META!r}]"),
    ({"unexpected": 1}, "method"),
])
def test_malformed_calls_name_the_field(payload: dict[str, Any], field: str) -> None:
    with pytest.raises(WireFormatError) as caught:
        MCP.read_calls(payload)
    assert caught.value.dialect == "mcp" and caught.value.field == field


def test_other_requests_are_nothing_pending() -> None:
    pending = MCP.read_calls({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert not pending.calls and "tools/list" in pending.reason


def test_a_toolbox_answers_a_tools_call_request() -> None:
    toolbox = Toolbox(store=None)

    @toolbox.tool
    def forecast(city: str) -> dict[str, Any]:
        """A forecast."""
        return {"city": city}

    body = toolbox.handle("mcp", recorded("mcp.tools-call.request.json"))
    assert types.CallToolResult.model_validate(body["result"]).structured_content == {
        "city": "Lima"}


async def test_approvals_hold_a_served_call_until_decided(tmp_path: Path) -> None:
    """A served call needing approval is answered ``isError`` until a person decides; the
    re-issue with the same key then runs it, once."""
    from mcp import Client

    from toolbridge_mcp import ToolboxServer

    toolbox = Toolbox(store=f"sqlite:///{tmp_path}/results.db")
    paid: list[int] = []

    @toolbox.tool(side_effects=True, needs_approval=True)
    def pay(amount: int) -> str:
        """Pay an invoice."""
        paid.append(amount)
        return f"paid {amount}"

    meta: Any = {IDEMPOTENCY_META: "invoice-9"}
    with toolbox:
        async with Client(ToolboxServer(toolbox).server) as client:
            waiting = await client.call_tool("pay", {"amount": 500}, meta=meta)
            request, = toolbox.approvals.pending()
            toolbox.approvals.approve(request, by="ana")
            approved = await client.call_tool("pay", {"amount": 500}, meta=meta)
            again = await client.call_tool("pay", {"amount": 500}, meta=meta)
    assert waiting.is_error and "approval" in waiting.content[0].text  # type: ignore[union-attr]
    assert not approved.is_error and approved.content[0].text == "paid 500"  # type: ignore[union-attr]
    assert not again.is_error and paid == [500]


def test_a_name_outside_mcps_rule_is_refused() -> None:
    # No validated definition has one (toolbridge's names fit MCP's rule); a constructed one
    # stands for a third-party definition that skipped validation.
    odd = ToolDefinition.model_construct(name="has space", description="", parameters={
        "type": "object", "properties": {}}, vendor_extras={})
    with pytest.raises(UsageError, match="has space"):
        MCP.render_tools([odd])


async def test_a_long_call_ticks_progress_while_it_runs() -> None:
    from mcp import Client

    from toolbridge_mcp import ToolboxServer

    toolbox = Toolbox(store=None)

    @toolbox.tool
    async def think() -> str:
        """Thinks, saying nothing."""
        import asyncio

        await asyncio.sleep(0.5)
        return "thought"

    seen: list[str | None] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    async with Client(ToolboxServer(toolbox, progress_interval=0.05).server,
                      mode="legacy") as client:
        result = await client.call_tool("think", {}, progress_callback=progress)
    assert not result.is_error
    assert seen and all(m is not None and m.startswith("running (") for m in seen), seen
