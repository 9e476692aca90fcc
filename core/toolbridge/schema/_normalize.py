"""Bring any input schema to the neutral form: JSON Schema 2020-12, local `$ref`s resolved.

Draft-07 (and draft-04/06) spellings are upgraded (`definitions` → `$defs`, array `items` →
`prefixItems`, `dependencies` split, boolean exclusive bounds made numeric). Every local `$ref`
whose target is finite is inlined; targets on a reference cycle stay as `$ref` to a root `$defs`
entry (`#` stays `#`). All walks are bounded (see :data:`MAX_DEPTH`, :data:`MAX_NODES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from toolbridge.errors import SchemaConversionError
from toolbridge.schema._walk import (
    MAX_DEPTH,
    MAX_NODES,
    SCHEMA_CHILD,
    SCHEMA_LIST,
    SCHEMA_MAP,
    check_bounds,
    escape,
    mappings,
)

__all__ = ["Normalized", "normalize", "normalize_schema"]

# Keywords that only annotate: a `$ref` sibling with one of these merges into the target.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "example", "deprecated",
                         "readOnly", "writeOnly", "$comment"})


@dataclass(frozen=True)
class Normalized:
    """A neutral schema plus, for each of its nodes, the pointer it came from."""

    schema: dict[str, Any]
    origins: dict[int, str]
    """``id(node)`` → JSON pointer into the caller's original schema."""


def normalize_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``schema`` as neutral JSON Schema 2020-12 with finite local `$ref`s inlined."""
    return normalize(schema).schema


def normalize(schema: Mapping[str, Any], *, keep_shared: bool = False) -> Normalized:
    """Like :func:`normalize_schema`, also returning where each node came from.

    ``keep_shared``: a definition referenced from more than one place stays in ``$defs``
    (for targets that hold ``$defs``: inlining it at every use multiplies its size, its
    properties and its enum values, which count against limits such as OpenAI's).
    """
    if not isinstance(schema, Mapping):
        raise SchemaConversionError(
            f"a schema must be a JSON object, not {type(schema).__name__}")
    check_bounds(schema)
    origins: dict[int, str] = {}
    upgraded = _upgrade(schema, "", origins, 0)
    return _Resolver(upgraded, origins, keep_shared=keep_shared).run()


# -- step 1: draft-07/06/04 → 2020-12 ----------------------------------------------------------
def _upgrade(node: Any, pointer: str, origins: dict[int, str], depth: int) -> Any:
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    origins[id(out)] = pointer
    for key, value in node.items():
        here = f"{pointer}/{escape(key)}"
        if key in SCHEMA_CHILD and key != "items" and isinstance(value, (Mapping, bool)):
            out[key] = _upgrade(value, here, origins, depth + 1)
        elif key == "items" and isinstance(value, list):
            # draft-07 tuple form: `items: [...]` is 2020-12 `prefixItems`.
            out["prefixItems"] = [_upgrade(v, f"{here}/{i}", origins, depth + 1)
                                  for i, v in enumerate(value)]
        elif key == "items":
            out[key] = _upgrade(value, here, origins, depth + 1)
        elif key in SCHEMA_LIST and isinstance(value, list):
            out[key] = [_upgrade(v, f"{here}/{i}", origins, depth + 1)
                        for i, v in enumerate(value)]
        elif key in SCHEMA_MAP and isinstance(value, Mapping):
            target = "$defs" if key == "definitions" else key
            merged = out.setdefault(target, {})
            origins.setdefault(id(merged), here)
            for name, sub in value.items():
                merged[name] = _upgrade(sub, f"{here}/{escape(name)}", origins, depth + 1)
        elif key == "dependencies" and isinstance(value, Mapping):
            for name, dep in value.items():
                if isinstance(dep, list):
                    out.setdefault("dependentRequired", {})[name] = list(dep)
                else:
                    out.setdefault("dependentSchemas", {})[name] = _upgrade(
                        dep, f"{here}/{escape(name)}", origins, depth + 1)
        elif key == "$ref" and isinstance(value, str) and value.startswith("#/definitions/"):
            out[key] = "#/$defs/" + value[len("#/definitions/"):]
        else:
            out[key] = value
    if "additionalItems" in out and "prefixItems" in out:
        out["items"] = out.pop("additionalItems")
    elif "additionalItems" in out:
        out.pop("additionalItems")  # ignored without tuple `items` in draft-07 too
    for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        # draft-04 / OpenAPI 3.0 boolean form: `exclusiveMinimum: true` modifies `minimum`.
        flag = out.get(bound)
        if isinstance(flag, bool):
            del out[bound]
            if flag and plain in out:
                out[bound] = out.pop(plain)
    return out


# -- step 2: resolve local references -----------------------------------------------------------
class _Resolver:
    def __init__(self, root: dict[str, Any], origins: dict[int, str], *,
                 keep_shared: bool = False) -> None:
        self.root = root
        self.origins = origins
        self.keep_shared = keep_shared
        self.out_origins: dict[int, str] = {}
        self.targets: dict[str, Any] = {}
        self.names: dict[str, str] = {}
        self.uses: dict[str, int] = {}
        self.nodes = 0

    def run(self) -> Normalized:
        edges = self._collect()
        kept = _on_cycles(edges)
        if self.keep_shared:
            kept |= {pointer for pointer, uses in self.uses.items() if uses > 1}
        for pointer in sorted(kept):
            if pointer != "#":
                self.names[pointer] = self._name_for(pointer)
        schema = self._expand(self.root, 0, top=True)
        if not isinstance(schema, dict):  # pragma: no cover - root is a mapping
            raise SchemaConversionError("the schema root must be a JSON object")
        defs = {self.names[p]: self._expand(self.targets[p], 1)
                for p in sorted(self.names, key=lambda p: self.names[p])}
        root_ref = schema.get("$ref")
        if isinstance(root_ref, str) and root_ref.removeprefix("#/$defs/") in defs:
            # A root that only points at a recursive definition: inline it one level, so
            # targets that need an object root (OpenAI strict) see one.
            body = dict(defs[root_ref.removeprefix("#/$defs/")])
            body.update({k: v for k, v in schema.items() if k != "$ref"})
            self.out_origins[id(body)] = self.out_origins.get(id(schema), "")
            schema = body
        if defs:
            schema["$defs"] = defs
            self.out_origins[id(defs)] = "/$defs"
        return Normalized(schema, self.out_origins)

    def _resolve(self, ref: str) -> tuple[str, Any]:
        if not ref.startswith("#"):
            raise SchemaConversionError(
                f"$ref {ref!r} is not local; toolbridge resolves only references inside the "
                "schema ('#/$defs/Name'); inline the referenced schema first")
        pointer = unquote(ref[1:])
        node: Any = self.root
        if pointer:
            if not pointer.startswith("/"):
                raise SchemaConversionError(
                    f"$ref {ref!r} uses an anchor; use a JSON pointer such as '#/$defs/Name'")
            for token in pointer[1:].split("/"):
                token = token.replace("~1", "/").replace("~0", "~")
                if isinstance(node, Mapping) and token in node:
                    node = node[token]
                elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                    node = node[int(token)]
                else:
                    raise SchemaConversionError(
                        f"$ref {ref!r} points to nothing in this schema; add the missing "
                        "definition or fix the reference")
        key = "#" + pointer
        self.targets[key] = node
        return key, node

    def _collect(self) -> dict[str, set[str]]:
        """Map each reachable ref target to the targets its subtree refers to (no recursion)."""
        edges: dict[str, set[str]] = {}
        pending: list[tuple[str, Any]] = [("", self.root)]
        seen: set[str] = set()
        while pending:
            owner, start = pending.pop()
            found: set[str] = set()
            for node in mappings(start, _children):
                ref = node.get("$ref")
                if isinstance(ref, str):
                    key, target = self._resolve(ref)
                    found.add(key)
                    self.uses[key] = self.uses.get(key, 0) + 1  # each subtree is walked once
                    if key not in seen:
                        seen.add(key)
                        pending.append((key, target))
            edges[owner] = found
        return edges

    def _name_for(self, pointer: str) -> str:
        tokens = [t for t in pointer[2:].split("/") if t not in ("$defs", "properties")]
        base = "_".join(t.replace("~1", "_").replace("~0", "_") for t in tokens) or "Root"
        name, n = base, 1
        while name in self.names.values():
            n += 1
            name = f"{base}_{n}"
        return name

    def _expand(self, node: Any, depth: int, *, top: bool = False) -> Any:
        if not isinstance(node, Mapping):
            return node
        if depth > MAX_DEPTH:
            raise SchemaConversionError(
                f"the schema is nested more than {MAX_DEPTH} levels deep once its $refs are "
                "inlined; flatten it")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise SchemaConversionError(
                f"inlining the $refs of this schema would produce more than {MAX_NODES} nodes; "
                "it references the same definitions too often")
        ref = node.get("$ref")
        siblings = {k: v for k, v in node.items() if k != "$ref"} if isinstance(ref, str) else None
        out: dict[str, Any] = {}
        for key, value in (siblings if siblings is not None else node).items():
            if key == "$defs" or (key == "$ref" and isinstance(value, str)):
                continue  # finite definitions are inlined; cyclic ones go to the root `$defs`
            if key in SCHEMA_CHILD and isinstance(value, (Mapping, bool)):
                out[key] = self._expand(value, depth + 1)
            elif key in SCHEMA_LIST and isinstance(value, list):
                out[key] = [self._expand(v, depth + 1) for v in value]
            elif key in SCHEMA_MAP and isinstance(value, Mapping):
                out[key] = {k: self._expand(v, depth + 1) for k, v in value.items()}
            else:
                out[key] = value
        origin = self.origins.get(id(node), "")
        if not isinstance(ref, str):
            self.out_origins[id(out)] = origin
            return out
        key = "#" + unquote(ref[1:])
        if key == "#" or key in self.names:
            kept = {"$ref": "#" if key == "#" else f"#/$defs/{self.names[key]}", **out}
            self.out_origins[id(kept)] = origin
            return kept
        target = self._expand(self.targets[key], depth + 1)
        if isinstance(target, dict) and all(k in ANNOTATIONS or k not in target for k in out):
            target.update(out)
            return target
        if not out:
            return target
        both = {"allOf": [target], **out}
        self.out_origins[id(both)] = origin
        return both


def _children(node: Mapping[str, Any]) -> list[Any]:
    kids: list[Any] = []
    for key, value in node.items():
        if key in SCHEMA_CHILD or key in SCHEMA_LIST:
            kids.append(value)
        elif key in SCHEMA_MAP and key != "$defs" and isinstance(value, Mapping):
            kids.extend(value.values())
    return kids


def _on_cycles(edges: Mapping[str, set[str]]) -> set[str]:
    """Targets that lie on a reference cycle (iterative Tarjan SCC)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    scc_stack: list[str] = []
    result: set[str] = set()
    counter = 0
    for start in edges:
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(edges.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        scc_stack.append(start)
        on_stack.add(start)
        while work:
            node, succ = work[-1]
            if succ:
                nxt = succ.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    scc_stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(edges.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members: list[str] = []
                while True:
                    member = scc_stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1 or node in edges.get(node, ()):
                    result.update(members)
    result.discard("")  # the walk's starting point, not a target
    return result
