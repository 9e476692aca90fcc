from __future__ import annotations

import json
from typing import Any

import pytest
from ces_support import SESSION, payload
from google.cloud import ces_v1

import toolbridge
from toolbridge.testing import check_dialect
from toolbridge_google_ces import CesCorrelation, GoogleCesDialect, definition_from_tool

DIALECT = toolbridge.get_dialect("google-ces")


def parses(message: Any, body: Any) -> Any:
    return message.from_json(json.dumps(body), ignore_unknown_fields=False)


def test_registered_by_entry_point() -> None:
    assert isinstance(DIALECT, GoogleCesDialect)
    assert toolbridge.dialects().provider("google-ces") == "google_ces"


def test_samples_parse_with_the_sdk() -> None:
    parses(ces_v1.Tool, payload("tool.create.request"))
    for name in ("text", "tool-responses", "tool-error"):
        parses(ces_v1.RunSessionRequest, payload(f"run-session.request.{name}"))
    parses(ces_v1.RunSessionResponse, payload("run-session.response.tool-calls"))


def test_render_tools_are_sdk_tools(toolbox: toolbridge.Toolbox) -> None:
    rendered = toolbox.render("google-ces")
    assert len(rendered.definitions) == 3
    for definition in rendered.definitions:
        tool = parses(ces_v1.Tool, definition)
        assert tool.client_function.parameters.type_ == ces_v1.Schema.Type.OBJECT
    store = rendered.definitions[0]["clientFunction"]
    assert store["name"] == "get_nearest_store"
    assert store["parameters"]["properties"]["max_results"]["type"] == "INTEGER"
    assert store["parameters"]["properties"]["max_results"]["nullable"] is True
    assert rendered.definitions[1]["clientFunction"]["response"] == {"type": "INTEGER"}


def test_render_reports_losses_and_extras() -> None:
    tool = toolbridge.ToolDefinition(
        name="f", parameters={"type": "object", "properties": {
            "code": {"type": "string", "pattern": "^[0-9]{5}$"}}},
        returns={"type": "object", "properties": {"x": {"type": "string", "format": "date"}}},
        timeout=12.5, vendor_extras={"google-ces": {"executionType": "ASYNCHRONOUS",
                                                    "toolId": "f-tool"}},
    )
    rendered = DIALECT.render_tools([tool])
    resource = rendered.definitions[0]
    parses(ces_v1.Tool, resource)
    assert resource["timeout"] == "12.5s" and resource["executionType"] == "ASYNCHRONOUS"
    assert "toolId" not in resource
    pointers = {(loss.pointer, loss.keyword) for loss in rendered.losses["f"]}
    assert ("/properties/code", "pattern") in pointers
    assert ("/returns/properties/x", "format") in pointers
    with pytest.raises(toolbridge.SchemaConversionError):
        DIALECT.render_tools([tool], policy="error")


def test_definition_round_trip_accepts_enum_numbers() -> None:
    sample = payload("tool.create.request")
    sample["clientFunction"]["parameters"]["type"] = 5
    sample["clientFunction"]["parameters"]["properties"]["max_results"]["type"] = 2
    sample["executionType"] = 1
    definition = definition_from_tool(sample)
    props = definition.parameters["properties"]
    assert definition.name == "get_nearest_store"
    assert props["max_results"]["type"] == ["integer", "null"]
    assert definition.returns is not None and definition.returns["type"] == "object"
    with pytest.raises(toolbridge.WireFormatError):
        definition_from_tool({"googleSearchTool": {}})


def test_read_calls_from_response_output_and_proto() -> None:
    response = payload("run-session.response.tool-calls")
    proto = ces_v1.RunSessionResponse.from_json(json.dumps(response))
    forms = [response, response["outputs"][0], response["outputs"][0]["toolCalls"],
             proto, proto.outputs[0]]
    for form in forms:
        data = form if isinstance(form, dict) else json.loads(type(form).to_json(form))
        (call,) = DIALECT.read_calls(data).calls
        assert call.id == "toolcall-7f3a9c2e" and call.name == "get_nearest_store"
        assert call.turn == "" and call.dialect == "google-ces"
        assert isinstance(call.correlation, CesCorrelation)
        assert call.correlation.tool.endswith("/tools/get-nearest-store")


def test_bound_session_and_tool_names() -> None:
    response = payload("run-session.response.tool-calls")
    del response["outputs"][0]["toolCalls"]["toolCalls"][0]["displayName"]
    tool = response["outputs"][0]["toolCalls"]["toolCalls"][0]["tool"]
    bound = GoogleCesDialect(session=SESSION, tool_names={tool: "get_nearest_store"})
    (call,) = bound.read_calls(response).calls
    assert call.name == "get_nearest_store" and call.conversation == SESSION
    body = bound.write_results([toolbridge.ToolResult.ok(call, "x")])
    assert body["config"] == {"session": SESSION}
    assert parses(ces_v1.RunSessionRequest, body).config.session == SESSION
    with pytest.raises(toolbridge.UsageError):
        GoogleCesDialect(session="sessions/s")


def test_decode_restores_integers_from_doubles(toolbox: toolbridge.Toolbox) -> None:
    response = payload("run-session.response.tool-calls")
    response["outputs"][0]["toolCalls"]["toolCalls"][0]["args"]["max_results"] = 2.0
    body = toolbox.handle("google-ces", response)
    assert toolbox.seen == [2] and type(toolbox.seen[0]) is int  # type: ignore[attr-defined]
    (answer,) = body["inputs"][0]["toolResponses"]["toolResponses"]
    assert answer["response"] == {"output": {"name": "Alibaba", "results": 2}}
    response["outputs"][0]["toolCalls"]["toolCalls"][0]["args"]["max_results"] = 2.5
    body = toolbox.handle("google-ces", response)
    (answer,) = body["inputs"][0]["toolResponses"]["toolResponses"]
    assert "max_results" in answer["response"]["error"]


def test_write_results_echo_and_parse(toolbox: toolbridge.Toolbox) -> None:
    calls = {"outputs": [{"toolCalls": {"toolCalls": [
        {"id": "c1", "tool": "projects/p/locations/us/apps/a/tools/add", "displayName": "add",
         "args": {"a": 1, "b": 2}},
        {"id": "c2", "toolsetTool": {"toolset": "projects/p/locations/us/apps/a/toolsets/t",
                                     "toolId": "broken"}, "args": {"reason": "why"}},
        {"id": "c3", "displayName": "nope"},
    ]}, "turnIndex": 2}]}
    body = toolbox.handle("google-ces", calls)
    request = parses(ces_v1.RunSessionRequest, body)
    answers = body["inputs"][0]["toolResponses"]["toolResponses"]
    assert answers[0] == {"id": "c1", "tool": calls["outputs"][0]["toolCalls"]["toolCalls"][0][
        "tool"], "displayName": "add", "response": {"output": 3}}
    assert answers[1]["toolsetTool"]["toolId"] == "broken" and "tool" not in answers[1]
    assert answers[1]["response"] == {"error": "cannot: why"}
    assert "unknown tool 'nope'" in answers[2]["response"]["error"]
    assert len(request.inputs[0].tool_responses.tool_responses) == 3
    content = toolbridge.Content(parts=(toolbridge.TextPart(text="hi"),))
    (call,) = DIALECT.read_calls(calls["outputs"][0]["toolCalls"]).calls[:1]
    assert DIALECT.write_results([toolbridge.ToolResult.ok(call, content)])["inputs"][0][
        "toolResponses"]["toolResponses"][0]["response"] == {"output": "hi"}
    pdf = toolbridge.Content(parts=(toolbridge.DocumentPart(data="JVBERi0=", title="q3.pdf"),))
    assert DIALECT.write_results([toolbridge.ToolResult.ok(call, pdf)])["inputs"][0][
        "toolResponses"]["toolResponses"][0]["response"] == {
            "output": "[document: q3.pdf (application/pdf)]"}  # described, not dropped


def test_call_without_id_echoes_none() -> None:
    (call,) = DIALECT.read_calls({"toolCalls": [{"displayName": "add", "args": {}}]}).calls
    assert call.id.startswith("no-id-")
    body = DIALECT.write_results([toolbridge.ToolResult.ok(call, 1)])
    assert "id" not in body["inputs"][0]["toolResponses"]["toolResponses"][0]


@pytest.mark.parametrize(("bad", "field"), [
    ({"outputs": {}}, "outputs"),
    ({"outputs": [1]}, "outputs[0]"),
    ({"outputs": [{"toolCalls": []}]}, "outputs[0].toolCalls"),
    ({"outputs": [{"toolCalls": {"toolCalls": [{"id": 5, "displayName": "f"}]}}]},
     "outputs[0].toolCalls.toolCalls[0].id"),
    ({"outputs": [{"toolCalls": {"toolCalls": [{"id": "x", "displayName": "f",
                                                "args": [1]}]}}]},
     "outputs[0].toolCalls.toolCalls[0].args"),
    ({"outputs": [{"toolCalls": {"toolCalls": [{"id": "x", "tool": "t", "toolsetTool": {}}]}}]},
     "outputs[0].toolCalls.toolCalls[0]"),
    ({"outputs": [{"toolCalls": {"toolCalls": [{"id": "x"}]}}]},
     "outputs[0].toolCalls.toolCalls[0]"),
    # Every field of the usual call (read inline as records) but a toolsetTool too.
    ({"outputs": [{"toolCalls": {"toolCalls": [{"id": "x", "tool": "t", "displayName": "f",
                                                "args": {}, "toolsetTool": {}}]}}]},
     "outputs[0].toolCalls.toolCalls[0]"),
    ({"outputs": [{"toolCalls": {"toolCalls": [{"id": "x", "tool": "t", "displayName": "f",
                                                "args": {}, "toolset_tool": 1}]}}]},
     "outputs[0].toolCalls.toolCalls[0].toolsetTool"),
    ({"outputs": [{"turnIndex": "one"}]}, "outputs[0].turnIndex"),
    ({"unexpected": 1}, "<payload>"),
])
def test_malformed_payloads_name_the_field(bad: Any, field: str) -> None:
    for read in (DIALECT.read_calls, DIALECT.read_records):  # the runtime's reader alike
        with pytest.raises(toolbridge.WireFormatError) as info:
            read(bad)
        assert info.value.field == field and info.value.dialect == "google-ces"
        assert info.value.body == bad


def test_text_only_answers_hold_no_calls() -> None:
    assert DIALECT.read_calls({}).calls == ()
    assert DIALECT.read_calls({"outputs": [{"text": "hi", "turnCompleted": True}]}).calls == ()


def test_conformance(toolbox: toolbridge.Toolbox) -> None:
    check_dialect(DIALECT, list(toolbox), payload("run-session.response.tool-calls"))


def test_redelivered_side_effect_call_runs_once() -> None:
    box = toolbridge.Toolbox()
    runs: list[int] = []

    @box.tool(side_effects=True)
    def charge(amount: int) -> str:
        """Charge a card."""
        runs.append(amount)
        return f"charged {amount}"

    response = {"outputs": [{"toolCalls": {"toolCalls": [
        {"id": "pay-1", "tool": "projects/p/locations/us/apps/a/tools/charge",
         "displayName": "charge", "args": {"amount": 5.0}}]}, "turnIndex": 1}]}
    bound = GoogleCesDialect(session=SESSION)
    first = box.handle(bound, response)
    again = box.handle(bound, response["outputs"][0])  # the same call, re-delivered
    assert runs == [5] and first == again


def test_a_result_over_our_one_mib_cap_is_not_sent() -> None:
    """Google documents no ToolResponse size limit; ours is 1 MiB of the result's JSON text."""
    assert DIALECT.limits.max_result_bytes == 1_048_576
    calls = {"toolCalls": [{"id": "c1", "displayName": "table", "args": {"rows": 5_000_000}},
                           {"id": "c2", "displayName": "table", "args": {"rows": 10}}]}
    for oversize in ("error", "truncate"):
        box = toolbridge.Toolbox(oversize=oversize)

        @box.tool
        def table(rows: int) -> str:
            return "é" * rows  # 2 bytes each in UTF-8: the cap counts bytes

        body = box.handle(GoogleCesDialect(session=SESSION), calls)
        request = parses(ces_v1.RunSessionRequest, body)
        big, small = body["inputs"][0]["toolResponses"]["toolResponses"]
        assert small["response"] == {"output": "é" * 10}
        assert len(json.dumps(body, ensure_ascii=False).encode()) < 1_100_000
        if oversize == "error":
            assert big["response"]["error"].startswith(
                "the result of table is 10000000 bytes, over the google-ces limit of 1048576")
        else:
            text = big["response"]["output"]
            assert text.endswith("[truncated by toolbridge: 10000000 bytes, limit 1048576]")
            assert len(text.encode()) <= 1_048_576
        assert len(request.inputs[0].tool_responses.tool_responses) == 2
