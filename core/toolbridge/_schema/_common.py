"""Rewrites shared by several targets: the rule table pass, type lists, `allOf`, nullability."""

from __future__ import annotations

from typing import Any

from toolbridge._schema._walk import SchemaTarget, SchemaTransformer
from toolbridge._schema.rules import kind_of, rule_for

__all__ = ["BY_TYPE", "TableTransformer", "is_null", "merge_all_of", "split_types"]

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


def split_types(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Turn ``type: [A, B, "null"]`` into ``anyOf`` of single types; also return "had null".

    Type-specific keywords move into their branch so each branch stays a valid schema.
    ``[T, "null"]`` becomes ``type: T`` plus the returned flag.
    """
    types = schema.get("type")
    if not isinstance(types, list):
        return schema, False
    nullable = "null" in types
    kinds = [t for t in dict.fromkeys(types) if t != "null" and isinstance(t, str)]
    if len(kinds) <= 1:
        out = {k: v for k, v in schema.items() if k != "type"}
        if kinds:
            out["type"] = kinds[0]
        return out, nullable
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
    return out, nullable


def _matches(value: Any, kind: str) -> bool:
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, _JSON_TYPE.get(kind, ()))


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


class TableTransformer(SchemaTransformer):
    """A transformer that first applies the rule table's keep/drop/ignore to every node."""

    dialect: SchemaTarget

    def apply_table(self, schema: dict[str, Any], pointer: str) -> None:
        """Drop the keywords the table drops for this target; ignore the ignorable ones."""
        for key in list(schema):
            kind = kind_of(key, self.dialect)
            if kind == "ignore":
                del schema[key]
            elif kind == "drop":
                rule = rule_for(key)
                reason = (f"{self.dialect} has no {key!r}" if rule else
                          f"unknown keyword {key!r} is not part of {self.dialect}")
                self.drop(schema, pointer, key, reason, describe=bool(rule and rule.describe))
