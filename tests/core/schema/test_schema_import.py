"""Back to JSON Schema (OpenAPI 3.0/3.1, CES) and tools from an OpenAPI document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbridge.errors import ArgumentError, UsageError
from toolbridge.schema import (
    HttpRequestSpec,
    build_http_request,
    convert_schema,
    to_json_schema,
    tools_from_openapi,
)

SAMPLES = Path(__file__).resolve().parents[2] / "adapters" / "google_ces" / "payloads"


def test_ces_sample_to_json_schema():
    tool = json.loads((SAMPLES / "google-ces.tool.create.request.json").read_text())
    out = to_json_schema(tool["clientFunction"]["parameters"], "ces")
    assert out.lossless
    assert out.schema["properties"]["max_results"] == {"type": ["integer", "null"],
                                                       "minimum": 1, "maximum": 5}
    assert out.schema["properties"]["filters"]["maxItems"] == 3
    assert out.schema["properties"]["filters"]["items"]["properties"]["kind"]["enum"][0] == \
        "open_now"


def test_ces_integer_enum_strings_become_numbers_and_snake_case_fields():
    out = to_json_schema({"type": "INTEGER", "enum": ["1", "2"], "nullable": True}, "ces")
    assert out.schema == {"type": ["integer", "null"], "enum": [1, 2, None]}
    out = to_json_schema({"type_": 6, "items": {"type": "STRING"}, "max_items": "2"}, "ces")
    assert out.schema == {"type": "array", "items": {"type": "string"}, "maxItems": 2}


def test_openapi30_to_json_schema():
    schema = {"type": "object", "properties": {
        "n": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "nullable": True},
        "p": {"$ref": "#/components/schemas/Pet", "maxLength": 3, "description": "a pet"},
        "e": {"type": "string", "example": "x", "xml": {"name": "e"}}},
        "$defs": {"Pet": {"type": "string"}}}
    out = to_json_schema(schema, "openapi-3.0")
    assert out.schema["properties"] == {
        "n": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "p": {"type": "string", "description": "a pet"},
        "e": {"type": "string", "examples": ["x"]}}
    assert sorted(loss.keyword for loss in out.losses) == ["maxLength", "xml"]


def test_openapi31_keeps_ref_siblings():
    out = to_json_schema({"$defs": {"P": {"type": "string"}},
                          "$ref": "#/components/schemas/P", "maxLength": 3}, "openapi-3.1")
    assert out.schema == {"type": "string", "maxLength": 3}


@pytest.mark.parametrize("target,source", [("ces", "ces"), ("openapi-3.0", "openapi-3.0")])
def test_round_trip_is_identity_for_representable_schemas(target, source):
    schema = {"type": "object", "properties": {
        "a": {"type": "string", "description": "A"},
        "b": {"type": ["integer", "null"], "minimum": 1},
        "c": {"type": "array", "items": {"type": "boolean"}, "minItems": 1}},
        "required": ["a"]}
    there = convert_schema(schema, target)
    assert there.lossless
    assert to_json_schema(there.schema, source).schema == schema


def test_unknown_source():
    with pytest.raises(UsageError):
        to_json_schema({}, "swagger-2")  # type: ignore[arg-type]


PETSTORE = {
    "openapi": "3.0.3",
    "servers": [{"url": "https://pets.example.com/v1"}],
    "paths": {
        "/pets/{petId}": {
            "parameters": [{"name": "petId", "in": "path", "required": True,
                            "schema": {"type": "integer"}, "description": "The pet"}],
            "get": {"operationId": "showPetById", "summary": "Info for a pet",
                    "parameters": [{"$ref": "#/components/parameters/Verbose"},
                                   {"name": "X-Trace", "in": "header",
                                    "schema": {"type": "string"}}]},
            "put": {"summary": "Replace a pet",
                    "requestBody": {"required": True, "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Pet"}}}}},
        },
        "/pets": {
            "post": {"operationId": "tag pets!", "requestBody": {"content": {
                "application/json": {"schema": {"type": "array",
                                                "items": {"$ref": "#/components/schemas/Pet"}}}}}},
        },
    },
    "components": {
        "parameters": {"Verbose": {"name": "verbose", "in": "query",
                                   "schema": {"type": "boolean", "nullable": True}}},
        "schemas": {"Pet": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "tag": {"type": "string", "nullable": True},
            "parent": {"$ref": "#/components/schemas/Pet"}}}},
    },
}


def test_tools_from_openapi_merges_parameters_and_keeps_mapping():
    tools = {t.name: t for t in tools_from_openapi(PETSTORE)}
    assert sorted(tools) == ["put_pets_petId", "showPetById", "tag_pets"]
    show = tools["showPetById"]
    assert show.description == "Info for a pet"
    assert show.parameters == {"type": "object", "required": ["petId"], "properties": {
        "petId": {"type": "integer", "description": "The pet"},
        "verbose": {"type": ["boolean", "null"]}, "X-Trace": {"type": "string"}}}
    assert show.vendor_extras["openapi"] == {
        "method": "GET", "path": "/pets/{petId}", "server": "https://pets.example.com/v1",
        "parameters": {"petId": {"in": "path", "name": "petId"},
                       "verbose": {"in": "query", "name": "verbose"},
                       "X-Trace": {"in": "header", "name": "X-Trace"}}}
    put = tools["put_pets_petId"]
    assert put.parameters["required"] == ["petId", "name"]
    assert put.parameters["properties"]["parent"] == {"$ref": "#/$defs/Pet"}
    assert put.parameters["$defs"]["Pet"]["properties"]["tag"] == {"type": ["string", "null"]}
    body = tools["tag_pets"]
    assert body.vendor_extras["openapi"]["parameters"] == {"body": {"in": "body", "name": None}}


def test_tools_from_openapi_accepts_json_text():
    assert tools_from_openapi(json.dumps(PETSTORE))[0].name == "showPetById"


def test_build_http_request():
    tools = {t.name: t for t in tools_from_openapi(PETSTORE)}
    spec = build_http_request(tools["showPetById"],
                              {"petId": 7, "verbose": True, "X-Trace": "abc"})
    assert spec == HttpRequestSpec("GET", "/pets/7", {"verbose": True}, {"X-Trace": "abc"}, None,
                                   "https://pets.example.com/v1")
    spec = build_http_request(tools["put_pets_petId"], {"petId": "a/b", "name": "Rex",
                                                        "tag": None})
    assert (spec.path, spec.json_body) == ("/pets/a%2Fb", {"name": "Rex"})
    spec = build_http_request(tools["tag_pets"], {"body": [{"name": "x"}]})
    assert spec.json_body == [{"name": "x"}]


def test_build_http_request_errors():
    tools = {t.name: t for t in tools_from_openapi(PETSTORE)}
    with pytest.raises(ArgumentError, match="petId"):
        build_http_request(tools["showPetById"], {})
    with pytest.raises(ArgumentError, match="nope"):
        build_http_request(tools["showPetById"], {"petId": 1, "nope": 2})
