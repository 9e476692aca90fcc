"""Rewrites shared by several targets: the rule table pass, type lists, `allOf`, nullability."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolbridge.schema._rules import kind_of, rule_for
from toolbridge.schema._walk import (
    SCHEMA_CHILD,
    SCHEMA_LIST,
    SCHEMA_MAP,
    SchemaTarget,
    SchemaTransformer,
    child_path,
    escape,
)

__all__ = [
    "BY_TYPE",
    "TableTransformer",
    "certain_type",
    "is_null",
    "merge_all_of",
    "merged_all_of",
    "split_types",
    "tuple_to_items",
]

# Keywords that only constrain one JSON type; a type list split into `anyOf` moves them there.
BY_TYPE: dict[str, frozenset[str]] = {
    "string": frozenset({"format", "pattern", "minLength", "maxLength", "contentEncoding",
                         "contentMediaType"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                         "multipleOf"}),
    "object": frozenset({"properties", "required", "additionalProperties", "patternProperties",
                         "propertyNames", "minProperties", "maxProperties", "dependentRequired",
                         "dependentSchemas", "unevaluatedProperties", "discriminator"}),
    "array": frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems",
                        "contains", "minContains", "maxContains", "unevaluatedItems"}),
}
BY_TYPE["integer"] = BY_TYPE["number"]
_JSON_TYPE = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
              "object": (dict,), "array": (list,)}


def is_null(schema: Any) -> bool:
    """True for ``{"type": "null"}`` (annotations allowed)."""
    return isinstance(schema, dict) and schema.get("type") == "null" and not (
        set(schema) - {"type", "title", "description"})


def split_types(schema: dict[str, Any]) -> tuple[dict[str, Any], bool, int]:
    """Turn ``type: [A, B, "null"]`` into ``anyOf`` of single types.

    Returns the new schema, whether ``null`` was among the types, and how many new branches
    lead ``anyOf`` (the caller converts those, as they were not walked).

    Type-specific keywords move into their branch so each branch stays a valid schema.
    ``[T, "null"]`` becomes ``type: T`` plus the returned flag.
    """
    types = schema.get("type")
    if not isinstance(types, list):
        return schema, False, 0
    nullable = "null" in types
    kinds = [t for t in dict.fromkeys(types) if t != "null" and isinstance(t, str)]
    if len(kinds) <= 1:
        out = {k: v for k, v in schema.items() if k != "type"}
        if kinds:
            out["type"] = kinds[0]
        return out, nullable, 0
    moved = frozenset().union(*(BY_TYPE.get(t, frozenset()) for t in kinds))
    out = {k: v for k, v in schema.items() if k != "type" and k not in moved and k != "enum"}
    branches = []
    for kind in kinds:
        branch: dict[str, Any] = {"type": kind}
        branch.update({k: v for k, v in schema.items() if k in BY_TYPE.get(kind, ())})
        if "enum" in schema:
            branch["enum"] = [v for v in schema["enum"] if _matches(v, kind)]
        branches.append(branch)
    out["anyOf"] = branches + list(out.get("anyOf", []))
    return out, nullable, len(branches)


def _matches(value: Any, kind: str) -> bool:
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, _JSON_TYPE.get(kind, ()))


def merged_all_of(node: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of ``node`` with its ``allOf`` merged (see :func:`merge_all_of`), or None."""
    if not isinstance(node.get("allOf"), list):
        return None
    copy = dict(node)
    return copy if merge_all_of(copy) else None


def merge_all_of(schema: dict[str, Any]) -> bool:
    """Merge ``allOf`` into ``schema`` when that is exact; False (untouched) when it is not.

    Exact when every entry is an object-ish schema whose keywords do not clash with the node
    (``properties`` united, ``required`` united) - the shape pydantic emits for inheritance.
    """
    entries = schema.get("allOf")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return False
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for entry in entries:
        for key, value in entry.items():
            if key == "properties" and isinstance(merged.get(key), dict):
                clash = set(merged[key]) & set(value)
                if any(merged[key][n] != value[n] for n in clash):
                    return False
                merged[key] = {**merged[key], **value}
            elif key == "required" and isinstance(merged.get(key), list):
                merged[key] = list(dict.fromkeys([*merged[key], *value]))
            elif key in ("title", "description") and key in merged:
                continue  # the outer annotation wins
            elif key in merged and merged[key] != value:
                return False
            else:
                merged[key] = value
    schema.clear()
    schema.update(merged)
    return True


def tuple_to_items(schema: dict[str, Any]) -> bool:
    """Rewrite ``prefixItems`` as ``items: {anyOf}`` plus item counts; False if nothing to do."""
    items = schema.pop("prefixItems")
    if not isinstance(items, list) or not items:
        return False
    rest = schema.get("items")
    branches = [*items, rest] if isinstance(rest, dict) else list(items)
    unique = [b for i, b in enumerate(branches) if b not in branches[:i]]
    schema["items"] = unique[0] if len(unique) == 1 else {"anyOf": unique}
    schema.setdefault("minItems", len(items))
    if rest is False:
        schema.setdefault("maxItems", len(items))
    return True


def certain_type(schema: Mapping[str, Any]) -> str | None:
    """The type a schema without ``type`` can only mean: ``object`` for one with
    ``properties`` (or a schema for ``additionalProperties``), ``array`` for one with
    ``items`` or ``prefixItems``; None otherwise."""
    if "properties" in schema or isinstance(schema.get("additionalProperties"), Mapping):
        return None if "items" in schema or "prefixItems" in schema else "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return None


class TableTransformer(SchemaTransformer):
    """A transformer that first applies the rule table's keep/drop/ignore to every node.

    Before a node's children are walked, an ``allOf`` that merges exactly is merged
    (:meth:`prepare`), so entries that only annotate (``{"default": 0}``) are never converted
    as schemas of their own.
    """

    dialect: SchemaTarget

    def walk_node(
        self, node: Any, pointer: str, depth: int, *, root: bool = False, path: str = "",
    ) -> Any:
        if isinstance(node, Mapping):
            prepared = self.prepare(node)
            if prepared is not node and id(node) in self.origins:
                self.origins = {**self.origins, id(prepared): self.origins[id(node)]}
            node = prepared
        return super().walk_node(node, pointer, depth, root=root, path=path)

    def prepare(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        """Rewrite ``node`` before its children are walked (a new mapping, or ``node``)."""
        merged = merged_all_of(node)
        return node if merged is None else merged

    def apply_table(self, schema: dict[str, Any], pointer: str) -> None:
        """Drop the keywords the table drops for this target; ignore the ignorable ones."""
        for key in list(schema):
            kind = kind_of(key, self.dialect)
            if kind == "ignore":
                del schema[key]
            elif kind == "drop":
                # An unknown keyword may be a constraint nothing here knows: not enforced.
                rule = rule_for(key)
                reason = (f"{self.dialect} has no {key!r}" if rule else
                          f"unknown keyword {key!r} is not part of {self.dialect}")
                self.drop(schema, pointer, key, reason, describe=bool(rule and rule.describe),
                          enforced=bool(rule and rule.enforced))

    def settle_nulls(self, schema: dict[str, Any], pointer: str) -> None:
        """Rewrite ``{"type": "null"}`` children the parent did not absorb as ``nullable``.

        Used by targets without a null type: a pure-null child is left as is by its own
        ``transform`` so that the parent can fold it into ``nullable``; what is left over
        becomes ``{"nullable": true}`` (anything, or null) and is reported.
        """
        path = self.path
        for key, value in schema.items():
            if key in SCHEMA_CHILD and is_null(value):
                schema[key] = self._null_node(value, f"{pointer}/{key}", child_path(path, key))
            elif key in SCHEMA_LIST and isinstance(value, list):
                for i, item in enumerate(value):
                    if is_null(item):
                        value[i] = self._null_node(item, f"{pointer}/{key}/{i}",
                                                   child_path(path, key, i))
            elif key in SCHEMA_MAP and isinstance(value, dict):
                for name, item in value.items():
                    if is_null(item):
                        value[name] = self._null_node(item, f"{pointer}/{key}/{escape(name)}",
                                                      child_path(path, key, name))

    def _null_node(self, schema: dict[str, Any], pointer: str, path: str) -> dict[str, Any]:
        out = {k: v for k, v in schema.items() if k != "type"}
        out["nullable"] = True
        self.lose(out, pointer, "type", f"{self.dialect} has no null type; became nullable "
                  "without a type", action="approximated", enforced=True, parameter=path)
        return out

    def split(self, schema: dict[str, Any], pointer: str) -> tuple[dict[str, Any], bool]:
        """:func:`split_types`, then convert the new branches with this transformer."""
        out, nullable, count = split_types(schema)
        for i in range(count):
            out["anyOf"][i] = self.transform(out["anyOf"][i], pointer, root=False)
        return out, nullable
