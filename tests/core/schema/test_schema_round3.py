"""Issue 32: OpenAI's strict-mode size limits, roots the APIs reject, tool-count limits."""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolbridge
from toolbridge import SchemaConversionError, ToolDefinition, UsageError
from toolbridge.schema import normalize_root, strict_parameters

OPENAI = ("openai-assistants", "openai-responses", "openai-chat")


def _enum(count: int, width: int = 3) -> dict[str, Any]:
    return {"type": "string", "enum": [f"{i:0{width}d}" for i in range(count)]}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels - 1):
        schema = _object({"a": schema})
    return schema


OVER = {
    "enum values": _object({f"e{i}": _enum(250) for i in range(5)}),  # 1,250 values
    "characters of one string enum": _object({"e": _enum(300, 60)}),  # 18,000 characters
    "name and value characters": _object({f"e{i}": _enum(200, 150) for i in range(4)}
                                         | {"n" * 100 + str(i): {"type": "string"}
                                            for i in range(2)}),
    "nesting levels": _nested(12),
    "object properties": _object({f"p{i}": {"type": "integer"} for i in range(5_001)}),
}


@pytest.mark.parametrize("limit", list(OVER))
def test_a_strict_form_over_a_documented_limit_is_never_sent(limit: str) -> None:
    schema = OVER[limit]
    sent = strict_parameters(schema, None)
    assert sent.strict is False and sent.schema == schema
    assert any(limit in loss.reason for loss in sent.losses), sent.losses
    for policy in ("allow", "describe", "error", "lossless"):
        with pytest.raises(SchemaConversionError, match=limit):
            strict_parameters(schema, True, policy=policy)  # type: ignore[arg-type]


def test_within_the_limits_stays_strict() -> None:
    schema = _object({f"e{i}": _enum(199) for i in range(5)} | {"n": _nested(9)})
    assert strict_parameters(schema, None).strict is True


@pytest.mark.parametrize("dialect", OPENAI)
def test_every_openai_dialect_reports_the_limit_and_names_the_tool(dialect: str) -> None:
    tool = ToolDefinition(name="pick", parameters=OVER["enum values"])
    rendered = toolbridge.get_dialect(dialect).render_tools([tool])
    assert any("enum values" in loss.reason for loss in rendered.losses["pick"])
    assert "True" not in str(rendered.definitions)  # sent non-strict
    strict = tool.model_copy(update={"strict": True})
    with pytest.raises(SchemaConversionError, match=r"tool 'pick'.*1,250 enum values"):
        toolbridge.get_dialect(dialect).render_tools([strict])


@pytest.mark.parametrize(("declared", "sent"), [
    ({}, {"type": "object", "properties": {}}),
    ({"type": "object"}, {"type": "object", "properties": {}}),
    ({"description": "no arguments"},
     {"description": "no arguments", "type": "object", "properties": {}}),
    ({"properties": {"a": {"type": "string"}}},
     {"properties": {"a": {"type": "string"}}, "type": "object"}),
    ({"$ref": "#/$defs/Args", "description": "d",
      "$defs": {"Args": {"properties": {"b": {"$ref": "#/$defs/B"}}}, "B": {"type": "string"}}},
     {"properties": {"b": {"$ref": "#/$defs/B"}}, "description": "d", "type": "object",
      "$defs": {"Args": {"properties": {"b": {"$ref": "#/$defs/B"}}}, "B": {"type": "string"}}}),
])
def test_normalize_root_spells_the_object_out(declared: dict[str, Any],
                                              sent: dict[str, Any]) -> None:
    before = repr(declared)
    assert normalize_root(declared) == sent
    assert repr(declared) == before  # the input is left alone
    again = normalize_root(sent)
    assert again == sent  # idempotent


def test_roots_that_need_nothing_are_unchanged() -> None:
    for schema in ({"type": "object", "properties": {}}, {"type": "array", "items": {}},
                   {"$ref": "https://example.com/s"}, {"$ref": "#/$defs/missing"}):
        assert normalize_root(schema) == schema


@pytest.mark.parametrize("dialect", [*OPENAI, "openai-agents"])
def test_non_strict_tools_go_out_with_an_object_root(dialect: str) -> None:
    tools = [ToolDefinition(name="ping", parameters={"type": "object"}, strict=False),
             ToolDefinition(name="find", parameters={
                 "$ref": "#/$defs/Q", "$defs": {"Q": {"properties": {"q": {"type": "string"}}}}},
                 strict=False)]
    definitions = toolbridge.get_dialect(dialect).render_tools(tools).definitions
    roots = [d.get("function", d)["parameters"] for d in definitions]
    assert [r["type"] for r in roots] == ["object", "object"]
    assert roots[0]["properties"] == {} and "q" in roots[1]["properties"]
    assert "$ref" not in roots[1]


@pytest.mark.parametrize("dialect", OPENAI)
def test_the_dialects_tool_count_limit_is_enforced_where_tools_render(dialect: str) -> None:
    plugin = toolbridge.get_dialect(dialect)
    limit = plugin.limits.max_tools
    assert limit == 128
    tools = [ToolDefinition(name=f"t{i}") for i in range(limit + 1)]
    assert len(plugin.render_tools(tools[:limit]).definitions) == limit
    with pytest.raises(UsageError, match=r"129 tools, over the 128.*DialectLimits.max_tools"):
        plugin.render_tools(tools)
    box = toolbridge.Toolbox(store=None)
    for tool in tools:
        box.add(tool, lambda: "ok")
    with pytest.raises(UsageError, match="max_tools"):
        box.render(dialect)


# -- OpenAPI: directions (readOnly / writeOnly), cookies and form bodies --------------------
def _pets(version: str) -> dict[str, Any]:
    return {"openapi": version, "components": {"schemas": {
        "Id": {"type": "integer", "readOnly": True},
        "Owner": {"type": "object", "required": ["oid", "name"], "properties": {
            "oid": {"type": "string", "readOnly": True}, "name": {"type": "string"}}},
        "Pet": {"type": "object", "required": ["id", "name", "password"], "properties": {
            "id": {"$ref": "#/components/schemas/Id"}, "name": {"type": "string"},
            "password": {"type": "string", "writeOnly": True},
            "created": {"type": "string", "readOnly": True},
            "owner": {"$ref": "#/components/schemas/Owner"}}}}},
        "paths": {"/pets": {"post": {
            "operationId": "addPet",
            "parameters": [{"name": "session", "in": "cookie", "required": True,
                            "schema": {"type": "string"}}],
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Pet"}}}},
            "responses": {"201": {"description": "made", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Pet"}}}}}}},
            "/login": {"post": {"operationId": "login", "requestBody": {
                "required": True, "content": {"application/x-www-form-urlencoded": {"schema": {
                    "type": "object", "required": ["user"], "properties": {
                        "user": {"type": "string"}, "remember": {"type": "boolean"}}}}}}}},
            "/upload": {"put": {"operationId": "upload", "requestBody": {"content": {
                "application/octet-stream": {"schema": {"type": "string"}}}}}}}}


@pytest.mark.parametrize("version", ["3.0.3", "3.1.0"])
def test_read_only_properties_are_not_asked_of_the_model(version: str) -> None:
    from toolbridge.schema import build_http_request, tools_from_openapi

    add = {t.name: t for t in tools_from_openapi(_pets(version))}["addPet"]
    props, required = add.parameters["properties"], add.parameters["required"]
    assert "id" not in props and "created" not in props  # server-set: response only
    assert set(required) == {"session", "name", "password"}
    owner = props["owner"] if "properties" in props["owner"] else add.parameters["$defs"]["Owner"]
    assert "oid" not in owner["properties"] and owner["required"] == ["name"]
    # A call without the server-set id passes validation and builds the request.
    box = toolbridge.Toolbox(store=None)
    box.add(add, lambda **kw: {"id": 7, **{k: v for k, v in kw.items() if k != "password"}})
    call = toolbridge.ToolCall(id="c", name="addPet", dialect="d", arguments={
        "session": "s1", "name": "rex", "password": "pw"})
    [result] = box.execute([call])
    assert result.success, result.error
    sent = build_http_request(add, call.arguments)
    assert sent.cookies == {"session": "s1"} and sent.json_body == {"name": "rex",
                                                                    "password": "pw"}
    # The output, a response, keeps readOnly properties and loses writeOnly ones.
    assert add.returns is not None
    text = json.dumps(add.returns)
    assert '"password"' not in text and '"id"' in text and '"created"' in text


def test_cookie_and_form_parameters_reach_the_request() -> None:
    from toolbridge.schema import build_http_request, tools_from_openapi
    from toolbridge.tools import schema_validator

    tools = {t.name: t for t in tools_from_openapi(_pets("3.1.0"))}
    login = tools["login"]
    assert login.parameters["required"] == ["user"]
    sent = build_http_request(login, {"user": "ana", "remember": True})
    assert sent.json_body is None and sent.content_type == "application/x-www-form-urlencoded"
    assert sent.form_body == {"user": "ana", "remember": "true"}
    with pytest.raises(toolbridge.ArgumentError, match="session"):  # a required cookie
        schema_validator(tools["addPet"].parameters)({"name": "rex", "password": "pw"})
    upload = tools["upload"]
    assert upload.vendor_extras["openapi"]["content_type"] == "application/octet-stream"
    assert "application/octet-stream" in upload.vendor_extras["openapi"]["losses"][0]

