"""Argument fidelity: decode what each dialect delivers back to the declared types."""

from __future__ import annotations

import enum
import json
import os
from typing import Any, Literal

import jsonschema
import pytest
from google.protobuf import json_format, struct_pb2
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from pydantic import BaseModel, Field

from toolbridge.errors import ArgumentError
from toolbridge.schema import compile_decoder, decode_arguments, normalize_schema
from toolbridge.schema._ces import ces_enum_value


class Item(BaseModel):
    sku: int = Field(ge=0, le=10**6)
    qty: int = Field(1, ge=1, le=99)
    price: float = Field(ge=0, le=1e6)


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Order(BaseModel):
    items: list[Item] = Field(max_length=3)
    priority: Literal[1, 2, 3] = 2
    note: str | None = None
    coupon: int | None = Field(None, ge=0, le=1000)
    weights: dict[str, int] = Field(default_factory=dict, max_length=2)
    pair: tuple[int, float] | None = None
    level: Level | None = None


SCHEMAS: dict[str, dict[str, Any]] = {
    "order": Order.model_json_schema(),
    "flat": {"type": "object", "properties": {
        "i": {"type": "integer", "minimum": -1000, "maximum": 1000},
        "n": {"type": "number", "minimum": -1000, "maximum": 1000},
        "b": {"type": "boolean"}, "s": {"type": "string", "maxLength": 5},
        "e": {"enum": [10, 20, "x", True]},
        "u": {"anyOf": [{"type": "integer", "maximum": 100, "minimum": 0}, {"type": "string"},
                        {"type": "null"}]}},
        "required": ["i"], "additionalProperties": False},
    "nested": {"type": "object", "properties": {"rows": {"type": "array", "maxItems": 3, "items": {
        "type": "array", "maxItems": 3, "items": {"type": "integer", "minimum": 0,
                                                  "maximum": 50}}}},
        "required": ["rows"]},
}
MAX_EXAMPLES = 30
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# jsonschema whose "integer" means a Python int only (the default also accepts 3.0).
_STRICT_INT = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, v: isinstance(v, int) and not isinstance(v, bool))
StrictValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                               type_checker=_STRICT_INT)


def instances(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Valid instances of ``schema``: leaves from hypothesis-jsonschema, containers built here.

    hypothesis-jsonschema 0.23.1 fails on object schemas with hypothesis 6.170 (its
    ``from_object_schema`` calls ``many.more()``, which hypothesis removed), so objects and
    arrays are composed here and only scalar schemas go to ``from_schema``.
    """
    return _instances(normalize_schema(schema))


def _instances(node: Any) -> st.SearchStrategy[Any]:
    if "anyOf" in node:
        return st.one_of([_instances(branch) for branch in node["anyOf"]])
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        required = set(node.get("required", ()))
        extra = node.get("additionalProperties")
        if not props and isinstance(extra, dict):
            return st.dictionaries(st.text(max_size=4), _instances(extra),
                                   max_size=node.get("maxProperties", 3))
        return st.fixed_dictionaries(
            {k: _instances(v) for k, v in props.items() if k in required},
            optional={k: _instances(v) for k, v in props.items() if k not in required})
    if kind == "array":
        if "prefixItems" in node:
            return st.tuples(*(_instances(p) for p in node["prefixItems"])).map(list)
        return st.lists(_instances(node.get("items", {"type": "integer"})),
                        min_size=node.get("minItems", 0), max_size=min(node.get("maxItems", 4), 4))
    return from_schema(node)


def same(original: Any, decoded: Any) -> bool:
    """Equal values and types; an int may come back as float only where the schema says number
    (checked separately by StrictValidator for integers)."""
    if isinstance(original, dict):
        return isinstance(decoded, dict) and original.keys() == decoded.keys() and all(
            same(original[k], decoded[k]) for k in original)
    if isinstance(original, list):
        return isinstance(decoded, list) and len(original) == len(decoded) and all(
            same(a, b) for a, b in zip(original, decoded, strict=True))
    if type(original) is int and type(decoded) is float:
        return original == decoded
    return type(original) is type(decoded) and original == decoded


def small_numbers(value: Any) -> bool:
    if isinstance(value, dict):
        return all(small_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(small_numbers(v) for v in value)
    return not isinstance(value, (int, float)) or isinstance(value, bool) or abs(value) < 2**53


def ces_encode(schema: dict[str, Any], value: Any) -> Any:
    """What a CES model sends: enum values as strings, then a Struct (every number a double)."""
    def enc(node: Any, v: Any) -> Any:
        if not isinstance(node, dict):
            return v
        if "enum" in node and v in node["enum"] and not isinstance(v, str) and v is not None:
            return ces_enum_value(v)
        for branch in node.get("anyOf", ()):
            if "enum" in branch and v in branch["enum"]:
                return enc(branch, v)
        if isinstance(v, dict):
            props = node.get("properties", {})
            extra = node.get("additionalProperties")
            return {k: enc(props.get(k, extra), x) for k, x in v.items()}
        if isinstance(v, list):
            head = node.get("prefixItems", [])
            return [enc(head[i] if i < len(head) else node.get("items"), x)
                    for i, x in enumerate(v)]
        return v

    struct = struct_pb2.Struct()
    struct.update(enc(normalize_schema(schema), value))
    return json_format.MessageToDict(struct)


def strict_encode(schema: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    """What an OpenAI strict model sends: every property present, absent optional ones null."""
    neutral = normalize_schema(schema)
    out = dict(value)
    for name in neutral.get("properties", {}):
        out.setdefault(name, None)
    return out


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_property_ces_struct_round_trip(name):
    schema = SCHEMAS[name]

    @SETTINGS
    @given(instances(schema))
    def check(instance):
        assume(small_numbers(instance))
        decoded = decode_arguments(schema, ces_encode(schema, instance))
        assert same(instance, decoded), (instance, decoded)
        StrictValidator(normalize_schema(schema)).validate(decoded)

    check()


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_property_assistants_json_text_round_trip(name):
    schema = SCHEMAS[name]

    @SETTINGS
    @given(instances(schema))
    def check(instance):
        decoded = decode_arguments(schema, json.dumps(instance))
        assert same(instance, decoded)
        StrictValidator(normalize_schema(schema)).validate(decoded)

    check()


@SETTINGS
@given(instances(SCHEMAS["order"]))
def test_property_openai_strict_nulls_become_absent(instance):
    schema = SCHEMAS["order"]
    decoded = decode_arguments(schema, strict_encode(schema, instance))
    # `note`, `coupon`, `pair` and `level` accept null in the neutral schema, so null stays.
    expected = {**instance, **{k: instance.get(k) for k in ("note", "coupon", "pair", "level")}}
    assert same(expected, decoded)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_property_ces_round_trip_long(name):
    schema = SCHEMAS[name]

    scale = int(os.environ.get("TOOLBRIDGE_SLOW_SCALE", "1"))
    @settings(max_examples=100 * scale, deadline=None, suppress_health_check=list(HealthCheck))
    @given(instances(schema))
    def check(instance):
        assume(small_numbers(instance))
        assert same(instance, decode_arguments(schema, ces_encode(schema, instance)))

    check()


# -- unit behaviours -------------------------------------------------------------------------
def test_fraction_for_integer_is_an_error_with_pointer():
    schema = Order.model_json_schema()
    with pytest.raises(ArgumentError) as info:
        decode_arguments(schema, {"items": [{"sku": 1.0, "price": 2.0}, {"sku": 2.5,
                                                                          "price": 1.0}]})
    assert info.value.path == "/items/1/sku"
    assert "/items/1/sku" in str(info.value)


def test_number_stays_float_and_enum_strings_restored():
    schema = {"type": "object", "properties": {"n": {"type": "number"},
                                               "lvl": {"enum": [1, 2]},
                                               "flag": {"enum": [True, "no"]}}}
    assert decode_arguments(schema, {"n": 2.0, "lvl": "2", "flag": "true"}) == {
        "n": 2.0, "lvl": 2, "flag": True}
    assert type(decode_arguments(schema, {"n": 2.0})["n"]) is float


def test_recursive_schema():
    schema = {"$defs": {"T": {"type": "object", "properties": {
        "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/T"}}}}},
        "$ref": "#/$defs/T"}
    assert decode_arguments(schema, {"v": 1.0, "kids": [{"v": 2.0, "kids": [{"v": 3.0}]}]}) == {
        "v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]}


def test_invalid_json_text():
    with pytest.raises(ArgumentError, match="not valid JSON"):
        decode_arguments({"type": "object"}, "{nope")
    assert decode_arguments({"type": "object"}, "") == {}


def test_nothing_to_do_returns_the_same_objects():
    schema = {"type": "object", "properties": {"s": {"type": "string"},
                                               "n": {"type": "number"}}, "required": ["s"]}
    args = {"s": "x", "n": 1.5}
    assert decode_arguments(schema, args) is args
    schema2 = Order.model_json_schema()
    decoder = compile_decoder(schema2)
    assert compile_decoder(schema2) is decoder  # cached per schema object
    args2 = {"items": [{"sku": i, "qty": 1, "price": 1.5} for i in range(20)], "priority": 2}
    assert decoder(args2) is args2

    decoded = decoder(args2)  # nothing copied on the way down either (its speed: benchmarks)
    assert decoded["items"] is args2["items"]
    assert all(a is b for a, b in zip(decoded["items"], args2["items"], strict=True))


def test_deep_recursive_arguments_are_refused_not_recursion_error():
    schema = {"$defs": {"T": {"type": "object", "properties": {"k": {"$ref": "#/$defs/T"},
                                                               "v": {"type": "integer"}}}},
              "$ref": "#/$defs/T"}
    value: dict[str, Any] = {"v": 1.0}
    for _ in range(5000):
        value = {"k": value}
    with pytest.raises(ArgumentError, match="nest more than"):
        decode_arguments(schema, value)


def test_optional_int_enum_from_ces():
    schema = Order.model_json_schema()
    decoded = decode_arguments(schema, {"items": [], "level": "2"})
    assert decoded == {"items": [], "level": 2} and type(decoded["level"]) is int
