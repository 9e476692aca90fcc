"""The ``anthropic-strict`` target: dict in, converted dict out, written by hand; every output
is checked by the anthropic SDK's own strict rewrite (`check_anthropic_strict`)."""

from __future__ import annotations

import pytest
from schema_checks import check_anthropic_strict

from toolbridge.errors import SchemaConversionError
from toolbridge.schema import convert_schema, unwrap_arguments


def obj(required=(), **props):
    return {"type": "object", "properties": props, "required": list(required)}


def test_optional_properties_stay_optional_and_defaults_are_described_not_lost():
    schema = obj(["a"], a={"type": "integer"}, b={"type": "integer", "default": 2},
                 tag={"anyOf": [{"type": "string"}, {"type": "null"}], "default": None})
    out = convert_schema(schema, "anthropic-strict", policy="lossless")
    assert out.schema == {
        "type": "object", "required": ["a"], "additionalProperties": False,
        "properties": {"a": {"type": "integer"},
                       "b": {"type": "integer", "description": "(default: 2)"},
                       "tag": {"anyOf": [{"type": "string"}, {"type": "null"}],
                               "description": "(default: null)"}}}
    check_anthropic_strict(out.schema)


def test_type_lists_nullable_and_literals():
    schema = obj(["a", "b", "c", "d"], a={"type": ["string", "integer", "null"]},
                 b={"type": "string", "nullable": True}, c={"type": "integer",
                                                            "enum": [1, 2, "x"]},
                 d={"type": "string", "const": "on"})
    out = convert_schema(schema, "anthropic-strict")
    props = out.schema["properties"]
    assert props["a"] == {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
    assert props["b"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert props["c"] == {"enum": [1, 2]}  # "x" can never be an integer
    assert props["d"] == {"const": "on"}
    assert [(loss.parameter, loss.keyword, loss.action) for loss in out.losses] == [
        ("c", "enum", "approximated")]
    check_anthropic_strict(out.schema)


def test_a_type_beside_any_of_moves_into_the_branches():
    schema = obj(["v"], v={"type": "string", "anyOf": [{"format": "email"},
                                                       {"type": "integer"}]})
    out = convert_schema(schema, "anthropic-strict")
    assert out.schema["properties"]["v"] == {"type": "string", "format": "email"}
    check_anthropic_strict(out.schema)


def test_constraints_the_subset_lacks_are_described_and_checked_on_arrival():
    schema = obj(["n", "s", "xs"], n={"type": "integer", "minimum": 1, "maximum": 9},
                 s={"type": "string", "pattern": "^a", "format": "hostname"},
                 xs={"type": "array", "items": {"type": "string"}, "minItems": 2,
                     "maxItems": 4})
    out = convert_schema(schema, "anthropic-strict")
    props = out.schema["properties"]
    assert props["n"] == {"type": "integer", "description": "(minimum: 1) (maximum: 9)"}
    assert props["s"] == {"type": "string", "format": "hostname", "description": "(pattern: ^a)"}
    assert props["xs"] == {"type": "array", "items": {"type": "string"},
                           "description": "(maxItems: 4) (minItems: 2)"}
    assert all(loss.enforced for loss in out.losses)
    check_anthropic_strict(out.schema)
    with pytest.raises(SchemaConversionError, match="without loss"):
        convert_schema(schema, "anthropic-strict", policy="lossless")


def test_recursion_is_unrolled_then_cut():
    schema = {"$ref": "#/$defs/N", "$defs": {"N": {"type": "object", "properties": {
        "label": {"type": "string"}, "next": {"$ref": "#/$defs/N"}}}}}
    out = convert_schema(schema, "anthropic-strict")
    deepest = out.schema["properties"]["next"]["properties"]["next"]["properties"]["next"]
    assert deepest["description"] == "(recursive: N)"  # the root and two levels unrolled
    assert {(loss.parameter, loss.keyword) for loss in out.losses} == {
        ("next.next.next", "$ref"), ("next.next.next", "type")}
    check_anthropic_strict(out.schema)


def test_a_root_that_is_not_an_object_is_wrapped_and_unwrapped_on_arrival():
    schema = {"anyOf": [obj(["a"], a={"type": "string"}), obj(["b"], b={"type": "integer"})]}
    out = convert_schema(schema, "anthropic-strict")
    assert out.wrapped == "value"
    assert out.schema["required"] == ["value"]
    assert len(out.schema["properties"]["value"]["anyOf"]) == 2
    check_anthropic_strict(out.schema)
    assert unwrap_arguments(schema, "anthropic-strict", {"value": {"a": "x"}}) == {"a": "x"}


def test_open_dicts_are_closed():
    out = convert_schema(obj(["m"], m={"type": "object", "additionalProperties": {
        "type": "integer"}}), "anthropic-strict")
    assert out.schema["properties"]["m"]["additionalProperties"] is False
    [loss] = out.losses
    assert (loss.keyword, loss.enforced) == ("additionalProperties", True)


def test_an_objects_properties_move_into_its_any_of_branches():
    """"a or b required": each branch becomes the whole object, closed as strict mode needs;
    at the root, which must stay one object, the alternatives are checked on arrival."""
    either = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
              "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
    out = convert_schema(obj(["x"], x=either), "anthropic-strict")
    branch = {"type": "object", "additionalProperties": False,
              "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    assert out.lossless
    assert out.schema["properties"]["x"] == {"anyOf": [{**branch, "required": ["a"]},
                                                       {**branch, "required": ["b"]}]}
    check_anthropic_strict(out.schema)
    root = convert_schema(either, "anthropic-strict", policy="allow")
    assert root.schema == branch and root.wrapped is None
    assert ("", "anyOf") in {(loss.pointer, loss.keyword) for loss in root.losses}
    assert all(loss.enforced for loss in root.losses)
    check_anthropic_strict(root.schema)
