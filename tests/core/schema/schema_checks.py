"""Checks of converted schemas by each target's own implementation (shared by the schema tests)."""

from __future__ import annotations

import copy
import json
from typing import Any

# OpenAI's documented strict-mode rules ("Supported schemas" of the Structured Outputs guide,
# restated in shared/protocols/schema-dialects.md §2): the keywords it supports, and its limits.
STRICT_KEYWORDS = {"type", "properties", "required", "additionalProperties", "items", "anyOf",
                   "enum", "const", "$ref", "$defs", "title", "description", "pattern", "format",
                   "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
                   "minItems", "maxItems"}
STRICT_LIMITS = {
    "object properties": 5_000,        # in total
    "nesting levels": 10,
    "name and value characters": 120_000,  # property names, definition names, enum and const
    "enum values": 1_000,              # across all enum properties
    "large string enum characters": 15_000,  # one string enum with more than 250 values
}
CES_TYPES = {"STRING", "INTEGER", "NUMBER", "BOOLEAN", "OBJECT", "ARRAY"}


def walk(schema: Any, path: str = ""):
    """Yield (pointer, node) for every schema node of a converted schema (any dialect)."""
    stack = [(path, schema)]
    while stack:
        ptr, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield ptr, node
        for key in ("items", "additionalProperties", "not"):
            if isinstance(node.get(key), dict):
                stack.append((f"{ptr}/{key}", node[key]))
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            for i, sub in enumerate(node.get(key) or ()):
                stack.append((f"{ptr}/{key}/{i}", sub))
        for key in ("properties", "$defs", "defs"):
            for name, sub in (node.get(key) or {}).items():
                stack.append((f"{ptr}/{key}/{name}", sub))


def strict_sizes(schema: dict[str, Any]) -> dict[str, int]:
    """What OpenAI's strict limits count, for ``schema`` as written (``$defs`` counted once,
    references not followed): see `STRICT_LIMITS`."""
    sizes = dict.fromkeys(STRICT_LIMITS, 0)
    sizes["name and value characters"] = sum(map(len, schema.get("$defs") or {}))
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, level = stack.pop()
        if not isinstance(node, dict):
            continue
        sizes["nesting levels"] = max(sizes["nesting levels"], level)
        for name, sub in (node.get("properties") or {}).items():
            sizes["object properties"] += 1
            sizes["name and value characters"] += len(name)
            stack.append((sub, level + 1))
        values = node.get("enum")
        if isinstance(values, list):
            sizes["enum values"] += len(values)
            text = sum(len(v) for v in values if isinstance(v, str))
            sizes["name and value characters"] += text
            if len([v for v in values if isinstance(v, str)]) > 250:
                sizes["large string enum characters"] = max(
                    sizes["large string enum characters"], text)
        if isinstance(node.get("const"), str):
            sizes["name and value characters"] += len(node["const"])
        if isinstance(node.get("items"), dict):
            stack.append((node["items"], level + 1))
        stack.extend((sub, level) for sub in node.get("anyOf") or ())
        stack.extend((sub, 1) for sub in (node.get("$defs") or {}).values())
    return sizes


def check_openai_strict(schema: dict[str, Any]) -> None:
    """OpenAI's documented strict rules, plus the SDK's own invariants (its strictifier
    changes nothing and its types accept the function).

    Every object closed (``additionalProperties: false``) with every property required; an
    object root, never ``anyOf``; only supported keywords; a type on every node; ``$ref``
    alone and pointing into ``$defs``; one non-null type per type list; the size limits.
    """
    from openai.lib._pydantic import _ensure_strict_json_schema
    from openai.types.shared_params import FunctionDefinition
    from pydantic import TypeAdapter

    assert schema.get("type") == "object" and "anyOf" not in schema
    for ptr, node in walk(schema):
        if node.get("type") == "object" or "object" in (node.get("type") or []) \
                or "properties" in node:
            assert node.get("additionalProperties") is False, ptr
            assert sorted(node.get("required", [])) == sorted(node.get("properties", {})), ptr
        if "$ref" in node:
            assert set(node) == {"$ref"}, f"{ptr}: $ref with siblings"
            ref = node["$ref"]
            assert ref == "#" or ref.removeprefix("#/$defs/") in schema.get("$defs", {}), ptr
        assert {"type", "anyOf", "$ref", "enum", "const"} & set(node), f"{ptr}: no type"
        unsupported = set(node) - STRICT_KEYWORDS
        assert not unsupported, f"{ptr}: {unsupported}"
        assert "$defs" not in node or ptr == "", f"{ptr}: $defs below the root"
        if isinstance(node.get("type"), list):
            assert len([t for t in node["type"] if t != "null"]) == 1, ptr
    sizes = strict_sizes(schema)
    over = {what: (sizes[what], limit) for what, limit in STRICT_LIMITS.items()
            if sizes[what] > limit}
    assert not over, f"over OpenAI's documented strict limits (size, limit): {over}"
    again = _ensure_strict_json_schema(copy.deepcopy(schema), path=(), root=copy.deepcopy(schema))
    assert again == schema
    TypeAdapter(FunctionDefinition).validate_python(
        {"name": "tool", "description": "d", "parameters": schema, "strict": True})


def check_openapi30(schema: dict[str, Any]) -> None:
    """openapi-pydantic's 3.0 Schema model accepts it and keeps no unknown keys anywhere."""
    from openapi_pydantic.v3.v3_0 import Schema

    model = Schema.model_validate(schema)
    stack: list[Any] = [model]
    while stack:
        item = stack.pop()
        if isinstance(item, Schema):
            extra = {k for k in (item.model_extra or {}) if not k.startswith("x-")}
            assert not extra, f"unknown keys kept by openapi-pydantic: {extra}"
            stack.extend(getattr(item, f) for f in type(item).model_fields)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    for ptr, node in walk(schema):
        assert "$ref" not in node, ptr
        assert not isinstance(node.get("type"), list), ptr
        assert node.get("type") != "null", ptr


def check_ces(schema: dict[str, Any]) -> None:
    """google-cloud-ces parses it strictly as a Schema and inside a client-function Tool."""
    from google.cloud import ces_v1

    ces_v1.Schema.from_json(json.dumps(schema), ignore_unknown_fields=False)
    tool = {"name": "projects/p/locations/l/apps/a/tools/t",
            "clientFunction": {"name": "tool", "description": "d", "parameters": schema}}
    ces_v1.Tool.from_json(json.dumps(tool), ignore_unknown_fields=False)
    for ptr, node in walk(schema):
        assert node.get("type", "STRING") in CES_TYPES, ptr
        assert all(isinstance(v, str) for v in node.get("enum", [])), ptr
        if ptr and "defs" in node and not ptr.startswith("/defs"):
            raise AssertionError(f"{ptr}: defs below the root")


GEMINI_FORMATS = {"STRING": {"date-time", "enum"}, "INTEGER": {"int32", "int64"},
                  "NUMBER": {"float", "double"}}  # the Gemini API reference's Schema.format


def check_gemini(schema: dict[str, Any]) -> None:
    """google-genai parses it as a Schema (unknown keys refused) and inside a Tool's
    function declaration; no definitions, upper-case types, formats Gemini takes."""
    from google.genai import types

    types.Schema.model_validate(schema)
    types.Tool.model_validate({"functionDeclarations": [
        {"name": "tool", "description": "d", "parameters": schema}]})
    for ptr, node in walk(schema):
        assert node.get("type", "STRING") in CES_TYPES, ptr
        assert all(isinstance(v, str) for v in node.get("enum", [])), ptr
        assert not {"ref", "defs", "$ref", "$defs"} & set(node), ptr
        if "format" in node:
            assert node["format"] in GEMINI_FORMATS.get(node.get("type"), ()), ptr


CHECKS = {"openai-strict": check_openai_strict, "openapi-3.0": check_openapi30,
          "ces": check_ces, "gemini": check_gemini}
