"""Seeded hostile inputs for the fuzz suites: mutated payloads and mutated schemas.

Every installed dialect's recorded payloads are found in ``tests/adapters/<package>/payloads``
(``<package>`` is the dialect's adapter package without ``toolbridge_``), so a new dialect's
payload folder is picked up without touching this file. Mutations are drawn from one
``random.Random(seed)``: a failing case is reproduced from its seed and index.
"""

from __future__ import annotations

import copy
import json
import math
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import toolbridge
from toolbridge.plugin import MAX_ARGUMENT_BYTES, MAX_NESTING_DEPTH

TESTS = Path(__file__).parent
SCALE = int(os.environ.get("TOOLBRIDGE_SLOW_SCALE", "1"))
Path_ = tuple[Any, ...]


def payload_files() -> list[tuple[str, Path]]:
    """(dialect name, recorded payload) for every installed dialect that has recordings."""
    found = []
    for name, dialect in sorted(toolbridge.dialects().items()):
        package = type(dialect).__module__.split(".")[0].removeprefix("toolbridge_")
        folder = TESTS / "adapters" / package / "payloads"
        found += [(name, path) for path in sorted(folder.glob("*.json"))]
    return found


def nested(depth: int, leaf: Any = 1, key: str | None = "a") -> Any:
    for _ in range(depth):
        leaf = {key: leaf} if key is not None else [leaf]
    return leaf


def clone(value: Any) -> Any:
    """A deep copy, or ``value`` itself when it nests too deeply to copy."""
    try:
        return copy.deepcopy(value)
    except RecursionError:
        return value


def paths(node: Any, here: Path_ = ()) -> Iterator[Path_]:
    """Every path to a value inside ``node`` (not the root)."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(
        node, list) else ()
    for key, value in items:
        yield (*here, key)
        yield from paths(value, (*here, key))


def get(node: Any, path: Path_) -> Any:
    for key in path:
        node = node[key]
    return node


def put(root: Any, path: Path_, value: Any) -> None:
    parent = get(root, path[:-1])
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value


DELETE = object()
WRONG: list[Any] = [None, 0, -1, 7, 2**70, 10**400, 1.5, math.nan, math.inf, -math.inf, "",
                    "text", "\ud800", "\x00", [], [None], {}, {"": None}, True, False]


def wrong_value(rng: random.Random) -> Any:
    """A value of a random wrong type, or a huge or deep one."""
    roll = rng.random()
    if roll < 0.70:
        return copy.deepcopy(rng.choice(WRONG))
    if roll < 0.80:
        return nested(rng.choice([MAX_NESTING_DEPTH - 2, MAX_NESTING_DEPTH + 1, 1500]),
                      key=rng.choice(["a", None]))
    if roll < 0.90:
        return "x" * rng.choice([10_000, 300_000])
    return list(range(rng.choice([1_000, 20_000])))


BAD_ARGUMENTS: list[Any] = [
    "", " ", "{", "}", "{nope", "[1, 2]", "null", '"x"', "7", "NaN", '{"a": NaN}',
    '{"a": Infinity}', '{"a": 1e999999}', '{"a": -1e999999}', '{"a": 1, "a": "dup"}',
    '{"\\ud800": "\\udfff"}', '{"a": "\\u0000"}', "[" * 1_000 + "]" * 1_000,
    '{"a":' + "[" * 5_000 + "]" * 5_000 + "}", '{"a": [' + "1," * 50_000 + "1]}",
    '{"a": ' + "9" * 5_000 + "}", "\ufeff{}", '{"a": "\\x"}', '{"a": tru}', {"a": math.nan},
    {"a": nested(MAX_NESTING_DEPTH + 5)}, [], 5, None, {"": {"": [{}]}},
]


class PayloadMutator:
    """Mutations of one recorded payload: deleted fields, wrong types, huge and deep values,
    pathological arguments, duplicated entries (ids), unknown tools, bad bytes."""

    def __init__(self, payload: Any, rng: random.Random) -> None:
        self.payload = payload
        self.rng = rng
        self.all_paths = list(paths(payload))
        self.argument_paths = [p for p in self.all_paths if p[-1] in ("arguments", "args")]
        self.name_paths = [p for p in self.all_paths if p[-1] in ("name", "displayName")
                           and isinstance(get(payload, p), str)]
        self.list_paths = [p for p in self.all_paths if isinstance(get(payload, p), list)
                           and get(payload, p)]

    def case(self) -> tuple[str, Any]:
        """One mutated payload (a dict, JSON text or bytes) and what was done to it."""
        data = copy.deepcopy(self.payload)
        done = [self._mutate(data) for _ in range(self.rng.choice([1, 1, 1, 2, 3]))]
        form = self.rng.random()
        if form < 0.6:
            return " + ".join(done), data
        try:
            text = json.dumps(data, ensure_ascii=self.rng.random() < 0.5)
        except RecursionError:  # deeper than json can write: the dict form
            return " + ".join(done), data
        if form < 0.8:
            return " + ".join(done) + " (text)", text
        raw = text.encode("utf-8", "surrogatepass")
        if self.rng.random() < 0.5:
            at = self.rng.randrange(len(raw) + 1)
            junk = self.rng.choice([b"\xff", b"\xc3", b"\x00", b"\xed\xa0\x80", b"}", b'"'])
            raw = raw[:at] + junk + raw[at:]
            done.append(f"bytes {junk!r} at {at}")
        elif self.rng.random() < 0.5:
            raw = raw[: self.rng.randrange(len(raw) + 1)]
            done.append("truncated")
        return " + ".join(done) + " (bytes)", raw

    def _mutate(self, data: Any) -> str:
        rng = self.rng
        roll = rng.random()
        try:
            if roll < 0.25 and self.argument_paths:
                path = rng.choice(self.argument_paths)
                put(data, path, clone(rng.choice(BAD_ARGUMENTS)))
                return f"arguments {_name(path)}"
            if roll < 0.35 and self.name_paths:
                path = rng.choice(self.name_paths)
                put(data, path, rng.choice(["no_such_tool", "", "a" * 300, "get order"]))
                return f"unknown tool {_name(path)}"
            if roll < 0.45 and self.list_paths:
                path = rng.choice(self.list_paths)
                items = get(data, path)
                if not isinstance(items, list) or not items:
                    return "no-op"
                items.append(clone(rng.choice(items)))
                return f"duplicated entry in {_name(path)}"
            path = rng.choice(self.all_paths)
            if roll < 0.65:
                put(data, path, DELETE)
                return f"deleted {_name(path)}"
            put(data, path, wrong_value(rng))
            return f"wrong value at {_name(path)}"
        except (KeyError, IndexError, TypeError):  # an earlier mutation removed the place
            return "no-op"


def _name(path: Path_) -> str:
    return ".".join(map(str, path))


# -- schemas -------------------------------------------------------------------------------
KEYWORDS = ["type", "properties", "required", "items", "enum", "const", "anyOf", "oneOf",
            "allOf", "not", "$ref", "$defs", "definitions", "pattern", "format", "minimum",
            "exclusiveMinimum", "maxLength", "multipleOf", "additionalProperties",
            "prefixItems", "default", "discriminator", "nullable", "description", "title",
            "examples", "if", "then", "dependentRequired", "patternProperties", "minItems",
            "defs", "ref", "any_of"]
JUNK: list[Any] = [None, True, False, 0, -1, 1.5, math.nan, math.inf, 10**400, "", "x",
                   "\ud800", "(", "[a-", "#", "#/nope", "#/$defs/missing", "#/defs/missing",
                   "http://example.com/schema", "object", "STRING", ["STRING", "NULL"],
                   ["string", "null"], ["object", "array"], [], [1, "1", 1.0, True], {},
                   {"type": "nope"}, {"$ref": "#"}, {"properties": "x"}, [{"type": "x"}],
                   {"a": True}, {"a": {"$ref": "#/$defs/a"}}]


def mutate_schema(schema: Any, rng: random.Random) -> tuple[str, Any]:
    """A hostile variant of ``schema``: junk keywords, wrong shapes, boolean schemas,
    self-references, runaway nesting or size."""
    data = copy.deepcopy(schema)
    done = []
    for _ in range(rng.choice([1, 1, 2, 3, 5])):
        nodes = [()] + [p for p in paths(data) if isinstance(get(data, p), dict)]
        path = rng.choice(nodes)
        node = get(data, path)
        roll = rng.random()
        if roll < 0.45:
            key = rng.choice(KEYWORDS)
            node[key] = copy.deepcopy(rng.choice(JUNK))
            done.append(f"{_name(path) or '/'}.{key} = junk")
        elif roll < 0.6 and node:
            key = rng.choice(list(node))
            del node[key]
            done.append(f"deleted {_name((*path, key))}")
        elif roll < 0.7 and path:
            put(data, path, rng.choice([True, False, {}, {"$ref": "#"}, []]))
            done.append(f"{_name(path)} = boolean/empty")
        elif roll < 0.8:
            wrapped = {"allOf": [copy.deepcopy(node), {"default": 0}]} if rng.random() < 0.5 \
                else {"anyOf": [copy.deepcopy(node), {"type": "null"}]}
            if path:
                put(data, path, wrapped)
            else:
                data = wrapped
            done.append(f"wrapped {_name(path) or '/'}")
        elif roll < 0.9:
            depth = rng.choice([20, 70, 140, 300])
            node["properties"] = {"deep": nested(depth, {"type": "string"}, "items")}
            done.append(f"{depth}-level nesting at {_name(path) or '/'}")
        else:
            node["enum"] = [f"v{i}" for i in range(rng.choice([300, 3_000]))]
            done.append(f"huge enum at {_name(path) or '/'}")
    return "; ".join(done), data


def corpus() -> list[dict[str, Any]]:
    lines = (TESTS / "core" / "schema" / "corpus" / "corpus.jsonl").read_text().splitlines()
    return [json.loads(line)["schema"] for line in lines]


def classify(func: Callable[[], Any], allowed: tuple[type[BaseException], ...]) -> str:
    """``ok`` or the name of the allowed error ``func`` raised; anything else propagates."""
    try:
        func()
    except allowed as exc:
        return type(exc).__name__
    return "ok"


BIG_ARGUMENT = '{"a": "' + "x" * MAX_ARGUMENT_BYTES + '"}'
