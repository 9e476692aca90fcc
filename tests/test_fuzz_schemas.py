"""Hostile schemas into every public entry point (issue 16 §4): `convert_schema`,
`to_json_schema`, `Toolbox.add`, `render` / `definitions`, `handle`, every dialect's
`read_tools`, and `tools_from_openapi`.

Cases are seeded mutations of the schema corpus (as JSON Schema, as CES and as OpenAPI 3.0):
junk keywords, wrong shapes, boolean and self-referencing schemas, runaway nesting and size.
Each outcome is classified; only the typed errors listed per entry point are allowed, and a
conversion that succeeds must satisfy its target's own checks. ``TOOLBRIDGE_SLOW_SCALE=N``
runs N times as many cases.
"""

from __future__ import annotations

import functools
import logging
import random
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fuzz_cases import SCALE, corpus, mutate_schema
from pydantic import ValidationError

import toolbridge
from toolbridge import (
    SchemaConversionError,
    ToolDefinition,
    ToolDefinitionError,
    UsageError,
    WireFormatError,
)
from toolbridge.schema import (
    Conversion,
    convert_schema,
    normalize_schema,
    to_json_schema,
    tools_from_openapi,
)

sys.path.insert(0, str(Path(__file__).parent / "core" / "schema"))
from schema_checks import CHECKS, STRICT_LIMITS, strict_sizes

CASES = 90 * SCALE
SEED = 1604
TARGETS = ("openai-strict", "openapi-3.0", "ces", "gemini")


@functools.cache
def bases() -> dict[str, list[Any]]:
    """Seeds per source form: the corpus, and every fourth corpus schema as CES and 3.0."""
    schemas = corpus()
    sample = schemas[::4]
    found: dict[str, list[Any]] = {"json-schema": schemas, "ces": [], "openapi-3.0": []}
    for form in ("ces", "openapi-3.0"):
        for schema in sample:
            try:
                found[form].append(convert_schema(schema, form).schema)  # type: ignore[arg-type]
            except SchemaConversionError:
                continue
    return found


class Outcomes:
    """What each entry point did, counted; anything not allowed fails with the case."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self.case = ""

    def run(self, where: str, func: Callable[[], Any],
            allowed: tuple[type[BaseException], ...] = ()) -> Any:
        try:
            result = func()
        except allowed as exc:
            self.counts[(where, type(exc).__name__)] += 1
            return None
        except Exception as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"{where}: {self.case}: {type(exc).__name__}: {str(exc)[:300]}")
        self.counts[(where, "ok")] += 1
        return result


def _within(sizes: dict[str, int], *names: str, share: float = 1.0) -> bool:
    return all(sizes[name] <= share * STRICT_LIMITS[name] for name in names)


SCHEMA_CHILD = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
                "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def _written_sizes(schema: Any) -> dict[str, int]:
    """What the strict limits count, over every keyword that holds a schema (a huge enum in a
    `oneOf` or a tuple counts too: conversion may move it where strict mode counts it)."""
    sizes = dict.fromkeys(STRICT_LIMITS, 0)
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        sizes["object properties"] += len(node.get("properties") or {}) if isinstance(
            node.get("properties"), dict) else 0
        values = node.get("enum")
        if isinstance(values, list):
            sizes["enum values"] += len(values) + 1  # + 1: strict mode may add null
            text = sum(len(v) for v in values if isinstance(v, str))
            sizes["name and value characters"] += text
            sizes["large string enum characters"] = max(
                sizes["large string enum characters"], text)
        for key, value in node.items():
            if key in SCHEMA_CHILD:
                stack.append(value)
            elif key in SCHEMA_LISTS and isinstance(value, list):
                stack.extend(value)
            elif key in SCHEMA_MAPS and isinstance(value, dict):
                sizes["name and value characters"] += sum(len(str(k)) for k in value)
                stack.extend(value.values())
    return sizes


def _levels(schema: Any) -> int:
    """Object and array levels of a schema with every finite `$ref` inlined, counting every
    keyword that nests a value (tuples, maps), not only the ones strict mode keeps."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(normalize_schema(schema), 1)]
    while stack:
        node, level = stack.pop()
        if not isinstance(node, dict):
            continue
        deepest = max(deepest, level)
        for key in ("items", "additionalProperties", "contains", "unevaluatedItems"):
            stack.append((node.get(key), level + 1))
        for key in ("properties", "patternProperties", "$defs"):
            if isinstance(node.get(key), dict):
                stack.extend((sub, 1 if key == "$defs" else level + 1)
                             for sub in node[key].values())
        stack.extend((sub, level + 1) for sub in node.get("prefixItems") or ())
        for key in ("anyOf", "oneOf", "allOf", "not", "if", "then", "else"):
            value = node.get(key)
            stack.extend((sub, level) for sub in (value if isinstance(value, list) else [value]))
    return deepest


def _check_conversion(target: str, schema: Any, conversion: Conversion) -> None:
    """The target's own implementation accepts the output; OpenAI's documented limits hold
    whenever the input itself was within them (the check's limits are then not the input's)."""
    converted = conversion.schema
    if target != "openai-strict":
        CHECKS[target](converted)
        return
    counts = ("object properties", "name and value characters", "enum values",
              "large string enum characters")
    before, after = _written_sizes(schema), strict_sizes(converted)
    if _within(before, *counts):
        assert _within(after, *counts), (before, after)  # no copy pushed it past a limit
    levels = _levels(schema) + (1 if conversion.wrapped else 0)  # the wrapper is one more
    if _within(before, *counts) and levels <= STRICT_LIMITS["nesting levels"]:
        CHECKS[target](converted)  # every rule, the limits included


def _entry_points(outcomes: Outcomes, form: str, schema: Any, rng: random.Random) -> None:
    if form == "json-schema":
        for target in TARGETS:
            conversion = outcomes.run(f"convert_schema {target}",
                                      lambda: convert_schema(schema, target),  # noqa: B023
                                      (SchemaConversionError,))
            if conversion is not None:
                _check_conversion(target, schema, conversion)
        _toolbox(outcomes, schema)
        for name, tools in (
                ("openai-agents", [{"type": "function", "name": "t", "parameters": schema}]),
                ("openai-assistants", [{"type": "function", "function": {
                    "name": "t", "parameters": schema}}]),
                ("gemini", [{"functionDeclarations": [
                    {"name": "t", "parametersJsonSchema": schema}]}])):
            outcomes.run(f"read_tools {name}",
                         lambda: toolbridge.get_dialect(name).read_tools(tools),  # noqa: B023
                         (WireFormatError,))
    sources = {"json-schema": ("openapi-3.1",), "openapi-3.0": ("openapi-3.0",),
               "ces": ("ces",)}[form]
    for source in sources:
        outcomes.run(f"to_json_schema {source}", lambda: to_json_schema(schema, source),  # noqa: B023
                     (SchemaConversionError,))
    if form == "ces":
        tools = [{"clientFunction": {"name": "t", "parameters": schema}}]
        outcomes.run("read_tools google-ces",
                     lambda: toolbridge.get_dialect("google-ces").read_tools(tools),
                     (WireFormatError,))
    else:
        version = "3.0.3" if form == "openapi-3.0" else rng.choice(["3.0.3", "3.1.0"])
        doc = {"openapi": version, "components": {"schemas": {"S": schema}}, "paths": {
            "/items/{id}": {"post": {
                "parameters": [{"name": "id", "in": "path", "schema": schema}],
                "requestBody": {"content": {"application/json": {"schema": schema}}}}}}}
        outcomes.run("tools_from_openapi", lambda: tools_from_openapi(doc),
                     (SchemaConversionError, UsageError))


def _toolbox(outcomes: Outcomes, schema: Any) -> None:
    """Define, render and call a tool with ``schema`` as its parameters."""
    definition = outcomes.run("ToolDefinition", lambda: ToolDefinition(name="t",
                                                                       parameters=schema),
                              (ValidationError,))
    if definition is None:
        return
    toolbox = toolbridge.Toolbox(store=None)
    added = outcomes.run("Toolbox.add", lambda: toolbox.add(definition, lambda **kw: "ok"),
                         (ToolDefinitionError,))
    if added is None:
        return
    for name in toolbridge.dialects():
        outcomes.run(f"render {name}", lambda: toolbox.render(name),  # noqa: B023
                     (SchemaConversionError, UsageError))
    arguments = {"value": {"a": [1.0, "x"]}, "n": 2.0}
    calls = {
        "openai-agents": {"id": "s", "object": "agent.session", "required_actions": [
            {"type": "function_call", "turn_id": "u", "call_id": "c", "name": "t",
             "arguments": arguments}]},
        "google-ces": {"outputs": [{"toolCalls": {"toolCalls": [
            {"id": "c", "displayName": "t", "args": arguments}]}}]},
        "gemini": {"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "c", "name": "t", "args": arguments}}]}}]},
    }
    for name, payload in calls.items():
        body = outcomes.run(f"handle {name}", lambda: toolbox.handle(name, payload))  # noqa: B023
        assert isinstance(body, dict)  # one call, one result: answered, never raised


@pytest.mark.slow
@pytest.mark.parametrize("form", ["json-schema", "ces", "openapi-3.0"])
def test_hostile_schemas_give_typed_errors_only(form: str,
                                                caplog: pytest.LogCaptureFixture) -> None:
    seeds = bases()[form]
    rng = random.Random(f"{SEED}:{form}")
    outcomes = Outcomes()
    cases = CASES if form == "json-schema" else CASES // 3
    with caplog.at_level(logging.ERROR, logger="toolbridge"):
        for index in range(cases):
            label, schema = mutate_schema(rng.choice(seeds), rng)
            outcomes.case = f"{form} case {index} (seed {SEED}): {label}"
            _entry_points(outcomes, form, schema, rng)
    assert not caplog.records, caplog.records[0].getMessage()
    # The mutations bite: every entry point accepted some schemas, and each that checks
    # schemas refused some.
    for where in {where for where, _ in outcomes.counts}:
        kinds = {kind for w, kind in outcomes.counts if w == where}
        assert "ok" in kinds, (where, outcomes.counts)
        if not where.startswith(("render", "handle")):
            assert len(kinds) > 1, (where, outcomes.counts)
