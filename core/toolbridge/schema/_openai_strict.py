"""OpenAI strict function schemas (``strict: true``).

Rules: OpenAI's Structured Outputs "Supported schemas" and the SDK's ``_ensure_strict_json_schema``
(openai 3.57.0 ``lib/_pydantic.py``); see ``shared/protocols/schema-dialects.md`` §2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolbridge.schema._common import (
    TableTransformer,
    is_null,
    merge_all_of,
    tuple_to_items,
)
from toolbridge.schema._walk import SchemaTarget, short

__all__ = ["OPENAI_FORMATS", "OpenAIStrictSchema", "make_nullable"]

OPENAI_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname",
                            "ipv4", "ipv6", "uuid"})
"""String formats OpenAI's strict mode documents; others are dropped."""
_TYPED = frozenset({"type", "anyOf", "$ref", "enum", "const"})


def allows_null(schema: Any) -> bool:
    """True when ``schema`` already accepts ``null`` (cheap syntactic check)."""
    if not isinstance(schema, dict) or not schema:
        return True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "enum" in schema and None in schema["enum"] and kind is None:
        return True
    return any(allows_null(b) for b in schema.get("anyOf", ()))


def make_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Return ``schema`` also accepting ``null``, the strict-mode way (type list or anyOf)."""
    if allows_null(schema):
        return schema
    kind = schema.get("type")
    if "$ref" in schema or "const" in schema or (kind is None and "anyOf" not in schema):
        return {"anyOf": [schema, {"type": "null"}]}
    out = dict(schema)
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list):
        out["type"] = [*kind, "null"]
    else:
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    if "enum" in out and None not in out["enum"]:
        # `{"type": ["string","null"], "enum": ["a"]}` still rejects null: add it to the enum.
        out["enum"] = [*out["enum"], None]
    return out


class OpenAIStrictSchema(TableTransformer):
    """JSON Schema 2020-12 → OpenAI strict function parameters."""

    target = "openai-strict"
    dialect: SchemaTarget = "openai-strict"

    def walk_node(self, node: Any, pointer: str, depth: int, *, root: bool = False) -> Any:
        if isinstance(node, Mapping) and isinstance(node.get("properties"), Mapping):
            node = self._move_optional_defaults(node)
        return super().walk_node(node, pointer, depth, root=root)

    def _move_optional_defaults(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        """An optional, non-nullable property's default is kept faithfully, not lost.

        Strict mode makes it required and nullable; the model sends null for "use the
        default" and argument decoding turns that null back into "absent", so the neutral
        default applies. The default goes into the description so the model knows it. A
        nullable property's non-null default cannot be told apart from null: that stays a loss.
        """
        required = set(node.get("required", ()))
        props = dict(node["properties"])
        changed = False
        for name, sub in node["properties"].items():
            if name in required or not isinstance(sub, Mapping) or "default" not in sub:
                continue
            default = sub["default"]
            if default is None or allows_null(sub):
                continue
            moved = {k: v for k, v in sub.items() if k != "default"}
            note = f"(default: {short(default)}; null uses it)"
            described = moved.get("description")
            moved["description"] = f"{described} {note}" if described else note
            if id(sub) in self.origins:
                self.origins = {**self.origins, id(moved): self.origins[id(sub)]}
            props[name] = moved
            changed = True
        if not changed:
            return node
        out = {**node, "properties": props}
        if id(node) in self.origins:
            self.origins = {**self.origins, id(out): self.origins[id(node)]}
        return out

    def transform_bool(self, value: Any, pointer: str) -> Any:
        if value is True:
            return self.transform({}, pointer, root=False)
        out: dict[str, Any] = {}
        self.lose(out, pointer, "false", "strict mode has no 'nothing' schema; "
                  "became an unconstrained schema", action="approximated")
        return self.transform(out, pointer, root=False)

    def transform(self, schema: dict[str, Any], pointer: str, *, root: bool) -> dict[str, Any]:
        self.apply_table(schema, pointer)
        if schema.pop("nullable", False) is True:
            schema = make_nullable(schema)  # OpenAPI's `nullable`, written the JSON Schema way
        if "oneOf" in schema:
            # Strict mode has no oneOf; anyOf accepts the same values when the branches are
            # disjoint (pydantic's tagged unions are), otherwise it is looser.
            branches = schema.pop("oneOf")
            if "anyOf" in schema:
                self.lose(schema, pointer, "oneOf", "node has both anyOf and oneOf",
                          text=f"oneOf: {short(branches)}")
            else:
                schema["anyOf"] = branches
                self.lose(schema, pointer, "oneOf", "rewritten as anyOf", action="approximated")
        if "allOf" in schema and not merge_all_of(schema):
            self.drop(schema, pointer, "allOf", "strict mode has no allOf and the entries "
                      "cannot be merged exactly")
        if isinstance(schema.get("type"), list):
            split, had_null = self.split(schema, pointer)
            schema = make_nullable(split) if had_null else split
        fmt = schema.get("format")
        if fmt is not None and fmt not in OPENAI_FORMATS:
            self.drop(schema, pointer, "format", f"strict mode supports only the formats "
                      f"{', '.join(sorted(OPENAI_FORMATS))}")
        if "default" in schema:
            # Strict mode: every property is required, so a default never applies; Azure
            # rejects non-null defaults (openai/openai-agents-python#4390). The neutral default
            # applies again when the model sends null (see decode_arguments).
            default = schema.pop("default")
            if default is not None:
                self.lose(schema, pointer, "default", "strict mode has no defaults",
                          text=f"default: {short(default)}")
        if "prefixItems" in schema:
            self._tuple(schema, pointer)
        if schema.get("type") == "object" or "properties" in schema:
            self._object(schema, pointer)
        if not root and not (_TYPED & set(schema)):
            # Strict mode needs a type on every schema ("schema must have a 'type' key");
            # an unconstrained one becomes any scalar.
            schema["anyOf"] = [{"type": t} for t in ("string", "number", "boolean", "null")]
            self.lose(schema, pointer, "type", "strict mode needs a type; objects and arrays "
                      "are no longer accepted here", action="approximated")
        if "$ref" in schema and len(schema) > 1:
            # Strict mode rejects keys next to `$ref`; wrapping keeps the annotations.
            ref = schema.pop("$ref")
            schema = {"anyOf": [{"$ref": ref}], **schema}
        return schema

    def _tuple(self, schema: dict[str, Any], pointer: str) -> None:
        if tuple_to_items(schema):
            self.lose(schema, pointer, "prefixItems", "strict mode has no tuples; each "
                      "position accepts any of the item schemas", action="approximated")

    def _object(self, schema: dict[str, Any], pointer: str) -> None:
        props: dict[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        if extra is not False and (extra is not None or not props):
            # An open dict (`dict[str, X]`, `additionalProperties: true`, a bare object)
            # cannot be strict: strict mode requires `additionalProperties: false`.
            self.lose(schema, pointer, "additionalProperties",
                      "strict mode needs additionalProperties false; the object accepts "
                      "only its declared properties",
                      text="additionalProperties: " + short(True if extra is None else extra))
        schema["additionalProperties"] = False
        if "properties" not in schema:
            schema["properties"] = {}
        required = set(schema.get("required", ()))
        for name, sub in props.items():
            if name not in required and isinstance(sub, dict) and not is_null(sub):
                # Strict mode requires every property: optional ones become nullable and a
                # null answer means "absent" when arguments are decoded.
                props[name] = make_nullable(sub)
        schema["required"] = list(props)

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        if schema.get("type") != "object" or "anyOf" in schema:
            # Strict mode needs an object root, never anyOf (OpenAI "Supported schemas").
            defs = schema.pop("$defs", None)
            wrapped: dict[str, Any] = {"type": "object", "properties": {"value": schema},
                                       "required": ["value"], "additionalProperties": False}
            if defs:
                wrapped["$defs"] = defs
            self.lose(wrapped, "", "type", "strict mode needs an object root; the schema "
                      "became the property 'value'", action="approximated")
            return wrapped
        return schema
