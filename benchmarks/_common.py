"""Shared by the benchmarks (and their smoke test): the schema corpus, instances, timing."""

from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "core" / "schema" / "corpus" / "corpus.jsonl"
SAMPLES = ROOT / "tests" / "adapters" / "openai_agents" / "payloads"
"""Recorded vendor payloads (copies of the protocol reference samples)."""


def corpus() -> list[dict[str, Any]]:
    """The schema corpus entries ``{"origin", "name", "schema"}`` (local ``$ref``s only)."""
    entries = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    return [e for e in entries if not _remote_refs(e["schema"])]


def _remote_refs(node: Any) -> bool:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return True
        return any(_remote_refs(v) for v in node.values())
    if isinstance(node, list):
        return any(_remote_refs(v) for v in node)
    return False


def synthesize(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A small instance that tries to satisfy ``schema`` (not guaranteed; the oracle decides)."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > 6:
        return None
    if "$ref" in schema and isinstance(schema["$ref"], str) and schema["$ref"].startswith("#/"):
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) \
                if isinstance(target, dict) else {}
        return synthesize(target, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return synthesize(schema[key][0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {name: synthesize(props.get(name, {}), root, depth + 1)
                for name in schema.get("required", list(props)[:3])}
    if kind == "array":
        items = schema.get("items", {})
        return [synthesize(items, root, depth + 1) for _ in range(schema.get("minItems", 1))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.5))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "x"


def mutations(instance: Any, rng: random.Random) -> Iterator[Any]:
    """Variants of ``instance``: a field dropped, a value of the wrong type, an extra field."""
    yield instance
    if isinstance(instance, dict) and instance:
        keys = sorted(instance)
        dropped = copy.deepcopy(instance)
        del dropped[rng.choice(keys)]
        yield dropped
        wrong = copy.deepcopy(instance)
        wrong[rng.choice(keys)] = rng.choice([17, "text", [1], {"a": 1}, None, 2.5, True])
        yield wrong
        yield {**instance, "unexpected_extra": 1}
    yield rng.choice([[], "text", 3, {}])


def validation_cases(limit: int | None = None, seed: int = 7) -> list[tuple[dict[str, Any], Any]]:
    """(schema, instance) pairs over the corpus, valid and invalid ones mixed."""
    rng = random.Random(seed)
    cases = []
    for entry in corpus()[:limit]:
        schema = entry["schema"]
        for instance in mutations(synthesize(schema), rng):
            cases.append((schema, instance))
    return cases


def best_of(func: Callable[[], Any], repeat: int = 5, number: int = 1) -> float:
    """Seconds per run of ``func``: the best of ``repeat`` rounds of ``number`` runs."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            func()
        best = min(best, (time.perf_counter() - started) / number)
    return best
