"""The rule table drives the converters and the docs: the three can never disagree."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbridge.schema import convert_schema
from toolbridge.schema._rules import RULES, TARGETS, kind_of
from toolbridge.schema._rules_doc import render

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


def test_every_rule_has_a_sample():
    assert {rule.keyword for rule in RULES} == set(SAMPLES)


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


def test_unknown_keywords():
    assert kind_of("x-foo", "openapi-3.0") == "keep"
    assert kind_of("x-foo", "ces") == "drop"
    out = convert_schema({"type": "object", "frobnicate": 1}, "openapi-3.0")
    assert [loss.keyword for loss in out.losses] == ["frobnicate"]


def test_docs_match_rule_table():
    assert DOC.read_text() == render(), (
        "docs/schemas.md is stale: run `python -m toolbridge.schema._rules_doc`")
