"""Per-target conversion behaviours: dict in, convert, snapshot out (one behaviour each)."""

from __future__ import annotations

import re

import pytest
from schema_checks import check_ces, check_openai_strict, check_openapi30

from toolbridge.errors import SchemaConversionError, UsageError
from toolbridge.schema import Conversion, SchemaLoss, convert_schema


def obj(**props):
    return {"type": "object", "properties": props, "required": list(props)}


# -- OpenAI strict ---------------------------------------------------------------------------
def test_strict_optional_becomes_required_and_nullable_default_noted():
    schema = {"type": "object", "properties": {"days": {"type": "integer", "default": 3},
                                               "q": {"type": "string"}}, "required": ["q"]}
    out = convert_schema(schema, "openai-strict")
    assert out.schema == {
        "type": "object",
        "properties": {"days": {"type": ["integer", "null"],
                                "description": "(default: 3; null uses it)"},
                       "q": {"type": "string"}},
        "required": ["days", "q"], "additionalProperties": False}
    # Not a loss: null means "absent" when arguments are decoded, so the default applies.
    assert out.losses == ()
    assert convert_schema(schema, "openai-strict", policy="error").schema == out.schema
    check_openai_strict(out.schema)


def test_strict_default_of_a_nullable_optional_is_a_loss():
    # `Optional[str] = "C"`: null is a value of its own, so "use the default" cannot be said.
    schema = {"type": "object", "properties": {
        "unit": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": "C"}}}
    out = convert_schema(schema, "openai-strict")
    assert out.losses == (SchemaLoss("/properties/unit", "default", "described",
                                     "strict mode has no defaults", "unit", enforced=False),)
    check_openai_strict(out.schema)


def test_strict_nullable_enum_keeps_one_null():
    schema = {"type": "object", "properties": {
        "u": {"type": ["string", "null"], "enum": ["a", None]}}}
    out = convert_schema(schema, "openai-strict", policy="error").schema
    assert out["properties"]["u"]["enum"] == ["a", None]


def test_strict_optional_ref_and_enum_made_nullable():
    schema = {"type": "object", "properties": {
        "unit": {"enum": ["C", "F"], "type": "string"},
        "node": {"$ref": "#/$defs/N"}},
        "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}}
    out = convert_schema(schema, "openai-strict", policy="allow").schema
    assert out["properties"]["unit"] == {"enum": ["C", "F", None], "type": ["string", "null"]}
    assert out["properties"]["node"] == {"anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}
    assert out["$defs"]["N"]["additionalProperties"] is False
    check_openai_strict(out)


def test_strict_pydantic_optional_none_default_is_silent():
    schema = {"type": "object", "properties": {
        "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}}}
    out = convert_schema(schema, "openai-strict")
    assert out.lossless
    assert out.schema["properties"]["b"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}


def test_strict_open_dict_is_a_loss():
    out = convert_schema(obj(tags={"type": "object", "additionalProperties": {"type": "string"}}),
                         "openai-strict")
    tags = out.schema["properties"]["tags"]
    assert tags["additionalProperties"] is False and tags["properties"] == {}
    assert [(loss.pointer, loss.keyword) for loss in out.losses] == [
        ("/properties/tags", "additionalProperties")]


def test_strict_oneof_becomes_anyof_approximated():
    out = convert_schema(obj(v={"oneOf": [{"type": "integer"}, {"type": "string"}]}),
                         "openai-strict")
    assert out.schema["properties"]["v"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert out.losses[0].action == "approximated"


def test_strict_allof_of_objects_is_merged_exactly():
    schema = {"allOf": [obj(a={"type": "string"}), obj(b={"type": "integer"})]}
    out = convert_schema(schema, "openai-strict")
    assert out.lossless
    assert out.schema["properties"] == {"a": {"type": "string"}, "b": {"type": "integer"}}


def test_strict_unsupported_keywords_described():
    schema = obj(s={"type": "string", "minLength": 2, "format": "hostname-idn"},
                 n={"not": {"type": "null"}})
    out = convert_schema(schema, "openai-strict")
    assert out.schema["properties"]["s"] == {
        "type": "string", "description": "(minLength: 2) (format: hostname-idn)"}
    assert {(loss.keyword, loss.action) for loss in out.losses} == {
        ("minLength", "described"), ("format", "described"), ("not", "described"),
        ("type", "approximated")}  # `n` had only `not`: strict mode needs a type


def test_strict_multi_type_list_split_into_anyof():
    out = convert_schema(obj(v={"type": ["string", "integer"], "minLength": 1, "minimum": 0}),
                         "openai-strict", policy="allow")
    assert out.schema["properties"]["v"] == {"anyOf": [{"type": "string"},
                                                      {"type": "integer", "minimum": 0}]}


def test_strict_tuple_approximated():
    out = convert_schema(obj(t={"type": "array", "prefixItems": [{"type": "integer"},
                                                                 {"type": "string"}],
                                "minItems": 2, "maxItems": 2}), "openai-strict")
    assert out.schema["properties"]["t"]["items"] == {"anyOf": [{"type": "integer"},
                                                                {"type": "string"}]}
    assert out.losses[0].keyword == "prefixItems"


def test_strict_non_object_root_is_wrapped():
    out = convert_schema({"type": "string"}, "openai-strict")
    assert out.schema == {"type": "object", "properties": {"value": {"type": "string"}},
                          "required": ["value"], "additionalProperties": False}
    assert out.losses[0].action == "approximated"


def test_strict_ref_siblings_inlined_from_pydantic():
    schema = {"type": "object", "properties": {"u": {"$ref": "#/$defs/Unit", "default": "C"}},
              "$defs": {"Unit": {"enum": ["C", "F"], "type": "string", "title": "Unit"}}}
    out = convert_schema(schema, "openai-strict").schema
    assert "$defs" not in out
    assert out["properties"]["u"]["enum"] == ["C", "F", None]


# -- OpenAPI 3.0 -----------------------------------------------------------------------------
def test_openapi30_nullable_const_bounds_examples():
    schema = obj(a={"anyOf": [{"type": "string"}, {"type": "null"}]},
                 b={"const": "x"}, c={"type": "number", "exclusiveMinimum": 0},
                 d={"type": "integer", "examples": [1]}, e={"type": ["integer", "null"]})
    out = convert_schema(schema, "openapi-3.0")
    assert out.lossless
    assert out.schema["properties"] == {
        "a": {"type": "string", "nullable": True}, "b": {"enum": ["x"]},
        "c": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        "d": {"type": "integer", "example": 1}, "e": {"type": "integer", "nullable": True}}
    check_openapi30(out.schema)


def test_openapi30_keeps_stricter_bound():
    out = convert_schema({"type": "integer", "minimum": 5, "exclusiveMinimum": 2}, "openapi-3.0")
    assert out.schema == {"type": "integer", "minimum": 5}


def test_openapi30_recursion_cut_and_reported():
    schema = {"$ref": "#/$defs/N", "$defs": {"N": {"type": "object", "properties": {
        "next": {"$ref": "#/$defs/N"}}}}}
    out = convert_schema(schema, "openapi-3.0")
    assert [loss.keyword for loss in out.losses] == ["$ref"]
    assert out.losses[0].pointer == "/$defs/N/properties/next"
    check_openapi30(out.schema)


def test_openapi30_array_gets_items_and_unknown_dropped():
    out = convert_schema({"type": "array", "contains": {"type": "integer"}, "x-keep": 1},
                         "openapi-3.0", policy="allow")
    assert out.schema == {"type": "array", "items": {}, "x-keep": 1}
    assert [loss.keyword for loss in out.losses] == ["contains"]


# -- CES -------------------------------------------------------------------------------------
def test_ces_types_enums_refs_and_item_counts():
    schema = {"type": "object", "properties": {
        "level": {"type": "integer", "enum": [1, 2]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "tree": {"$ref": "#/$defs/T"}},
        "required": ["level"],
        "$defs": {"T": {"type": "object", "properties": {"kids": {
            "type": "array", "items": {"$ref": "#/$defs/T"}}}}}}
    out = convert_schema(schema, "ces")
    assert out.lossless
    assert out.schema == {
        "type": "OBJECT", "required": ["level"],
        "properties": {"level": {"type": "STRING", "enum": ["1", "2"]},
                       "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": "3"},
                       "tree": {"ref": "#/defs/T"}},
        "defs": {"T": {"type": "OBJECT", "properties": {"kids": {
            "type": "ARRAY", "items": {"ref": "#/defs/T"}}}}}}
    check_ces(out.schema)


def test_ces_drops_and_describes():
    schema = obj(e={"type": "string", "format": "email", "pattern": "^a"},
                 n={"type": "integer", "exclusiveMinimum": 0, "multipleOf": 2},
                 f={"type": "number", "exclusiveMaximum": 1.5})
    out = convert_schema(schema, "ces")
    props = out.schema["properties"]
    assert props["e"] == {"type": "STRING", "description": "(format: email) (pattern: ^a)"}
    assert props["n"] == {"type": "INTEGER", "minimum": 1, "description": "(multipleOf: 2)"}
    assert props["f"]["maximum"] == 1.5
    assert {(loss.keyword, loss.action) for loss in out.losses} == {
        ("format", "described"), ("pattern", "described"), ("multipleOf", "described"),
        ("exclusiveMaximum", "approximated")}
    check_ces(out.schema)


def test_ces_nullable_and_additional_properties():
    schema = {"type": "object", "additionalProperties": False, "properties": {
        "a": {"type": ["string", "null"]}, "d": {"type": "object",
                                                  "additionalProperties": {"type": "integer"}},
        "o": {"type": "object", "additionalProperties": True}}}
    out = convert_schema(schema, "ces", policy="allow")
    assert out.schema["properties"] == {
        "a": {"type": "STRING", "nullable": True},
        "d": {"type": "OBJECT", "additionalProperties": {"type": "INTEGER"}},
        "o": {"type": "OBJECT"}}
    assert [loss.keyword for loss in out.losses] == ["additionalProperties"]
    check_ces(out.schema)


def test_ces_root_recursion_hoisted_into_defs():
    schema = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
    out = convert_schema(schema, "ces").schema
    assert out["properties"]["kids"]["items"] == {"ref": "#/defs/Root"}
    assert out["defs"]["Root"]["properties"] == out["properties"]
    check_ces(out)


# -- policy and report -----------------------------------------------------------------------
def test_policy_error_fails_on_unenforced_losses_lossless_on_all():
    schema = obj(a={"type": "string", "format": "email"}, b={"type": "string", "pattern": "x"})
    described = convert_schema(schema, "ces")
    assert [(loss.keyword, loss.enforced) for loss in described.losses] == [
        ("format", False), ("pattern", True)]  # a Toolbox checks `pattern` on arrival
    with pytest.raises(SchemaConversionError) as info:
        convert_schema(schema, "ces", policy="error")
    assert [loss.keyword for loss in info.value.losses] == ["format"]
    assert "a (/properties/a) format" in str(info.value)
    assert "pattern" not in str(info.value)
    with pytest.raises(SchemaConversionError) as info:
        convert_schema(schema, "ces", policy="lossless")
    assert [loss.keyword for loss in info.value.losses] == ["format", "pattern"]
    assert "b (/properties/b) pattern" in str(info.value)
    # Only enforced losses: `error` passes and describes them, as `describe` does.
    only_pattern = obj(b={"type": "string", "pattern": "x"})
    assert convert_schema(only_pattern, "ces", policy="error") == convert_schema(only_pattern,
                                                                                 "ces")


def test_policy_allow_leaves_description_alone():
    out = convert_schema(obj(a={"type": "string", "format": "email"}), "ces", policy="allow")
    assert out.schema["properties"]["a"] == {"type": "STRING"}
    assert out.losses[0].action == "dropped"


def test_loss_str_and_conversion_lossless():
    loss = SchemaLoss("/properties/a", "format", "described", "ces has no 'format'")
    assert str(loss) == "/properties/a format: described (ces has no 'format'; not enforced)"
    loss = SchemaLoss("/$defs/Address/properties/postcode", "pattern", "described",
                      "ces has no 'pattern'", "to.postcode", enforced=True)
    assert str(loss) == ("to.postcode (/$defs/Address/properties/postcode) pattern: described "
                         "(ces has no 'pattern'; checked on arrival)")
    assert Conversion({"type": "object"}).lossless


def test_unknown_target_and_policy_are_usage_errors():
    with pytest.raises(UsageError):
        convert_schema({}, "gemini-1.0")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        convert_schema({}, "ces", policy="warn")  # type: ignore[arg-type]


def test_input_is_not_mutated():
    schema = obj(a={"type": "string", "format": "email", "default": "x"})
    before = repr(schema)
    for target in ("openai-strict", "openapi-3.0", "ces"):
        convert_schema(schema, target)
    assert repr(schema) == before


def test_strict_untyped_schema_becomes_scalar_anyof():
    out = convert_schema(obj(any={}), "openai-strict")
    assert out.schema["properties"]["any"]["anyOf"][0] == {"type": "string"}
    assert out.losses[0].keyword == "type"
    check_openai_strict(out.schema)


def test_recursive_root_ref_is_inlined_one_level():
    schema = {"$ref": "#/$defs/N", "$defs": {"N": {"type": "object", "properties": {
        "next": {"$ref": "#/$defs/N"}}}}}
    out = convert_schema(schema, "openai-strict")
    assert out.lossless
    assert out.schema["properties"]["next"] == {"anyOf": [{"$ref": "#/$defs/N"},
                                                          {"type": "null"}]}
    check_openai_strict(out.schema)


@pytest.mark.parametrize("bad, where", [
    ({"enum": "abc"}, "/enum"),
    ({"type": "object", "properties": [1, 2]}, "/properties"),
    ({"$ref": 5}, "/$ref"),
    ({"type": "object", "properties": {"a": {"type": "strnig"}}}, "/properties/a/type"),
])
@pytest.mark.parametrize("target", ["openai-strict", "openapi-3.0", "ces"])
def test_invalid_json_schema_is_refused_naming_where(bad, where, target):
    expected = re.escape(f"not a valid JSON Schema at {where}:")
    with pytest.raises(SchemaConversionError, match=expected):
        convert_schema(bad, target)
