"""The ``gemini`` target, one behaviour each, expected values written by hand (google-genai
3.6.1 ``types.Schema`` accepts every output: `schema_checks.check_gemini`)."""

from __future__ import annotations

from typing import Any

from schema_checks import check_gemini

from toolbridge.schema import convert_schema


def converted(schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    conversion = convert_schema(schema, "gemini", policy="allow")
    check_gemini(conversion.schema)
    return conversion.schema, [f"{loss.pointer} {loss.keyword} {loss.action}"
                               for loss in conversion.losses]


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_counts_are_numbers_and_string_bounds_stay() -> None:
    assert converted(obj(tags={"type": "array", "items": {"type": "string", "minLength": 2},
                               "minItems": 1, "maxItems": 3})) == ({
        "type": "OBJECT", "properties": {"tags": {
            "type": "ARRAY", "items": {"type": "STRING", "minLength": 2},
            "minItems": 1, "maxItems": 3}}}, [])


def test_only_the_formats_gemini_takes_are_kept() -> None:
    assert converted(obj(when={"type": "string", "format": "date-time"},
                         day={"type": "string", "format": "date"},
                         n={"type": "integer", "format": "int64"})) == ({
        "type": "OBJECT", "properties": {
            "when": {"type": "STRING", "format": "date-time"},
            "day": {"type": "STRING"},
            "n": {"type": "INTEGER", "format": "int64"}}}, ["/properties/day format dropped"])


def test_an_inner_object_without_properties_becomes_any_value() -> None:
    assert converted(obj(meta={"type": "object"}, env={
        "type": "object", "additionalProperties": {"type": "string"}})) == ({
        "type": "OBJECT", "properties": {
            "meta": {},
            "env": {"type": "OBJECT", "additionalProperties": {"type": "STRING"}}}},
        ["/properties/meta type approximated"])


def test_recursion_is_unrolled_then_cut() -> None:
    schema = {**obj(node={"$ref": "#/$defs/Node"}), "$defs": {"Node": obj(
        name={"type": "string"}, next={"$ref": "#/$defs/Node"})}}
    out, losses = converted(schema)
    level = out["properties"]["node"]
    for _ in range(2):
        assert level["properties"]["name"] == {"type": "STRING"}
        level = level["properties"]["next"]
    assert level == {}  # cut: any value
    assert losses == ["/$defs/Node/properties/next $ref approximated"]
    assert "ref" not in str(out) and "defs" not in str(out)


def test_tuples_become_items_of_any_position() -> None:
    assert converted(obj(pair={"type": "array", "prefixItems": [
        {"type": "string"}, {"type": "integer"}]})) == ({
        "type": "OBJECT", "properties": {"pair": {
            "type": "ARRAY", "items": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
            "minItems": 2}}}, ["/properties/pair prefixItems approximated"])


def test_numeric_enums_are_strings_with_their_type() -> None:
    assert converted(obj(size={"enum": [1, 2, 3]})) == ({
        "type": "OBJECT", "properties": {"size": {"type": "STRING",
                                                  "enum": ["1", "2", "3"]}}}, [])
