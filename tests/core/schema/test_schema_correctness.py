"""Regressions of issue 16 §1 found on the schema engine: strict roots and objects, shared
definitions and OpenAI's limits, union decoding, loss classes, and typed errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from schema_checks import check_ces, check_openai_strict, strict_sizes

import toolbridge
from toolbridge import ToolDefinition
from toolbridge.errors import ArgumentError, SchemaConversionError
from toolbridge.schema import (
    SchemaLoss,
    compile_decoder,
    convert_schema,
    decode_arguments,
    to_json_schema,
    unwrap_arguments,
)

CORPUS = {entry["name"]: entry["schema"] for entry in map(json.loads, (
    Path(__file__).parent / "corpus" / "corpus.jsonl").read_text().splitlines())}


def obj(required: bool = True, **props: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(props)
    return schema


# -- OpenAI strict: objects and roots ---------------------------------------------------------
def test_strict_object_without_type_stays_an_object():
    out = convert_schema(obj(o={"properties": {"a": {"type": "string"}}}), "openai-strict")
    o = out.schema["properties"]["o"]
    assert o == {"type": "object", "properties": {"a": {"type": ["string", "null"]}},
                 "required": ["a"], "additionalProperties": False}
    assert "anyOf" not in o  # no scalar-only union: objects are still accepted
    check_openai_strict(out.schema)


def test_strict_allof_entry_that_only_annotates_is_merged_not_typed():
    out = convert_schema(obj(required=False, o={"allOf": [{"type": "integer"}, {"default": 0}]}),
                         "openai-strict")
    assert out.schema["properties"]["o"] == {"type": ["integer", "null"],
                                             "description": "(default: 0; null uses it)"}
    assert out.lossless  # the default applies again when the model sends null
    check_openai_strict(out.schema)


def test_strict_empty_root_is_an_empty_object_not_a_wrapper():
    out = convert_schema({}, "openai-strict")
    assert out.schema["properties"] == {} and out.schema["additionalProperties"] is False
    assert out.wrapped is None
    assert [(loss.keyword, loss.enforced) for loss in out.losses] == [
        ("additionalProperties", True)]
    check_openai_strict(out.schema)


def test_strict_root_ref_to_itself_points_at_the_moved_root():
    schema = {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
              "properties": {"a": {"type": "string"}, "b": {"type": "string"},
                             "next": {"$ref": "#"}}}
    out = convert_schema(schema, "openai-strict", policy="allow")
    assert out.wrapped == "value"
    assert out.schema["properties"]["value"] == {"$ref": "#/$defs/Root"}
    root = out.schema["$defs"]["Root"]
    assert root["properties"]["next"] == {"anyOf": [{"$ref": "#/$defs/Root"}, {"type": "null"}]}
    assert "#" not in json.dumps(out.schema).replace("#/$defs/Root", "")  # no ref to the wrapper


def test_strict_wrapped_root_is_unwrapped_for_the_handler():
    schema = {"type": "object", "oneOf": [obj(a={"type": "integer"}), obj(b={"type": "string"})]}
    assert convert_schema(schema, "openai-strict").wrapped == "value"
    assert unwrap_arguments(schema, "openai-strict", {"value": {"a": 1}}) == {"a": 1}
    plain = obj(a={"type": "integer"})
    assert unwrap_arguments(plain, "openai-strict", {"a": 1}) == {"a": 1}  # nothing wrapped
    with pytest.raises(ArgumentError):
        unwrap_arguments(schema, "openai-strict", {"a": 1})
    with pytest.raises(ArgumentError, match="/value"):
        unwrap_arguments(schema, "openai-strict", {"value": 3})


def test_strict_wrapped_tool_answers_through_the_assistants_dialect():
    toolbox = toolbridge.Toolbox(store=None)
    schema = {"type": "object", "anyOf": [obj(a={"type": "integer"}), obj(b={"type": "string"})]}
    seen: list[dict[str, Any]] = []
    toolbox.add(ToolDefinition(name="pick", parameters=schema, strict=True),
                lambda **kwargs: seen.append(kwargs) or "ok")
    [wire] = toolbox.definitions("openai-assistants")
    assert wire["function"]["strict"] is True
    assert wire["function"]["parameters"]["required"] == ["value"]
    run = {"id": "run_1", "object": "thread.run", "thread_id": "thread_1",
           "status": "requires_action", "required_action": {
               "type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": [
                   {"id": "call_1", "type": "function", "function": {
                       "name": "pick", "arguments": json.dumps({"value": {"a": 7}})}}]}}}
    body = toolbox.handle("openai-assistants", run)
    assert body == {"tool_outputs": [{"tool_call_id": "call_1", "output": "ok"}]}
    assert seen == [{"a": 7}]


# -- OpenAI strict: shared definitions and the documented limits ------------------------------
def test_strict_keeps_shared_definitions_within_openais_limits():
    schema = CORPUS["openai.types.responses.response_failed_event.ResponseFailedEvent"]
    before = strict_sizes(schema)
    out = convert_schema(schema, "openai-strict")
    after = strict_sizes(out.schema)
    # Inlining every use went from 577 to 1,157 enum values (the limit is 1,000) and 12 levels.
    assert after["enum values"] <= 1_000 and after["nesting levels"] <= 10
    assert after["enum values"] < 1.2 * before["enum values"]
    check_openai_strict(out.schema)


def test_shared_definition_converted_once_loss_names_first_use():
    address = {"type": "object", "properties": {"postcode": {"type": "string",
                                                             "format": "postal"}}}
    schema = {"type": "object", "properties": {"to": {"$ref": "#/$defs/Address"},
                                               "cc": {"type": "array",
                                                      "items": {"$ref": "#/$defs/Address"}}},
              "required": ["to", "cc"], "$defs": {"Address": address}}
    out = convert_schema(schema, "openai-strict")
    assert out.schema["properties"]["to"] == {"$ref": "#/$defs/Address"}
    assert list(out.schema["$defs"]) == ["Address"]
    [loss] = out.losses
    assert (loss.parameter, loss.pointer, loss.keyword) == (
        "to.postcode", "/$defs/Address/properties/postcode", "format")
    assert str(loss).startswith("to.postcode (/$defs/Address/properties/postcode) format:")
    # Inlined targets report the first use too, once.
    [ces_loss] = convert_schema(schema, "ces").losses
    assert (ces_loss.parameter, ces_loss.pointer) == ("to.postcode",
                                                      "/$defs/Address/properties/postcode")


def test_single_use_definitions_are_still_inlined():
    schema = {"type": "object", "properties": {"u": {"$ref": "#/$defs/U"}}, "required": ["u"],
              "$defs": {"U": {"enum": ["C", "F"], "type": "string"}}}
    assert "$defs" not in convert_schema(schema, "openai-strict").schema


def test_loss_parameter_paths_follow_arrays_maps_and_tuples():
    schema = obj(items={"type": "array", "items": obj(sku={"type": "string", "minLength": 1})},
                 tags={"type": "object", "additionalProperties": {"type": "string",
                                                                  "maxLength": 3}},
                 pair={"type": "array", "prefixItems": [{"type": "string", "format": "x"}]})
    paths = {(loss.parameter, loss.keyword) for loss in convert_schema(schema, "ces").losses}
    assert {("items[].sku", "minLength"), ("tags.*", "maxLength"),
            ("pair[0]", "format")} <= paths


# -- union decoding ---------------------------------------------------------------------------
class Text(BaseModel, extra="forbid"):
    text: str


class Count(BaseModel, extra="forbid"):
    count: int


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    size: Literal[1, 2, 3]


class Holder(BaseModel):
    part: Text | Count
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]


def test_union_decoding_tries_every_branch():
    schema = Holder.model_json_schema()
    decoded = decode_arguments(schema, {"part": {"count": 2.0}, "pet": {"kind": "cat"}})
    assert decoded["part"] == {"count": 2} and type(decoded["part"]["count"]) is int
    decoded = decode_arguments(schema, {"part": {"text": "x"}, "pet": {"kind": "dog",
                                                                       "size": "2"}})
    assert decoded["pet"] == {"kind": "dog", "size": 2}
    assert Holder.model_validate(decoded).pet == Dog(kind="dog", size=2)


def test_discriminated_union_with_literal_ints_answers_on_ces():
    toolbox = toolbridge.Toolbox(store=None)

    @toolbox.tool
    def adopt(pet: Annotated[Cat | Dog, Field(discriminator="kind")]) -> str:
        return f"{type(pet).__name__} {getattr(pet, 'size', '')}"

    [resource] = toolbox.definitions("google-ces")
    check_ces(resource["clientFunction"]["parameters"])
    response = {"outputs": [{"toolCalls": {"toolCalls": [
        {"id": "c1", "displayName": "adopt", "args": {"pet": {"kind": "dog", "size": "2"}}}]}}]}
    body = toolbox.handle("google-ces", response)
    [answer] = body["inputs"][0]["toolResponses"]["toolResponses"]
    assert answer["response"] == {"output": "Dog 2"}


def test_union_decoder_keeps_a_value_that_fits_a_branch_without_steps():
    schema = obj(v={"anyOf": [obj(n={"type": "number"}), obj(n={"type": "integer"},
                                                             k={"type": "string"})]})
    assert type(compile_decoder(schema)({"v": {"n": 2.0}})["v"]["n"]) is float


# -- loss classes and policies ----------------------------------------------------------------
def test_python_tools_have_an_empty_unenforced_ces_report():
    toolbox = toolbridge.Toolbox(store=None)

    @toolbox.tool
    def lookup(order_id: str, limit: int = 10) -> str:
        """Find an order."""
        return order_id

    rendered = toolbox.render("google-ces", policy="error")  # usable on CES now
    [resource] = rendered.definitions
    assert "description" not in resource["clientFunction"]["parameters"]
    [loss] = rendered.losses["lookup"]
    assert (loss.keyword, loss.enforced) == ("additionalProperties", True)
    with pytest.raises(SchemaConversionError, match="tool 'lookup'"):
        toolbox.render("google-ces", policy="lossless")


def test_unenforced_losses_fail_error_and_every_failing_tool_is_named():
    toolbox = toolbridge.Toolbox(store=None)
    for name in ("mail", "ping"):
        toolbox.add(ToolDefinition(name=name, parameters=obj(to={"type": "string",
                                                                 "format": "email"})),
                    lambda to: to)
    toolbox.add(ToolDefinition(name="fine", parameters=obj(n={"type": "integer"})), lambda n: n)
    with pytest.raises(SchemaConversionError) as info:
        toolbox.render("google-ces", policy="error")
    message = str(info.value)
    assert "tool 'mail'" in message and "tool 'ping'" in message and "'fine'" not in message
    assert [(loss.keyword, loss.enforced) for loss in info.value.losses] == [
        ("format", False), ("format", False)]


def test_loss_shape_is_one_dataclass_with_parameter_and_enforced():
    loss = SchemaLoss("/properties/a", "pattern", "described", "ces has no 'pattern'", "a", True)
    assert loss.parameter == "a" and loss.enforced
    assert "checked on arrival" in str(loss)


# -- JSON-expressible schemas that used to raise bare exceptions ------------------------------
def test_lone_surrogate_in_a_pattern_is_a_typed_error_everywhere():
    schema = obj(s={"type": "string", "pattern": "\ud800"})
    with pytest.raises(ValueError, match="not valid Unicode"):
        ToolDefinition(name="t", parameters=schema)
    with pytest.raises(toolbridge.ToolDefinitionError, match="tool 'bad'"):
        toolbox = toolbridge.Toolbox(store=None)

        @toolbox.tool
        def bad(s: str = Field(pattern="\ud800")) -> str:
            return s
    for dialect, tools in (
            ("openai-agents", [{"type": "function", "name": "t", "parameters": schema}]),
            ("openai-assistants", [{"type": "function", "function": {"name": "t",
                                                                     "parameters": schema}}])):
        with pytest.raises(toolbridge.WireFormatError) as info:
            toolbridge.get_dialect(dialect).read_tools(tools)
        assert info.value.field.startswith("tools[0]")


def _openapi(schema: Any, version: str = "3.1.0") -> dict[str, Any]:
    return {"openapi": version, "paths": {"/x": {"post": {
        "operationId": "make",
        "requestBody": {"content": {"application/json": {"schema": schema}}}}}}}


def test_openapi_boolean_and_string_schemas():
    [tool] = toolbridge.schema.tools_from_openapi(_openapi(True))
    assert tool.parameters["properties"]["body"] == {}
    with pytest.raises(SchemaConversionError, match=r"requestBody\.content\.schema"):
        toolbridge.schema.tools_from_openapi(_openapi("object"))
    doc = {"openapi": "3.0.3", "paths": {"/x": {"get": {"parameters": [
        {"name": "q", "in": "query", "schema": "object"}]}}}}
    with pytest.raises(SchemaConversionError, match=r"parameters\.q\.schema"):
        toolbridge.schema.tools_from_openapi(doc)
    with pytest.raises(toolbridge.UsageError, match=r"parameters\[0\].name"):
        toolbridge.schema.tools_from_openapi({"paths": {"/x": {"get": {"parameters": [
            {"in": "query"}]}}}})


def test_ces_type_list_is_a_typed_error():
    tool = {"clientFunction": {"name": "f", "parameters": {
        "type": "OBJECT", "properties": {"a": {"type": ["STRING", "NULL"]}}}}}
    with pytest.raises(toolbridge.WireFormatError) as info:
        toolbridge.get_dialect("google-ces").read_tools([tool])
    assert info.value.field == "tools[0].clientFunction.parameters"
    assert "/properties/a" in str(info.value)
    with pytest.raises(SchemaConversionError):
        to_json_schema({"type": "string"}, "ces")  # CES spells types in upper case


def test_deeply_nested_schema_in_add_is_a_definition_error():
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(300):
        deep = {"type": "object", "properties": {"a": deep}}
    with pytest.raises(toolbridge.ToolDefinitionError, match=r"tool 'd'.*nested more than"):
        toolbridge.Toolbox().add(ToolDefinition(name="d", parameters=deep), lambda **kw: 1)


def test_messages_carry_no_pydantic_links():
    toolbox = toolbridge.Toolbox(store=None)
    with pytest.raises(toolbridge.ToolDefinitionError) as info:
        toolbox.tool(name="bad name")(lambda: 1)
    assert "pydantic.dev" not in str(info.value) and "For further information" not in str(
        info.value)
    with pytest.raises(toolbridge.UsageError, match=r"paths\./x\.get") as usage:
        toolbridge.schema.tools_from_openapi({"paths": {"/x": {"get": {
            "operationId": "make", "description": "\ud800"}}}})
    assert "pydantic.dev" not in str(usage.value)
