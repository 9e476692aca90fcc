"""Neutral form: draft-07 upgrade, local $ref resolution, recursion, and hostile input."""

from __future__ import annotations

import contextlib

import pytest

from toolbridge.errors import SchemaConversionError
from toolbridge.schema import convert_schema, normalize_schema

TARGETS = ("openai-strict", "openapi-3.0", "ces", "anthropic-strict")


def test_draft07_definitions_become_inlined():
    schema = {"definitions": {"A": {"type": "string"}},
              "type": "object", "properties": {"a": {"$ref": "#/definitions/A"}}}
    assert normalize_schema(schema) == {"type": "object", "properties": {"a": {"type": "string"}}}


def test_draft07_tuple_items_and_dependencies():
    schema = {"type": "array", "items": [{"type": "integer"}], "additionalItems": False,
              "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}
    assert normalize_schema(schema) == {
        "type": "array", "prefixItems": [{"type": "integer"}], "items": False,
        "dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}}


def test_draft04_boolean_exclusive_bound():
    assert normalize_schema({"type": "number", "minimum": 1, "exclusiveMinimum": True}) == {
        "type": "number", "exclusiveMinimum": 1}


def test_ref_siblings_merge_or_allof():
    schema = {"$defs": {"U": {"type": "string", "maxLength": 3}},
              "properties": {"a": {"$ref": "#/$defs/U", "description": "d"},
                             "b": {"$ref": "#/$defs/U", "maxLength": 2}}}
    out = normalize_schema(schema)
    assert out["properties"]["a"] == {"type": "string", "maxLength": 3, "description": "d"}
    assert out["properties"]["b"] == {"allOf": [{"type": "string", "maxLength": 3}],
                                      "maxLength": 2}


def test_recursion_kept_as_ref_and_unused_defs_dropped():
    schema = {"$defs": {"N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}},
                        "Unused": {"type": "string"}},
              "type": "object", "properties": {"head": {"$ref": "#/$defs/N"}}}
    out = normalize_schema(schema)
    assert out["properties"]["head"] == {"$ref": "#/$defs/N"}
    assert list(out["$defs"]) == ["N"]


def test_mutual_recursion_and_pointer_refs():
    schema = {"$defs": {"A": {"properties": {"b": {"$ref": "#/$defs/B"}}},
                        "B": {"properties": {"a": {"$ref": "#/$defs/A"}}}},
              "properties": {"x": {"$ref": "#/$defs/A"}, "y": {"$ref": "#/properties/z"},
                             "z": {"type": "integer"}}}
    out = normalize_schema(schema)
    assert set(out["$defs"]) == {"A", "B"}
    assert out["properties"]["y"] == {"type": "integer"}


@pytest.mark.parametrize("ref", ["#/$defs/missing", "#/properties/nope", "other.json#/a",
                                 "#anchor"])
def test_ref_to_nowhere_is_a_clear_error(ref):
    with pytest.raises(SchemaConversionError, match=r"\$ref"):
        normalize_schema({"properties": {"a": {"$ref": ref}}})


# -- hostile input: finishes fast, clear error or correct result, never RecursionError ---------
def nested(depth, key="items"):
    root: dict = {}
    node = root
    for _ in range(depth):
        node[key] = {}
        node = node[key]
    return root


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("key", ["items", "not", "anyOf"])
def test_ten_thousand_deep_is_refused_by_the_depth_bound(target, key):
    schema = nested(10_000, "items") if key != "anyOf" else _deep_anyof(10_000)
    if key == "not":
        schema = nested(10_000, "not")
    with pytest.raises(SchemaConversionError, match="levels deep"):
        convert_schema(schema, target)


def _deep_anyof(depth):
    root: dict = {}
    node = root
    for _ in range(depth):
        child: dict = {}
        node["anyOf"] = [child]
        node = child
    return root


@pytest.mark.parametrize("target", TARGETS)
def test_self_reference_cycles_finish(target):
    for schema in ({"$ref": "#"}, {"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"},
                   {"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
                    "type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}):
        with contextlib.suppress(SchemaConversionError):
            convert_schema(schema, target)


@pytest.mark.parametrize("target", TARGETS)
def test_hundred_thousand_value_enum(target):
    values = [f"v{i}" for i in range(100_000)]
    out = convert_schema({"type": "object", "properties": {"e": {"enum": values}},
                          "required": ["e"]}, target)
    assert len(out.schema["properties"]["e"]["enum"]) == 100_000


def test_exponential_ref_fanout_is_refused():
    defs = {"L0": {"type": "string"}}
    for i in range(1, 40):
        defs[f"L{i}"] = {"type": "array", "prefixItems": [{"$ref": f"#/$defs/L{i - 1}"}] * 2}
    with pytest.raises(SchemaConversionError, match="more than 200000 nodes"):
        normalize_schema({"$defs": defs, "$ref": "#/$defs/L39"})


def test_long_ref_chain_is_refused_not_recursion_error():
    defs = {f"D{i}": {"type": "object", "properties": {"n": {"$ref": f"#/$defs/D{i + 1}"}}}
            for i in range(5000)}
    defs["D5000"] = {"type": "string"}
    with pytest.raises(SchemaConversionError, match="levels deep"):
        normalize_schema({"$defs": defs, "$ref": "#/$defs/D0"})


def test_deep_recursive_definition_unrolled_for_openapi30_is_refused_cleanly():
    inner: dict = {"$ref": "#/$defs/D"}
    for _ in range(100):
        inner = {"type": "array", "items": inner}
    schema = {"$defs": {"D": inner}, "type": "object", "properties": {"d": {"$ref": "#/$defs/D"}}}
    with pytest.raises(SchemaConversionError, match=r"deeper than|levels deep"):
        convert_schema(schema, "openapi-3.0")
