"""Values JSON text can carry but Python may choke on, inserted into every installed dialect's
recorded payloads and tool lists (issue 32 §7): a lone surrogate (``"\\ud800"`` is valid JSON),
a key that is not text, a cycle, NaN and the infinities (from Python callers, or
``json.loads``' ``NaN``).

Every case must end as a body that is JSON (answered), a `WireFormatError` naming the dialect
and the field (refused), or for tool lists, definitions or a typed error; never another
exception. Handlers echo their arguments, so inserted values reach output shaping.
``TOOLBRIDGE_SLOW_SCALE=N`` runs N times as many cases.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fuzz_cases import SCALE, get, paths, payload_files
from pydantic import ValidationError

import toolbridge
from toolbridge import (
    SchemaConversionError,
    ToolDefinition,
    ToolDefinitionError,
    UsageError,
    WireFormatError,
)

FILES = payload_files()
CASES_PER_FILE = 40 * SCALE
SEED = 3207
TEXTS = ['{"a": "\\ud800"}', '{"\\udfff": 1}', '{"a": NaN}', '{"a": [Infinity]}',
         '{"a": -Infinity, "b": "\\ud800\\u0000"}']


def _insert(data: Any, rng: random.Random) -> str:
    """Put one hostile value somewhere in ``data`` (in place); what was done."""
    places = [p for p in paths(data)]
    containers = [()] + [p for p in places if isinstance(get(data, p), (dict, list))]
    where = rng.choice(containers)
    node = get(data, where)
    kind = rng.choice(["surrogate", "key", "cycle", "number", "text"])
    arguments = [p for p in places if p[-1] in ("arguments", "args")]
    if kind == "text" and arguments:
        path = rng.choice(arguments)
        parent = get(data, path[:-1])
        parent[path[-1]] = rng.choice(TEXTS) if rng.random() < 0.5 else json.loads(
            rng.choice(TEXTS))
        return f"argument text at {path}"
    value: Any
    if kind == "surrogate":
        value = rng.choice(["\ud800", "x\udfffy", {"\ud800": "\udc00"}])
    elif kind == "number":
        value = rng.choice([math.nan, math.inf, -math.inf, [math.nan]])
    elif kind == "cycle":
        value = node  # the container itself: a cycle
    else:
        value = None
    if kind == "key" and isinstance(node, dict):
        node[rng.choice([1, 2.5, None, True, ("t",)])] = "x"
        return f"non-text key at {where}"
    if isinstance(node, dict):
        key = rng.choice([*node, "extra"]) if node else "extra"
        node[key] = value if kind != "key" else {1: "x"}
        return f"{kind} at {(*where, key)}"
    if isinstance(node, list):
        if node and rng.random() < 0.7:
            node[rng.randrange(len(node))] = value if kind != "key" else {1: "x"}
        else:
            node.append(value if kind != "key" else {1: "x"})
        return f"{kind} in {where}"
    return "no-op"


def _toolbox(dialect: str, payload: Any) -> toolbridge.Toolbox:
    """Tools for the recorded calls, open schemas, handlers echoing what they get."""
    box = toolbridge.Toolbox(store=None)
    try:
        calls = toolbridge.get_dialect(dialect).read_calls(payload).calls if isinstance(
            payload, dict) else ()
    except WireFormatError:
        calls = ()  # not a payload with calls: every case is read, nothing is run
    for call in calls:
        if call.name not in box:
            box.add(ToolDefinition(name=call.name, parameters={"type": "object"}),
                    lambda **kwargs: kwargs)
    return box


def _handled(box: toolbridge.Toolbox, dialect: str, payload: Any) -> str:
    try:
        body = box.handle(dialect, payload)
    except WireFormatError as exc:
        assert exc.dialect == dialect and exc.field, exc
        return "refused"
    json.dumps(body, allow_nan=False)  # JSON, cycles and non-finite numbers excluded
    return "answered"


def _imported(dialect: str, tools: Any) -> str:
    plugin = toolbridge.get_dialect(dialect)
    try:
        definitions = plugin.import_tools(tools).definitions
    except WireFormatError as exc:
        assert exc.dialect == dialect and exc.field, exc
        return "tools refused"
    try:
        rendered = plugin.render_tools(definitions)
    except (SchemaConversionError, UsageError):
        return "tools imported, not rendered"
    json.dumps(rendered.definitions, allow_nan=False)
    return "tools rendered"


@pytest.mark.slow
@pytest.mark.parametrize("dialect, path", FILES, ids=[p.name for _, p in FILES])
def test_inserted_values_are_answered_or_refused_by_field(dialect: str, path: Path) -> None:
    recorded = json.loads(path.read_text())
    box = _toolbox(dialect, recorded)
    rng = random.Random(f"{SEED}:{path.name}")
    tools = recorded.get("tools") if isinstance(recorded, dict) else recorded
    outcomes: Counter[str] = Counter()
    for index in range(CASES_PER_FILE):
        data = copy.deepcopy(recorded)
        label = _insert(data, rng)
        try:
            outcomes[_handled(box, dialect, data)] += 1
            if isinstance(tools, list):
                listed = copy.deepcopy(tools)
                label += " / tools: " + _insert(listed, rng)
                outcomes[_imported(dialect, listed)] += 1
        except Exception as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"{dialect} {path.name} case {index} (seed {SEED}): {label}: "
                        f"{type(exc).__name__}: {str(exc)[:300]}")
    assert sum(outcomes.values()) >= CASES_PER_FILE, outcomes


def test_schemas_and_definitions_that_are_not_json_are_refused_by_field() -> None:
    from toolbridge.schema import convert_schema, strict_parameters, to_json_schema

    cyclic: dict[str, Any] = {"type": "object", "properties": {}}
    cyclic["properties"]["self"] = cyclic
    bad = {"properties": {"a": {"const": math.inf}}, "type": "object"}
    keyed = {"type": "object", "properties": {1: {"type": "string"}}}
    for target in ("openai-strict", "openapi-3.0", "ces", "gemini"):
        with pytest.raises(SchemaConversionError, match="not NoneType"):
            convert_schema(None, target)  # type: ignore[arg-type]
        with pytest.raises(SchemaConversionError, match="/properties/a/const: inf"):
            convert_schema(bad, target)  # type: ignore[arg-type]
        with pytest.raises(SchemaConversionError, match="/properties: the key 1 is not text"):
            convert_schema(keyed, target)  # type: ignore[arg-type]
        with pytest.raises(SchemaConversionError, match="nested more than"):
            convert_schema(cyclic, target)  # type: ignore[arg-type]
    with pytest.raises(SchemaConversionError):
        strict_parameters(None, None)  # type: ignore[arg-type]
    with pytest.raises(SchemaConversionError, match="the key 1 is not text"):
        to_json_schema(keyed, "openapi-3.1")
    for parameters in (bad, keyed, cyclic):
        with pytest.raises(ToolDefinitionError, match=r"not JSON|nested (too deeply|more than)"):
            toolbridge.Toolbox().add({"name": "t", "parameters": parameters}, lambda **kw: 1)
    with pytest.raises(ValidationError, match="not JSON at returns/const: nan"):
        ToolDefinition(name="t", returns={"const": math.nan})
    with pytest.raises(ValidationError, match="not JSON at vendor_extras/x/y: a set"):
        ToolDefinition(name="t", vendor_extras={"x": {"y": {1, 2}}})
