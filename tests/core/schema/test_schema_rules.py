"""The rule table drives the converters and the docs: the three can never disagree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolbridge.schema import convert_schema
from toolbridge.schema._rules import RULES, TARGETS, kind_of
from toolbridge.schema._rules_doc import EXAMPLE, render

DOC = Path(__file__).resolve().parents[3] / "docs" / "schemas.md"

# A node using each keyword (with the `type` it needs), placed at /properties/p.
SAMPLES = {
    "type": {"type": "string"}, "nullable": {"type": "string", "nullable": True},
    "properties": {"type": "object", "properties": {"a": {"type": "string"}}},
    "required": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
    "additionalProperties": {"type": "object", "additionalProperties": {"type": "string"}},
    "patternProperties": {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
    "propertyNames": {"type": "object", "propertyNames": {"maxLength": 3}},
    "minProperties": {"type": "object", "minProperties": 1},
    "maxProperties": {"type": "object", "maxProperties": 1},
    "items": {"type": "array", "items": {"type": "string"}},
    "prefixItems": {"type": "array", "prefixItems": [{"type": "string"}]},
    "minItems": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "maxItems": {"type": "array", "items": {"type": "string"}, "maxItems": 1},
    "uniqueItems": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    "contains": {"type": "array", "contains": {"type": "string"}},
    "minContains": {"type": "array", "minContains": 1},
    "maxContains": {"type": "array", "maxContains": 1},
    "unevaluatedItems": {"type": "array", "unevaluatedItems": False},
    "unevaluatedProperties": {"type": "object", "unevaluatedProperties": False},
    "enum": {"type": "string", "enum": ["a"]}, "const": {"type": "string", "const": "a"},
    "anyOf": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    "oneOf": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    "allOf": {"allOf": [{"type": "string"}, {"maxLength": 1}, {"maxLength": 2}]},
    "not": {"type": "string", "not": {"const": "a"}},
    "if": {"type": "string", "if": {"const": "a"}},
    "then": {"type": "string", "then": {"const": "a"}},
    "else": {"type": "string", "else": {"const": "a"}},
    "dependentRequired": {"type": "object", "dependentRequired": {"a": ["b"]}},
    "dependentSchemas": {"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}},
    "$defs": {"type": "string", "$defs": {"X": {"type": "string"}}},
    "$ref": {"$ref": "#/$defs/X"},
    "title": {"type": "string", "title": "T"}, "description": {"type": "string",
                                                               "description": "D"},
    "default": {"type": "string", "default": "a"},
    "examples": {"type": "string", "examples": ["a"]},
    "example": {"type": "string", "example": "a"},
    "format": {"type": "string", "format": "email"},
    "pattern": {"type": "string", "pattern": "^a"},
    "minLength": {"type": "string", "minLength": 1}, "maxLength": {"type": "string",
                                                                   "maxLength": 1},
    "minimum": {"type": "number", "minimum": 1}, "maximum": {"type": "number", "maximum": 1},
    "exclusiveMinimum": {"type": "number", "exclusiveMinimum": 1},
    "exclusiveMaximum": {"type": "number", "exclusiveMaximum": 1},
    "multipleOf": {"type": "number", "multipleOf": 2},
    "discriminator": {"type": "object", "discriminator": {"propertyName": "k"}},
    "readOnly": {"type": "string", "readOnly": True},
    "writeOnly": {"type": "string", "writeOnly": True},
    "deprecated": {"type": "string", "deprecated": True},
    "contentEncoding": {"type": "string", "contentEncoding": "base64"},
    "contentMediaType": {"type": "string", "contentMediaType": "text/html"},
    "contentSchema": {"type": "string", "contentSchema": {"type": "object"}},
    "xml": {"type": "string", "xml": {"name": "x"}},
    "externalDocs": {"type": "string", "externalDocs": {"url": "https://x"}},
    "$schema": {"type": "string", "$schema": "https://json-schema.org/draft/2020-12/schema"},
    "$id": {"type": "string", "$id": "x"}, "$anchor": {"type": "string", "$anchor": "x"},
    "$comment": {"type": "string", "$comment": "x"},
    "$vocabulary": {"type": "string", "$vocabulary": {}},
    "$dynamicAnchor": {"type": "string", "$dynamicAnchor": "x"},
    "$dynamicRef": {"type": "string", "$dynamicRef": "#x"},
}

# What each "convert" treatment gives for its SAMPLES node, written from the rule's note
# (keyword, target) -> (the converted node, the keywords reported lost under it).
CONVERTED: dict[tuple[str, str], tuple[dict[str, Any], set[str]]] = {
    ("type", "openai-strict"): ({"type": "string"}, set()),
    ("type", "openapi-3.0"): ({"type": "string"}, set()),
    ("type", "ces"): ({"type": "STRING"}, set()),
    ("nullable", "openai-strict"): ({"type": ["string", "null"]}, set()),
    ("required", "openai-strict"): ({"type": "object", "properties": {"a": {"type": "string"}},
                                     "required": ["a"], "additionalProperties": False}, set()),
    ("additionalProperties", "openai-strict"): (
        {"type": "object", "additionalProperties": False, "properties": {}, "required": []},
        {"additionalProperties"}),
    ("additionalProperties", "ces"): (
        {"type": "OBJECT", "additionalProperties": {"type": "STRING"}}, set()),
    ("items", "openapi-3.0"): ({"type": "array", "items": {"type": "string"}}, set()),
    ("prefixItems", "openai-strict"): (
        {"type": "array", "items": {"type": "string"}, "minItems": 1}, {"prefixItems"}),
    ("prefixItems", "openapi-3.0"): (
        {"type": "array", "items": {"type": "string"}, "minItems": 1}, {"prefixItems"}),
    ("minItems", "ces"): ({"type": "ARRAY", "items": {"type": "STRING"}, "minItems": "1"},
                          set()),
    ("maxItems", "ces"): ({"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": "1"},
                          set()),
    ("enum", "openapi-3.0"): ({"type": "string", "enum": ["a"]}, set()),
    ("enum", "ces"): ({"type": "STRING", "enum": ["a"]}, set()),
    ("const", "openapi-3.0"): ({"type": "string", "enum": ["a"]}, set()),
    ("const", "ces"): ({"type": "STRING", "enum": ["a"]}, set()),
    ("anyOf", "openai-strict"): ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, set()),
    ("anyOf", "ces"): ({"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}, set()),
    ("oneOf", "openai-strict"): ({"anyOf": [{"type": "string"}, {"type": "integer"}]},
                                 {"oneOf"}),
    ("oneOf", "ces"): ({"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}, {"oneOf"}),
    # the two maxLength entries cannot merge: lost; strict mode's typeless node is any scalar
    ("allOf", "openai-strict"): (
        {"type": "string", "anyOf": [{"type": "string"}, {"type": "number"},
                                     {"type": "boolean"}, {"type": "null"}]},
        {"maxLength", "type"}),
    ("allOf", "ces"): ({"type": "STRING"}, {"maxLength"}),
    ("$defs", "openai-strict"): ({"type": "string"}, set()),
    ("$defs", "openapi-3.0"): ({"type": "string"}, set()),
    ("$defs", "ces"): ({"type": "STRING"}, set()),
    ("$ref", "openai-strict"): ({"type": "string"}, set()),
    ("$ref", "openapi-3.0"): ({"type": "string"}, set()),
    ("$ref", "ces"): ({"type": "STRING"}, set()),
    ("default", "openai-strict"): ({"type": "string"}, {"default"}),
    ("default", "ces"): ({"type": "STRING", "default": "a"}, set()),
    ("examples", "openapi-3.0"): ({"type": "string", "example": "a"}, set()),
    ("format", "openai-strict"): ({"type": "string", "format": "email"}, set()),
    ("exclusiveMinimum", "openapi-3.0"): (
        {"type": "number", "exclusiveMinimum": True, "minimum": 1}, set()),
    ("exclusiveMinimum", "ces"): ({"type": "NUMBER", "minimum": 1}, {"exclusiveMinimum"}),
    ("exclusiveMaximum", "openapi-3.0"): (
        {"type": "number", "exclusiveMaximum": True, "maximum": 1}, set()),
    ("exclusiveMaximum", "ces"): ({"type": "NUMBER", "maximum": 1}, {"exclusiveMaximum"}),
    ("discriminator", "openapi-3.0"): (
        {"type": "object", "discriminator": {"propertyName": "k"}}, set()),
    # Gemini: CES's Schema subset, plus string/object bounds, pattern and example kept.
    ("type", "gemini"): ({"type": "STRING"}, set()),
    ("prefixItems", "gemini"): (
        {"type": "ARRAY", "items": {"type": "STRING"}, "minItems": 1}, {"prefixItems"}),
    ("additionalProperties", "gemini"): (
        {"type": "OBJECT", "additionalProperties": {"type": "STRING"}}, set()),
    ("enum", "gemini"): ({"type": "STRING", "enum": ["a"]}, set()),
    ("const", "gemini"): ({"type": "STRING", "enum": ["a"]}, set()),
    ("anyOf", "gemini"): ({"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}, set()),
    ("oneOf", "gemini"): ({"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}, {"oneOf"}),
    # maxLength is kept on Gemini, so the two entries disagree and cannot be merged exactly.
    ("allOf", "gemini"): ({}, {"allOf"}),
    ("$defs", "gemini"): ({"type": "STRING"}, set()),
    ("$ref", "gemini"): ({"type": "STRING"}, set()),
    ("default", "gemini"): ({"type": "STRING", "default": "a"}, set()),
    ("format", "gemini"): ({"type": "STRING"}, {"format"}),  # email: not a Gemini format
    ("exclusiveMinimum", "gemini"): ({"type": "NUMBER", "minimum": 1}, {"exclusiveMinimum"}),
    ("exclusiveMaximum", "gemini"): ({"type": "NUMBER", "maximum": 1}, {"exclusiveMaximum"}),
}


def test_every_rule_has_a_sample():
    assert {rule.keyword for rule in RULES} == set(SAMPLES)


def test_every_conversion_has_its_expected_node():
    converts = {(rule.keyword, target) for rule in RULES for target in TARGETS
                if rule.on(target).kind == "convert"}
    assert converts == set(CONVERTED)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.keyword)
def test_converter_follows_rule_table(rule, target):
    node = SAMPLES[rule.keyword]
    schema = {"type": "object", "properties": {"p": node}, "required": ["p"],
              "$defs": {"X": {"type": "string"}}}
    out = convert_schema(schema, target, policy="allow")
    converted = out.schema["properties"]["p"]
    lost = {loss.keyword for loss in out.losses if loss.pointer.startswith("/properties/p")}
    kind = rule.on(target).kind
    if kind == "keep":
        assert rule.keyword in converted
        if not isinstance(node[rule.keyword], (dict, list)):  # sub-schemas are converted too
            assert converted[rule.keyword] == node[rule.keyword]
        assert rule.keyword not in lost
    elif kind == "drop":
        assert rule.keyword not in converted
        assert rule.keyword in lost
    elif kind == "ignore":
        assert rule.keyword not in converted
        assert not out.losses
    else:
        assert kind == "convert"
        assert (converted, lost) == CONVERTED[rule.keyword, target]


def test_unknown_keywords():
    assert kind_of("x-foo", "openapi-3.0") == "keep"
    assert kind_of("x-foo", "ces") == "drop"
    out = convert_schema({"type": "object", "frobnicate": 1}, "openapi-3.0")
    assert [loss.keyword for loss in out.losses] == ["frobnicate"]


def test_docs_match_rule_table():
    assert DOC.read_text() == render(), (
        "docs/schemas.md is stale: run `python -m toolbridge.schema._rules_doc`")


# docs/schemas.md's example, its three conversions written out by hand: the page is generated,
# so a converter change would otherwise only show as "stale" and be regenerated unread.
EXAMPLE_CONVERTED: dict[str, tuple[dict[str, Any], list[str]]] = {
    "openai-strict": ({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "description": "(maxLength: 80)"},
            "age": {"type": ["integer", "null"], "exclusiveMinimum": 0,
                    "description": "(default: 18; null uses it)"},
            "tags": {"type": ["object", "null"], "additionalProperties": False,
                     "description": '(additionalProperties: {"type": "string"})',
                     "properties": {}, "required": []},
        },
        "required": ["email", "age", "tags"],
        "additionalProperties": False,
    }, [
        "email (/properties/email) maxLength: described (openai-strict has no 'maxLength'; "
        "checked on arrival)",
        "tags (/properties/tags) additionalProperties: described (strict mode needs "
        "additionalProperties false; the object accepts only its declared properties; "
        "checked on arrival)",
    ]),
    "openapi-3.0": ({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 80},
            "age": {"type": "integer", "exclusiveMinimum": True, "default": 18, "minimum": 0},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["email"],
    }, []),
    "ces": ({
        "type": "OBJECT",
        "properties": {
            "email": {"type": "STRING", "description": "(format: email) (maxLength: 80)"},
            "age": {"type": "INTEGER", "default": 18, "minimum": 1},  # > 0 on integers: >= 1
            "tags": {"type": "OBJECT", "additionalProperties": {"type": "STRING"}},
        },
        "required": ["email"],
    }, [
        "email (/properties/email) format: described (ces has no 'format'; not enforced)",
        "email (/properties/email) maxLength: described (ces has no 'maxLength'; checked on "
        "arrival)",
    ]),
    "gemini": ({
        "type": "OBJECT",
        "properties": {
            "email": {"type": "STRING", "maxLength": 80, "description": "(format: email)"},
            "age": {"type": "INTEGER", "default": 18, "minimum": 1},
            "tags": {"type": "OBJECT", "additionalProperties": {"type": "STRING"}},
        },
        "required": ["email"],
    }, [
        "email (/properties/email) format: described (gemini takes no format 'email' on "
        "STRING; not enforced)",
    ]),
}


@pytest.mark.parametrize("target", TARGETS)
def test_the_docs_example_converts_as_written_by_hand(target):
    conversion = convert_schema(EXAMPLE, target)
    schema, losses = EXAMPLE_CONVERTED[target]
    assert conversion.schema == schema
    assert [str(loss) for loss in conversion.losses] == losses
