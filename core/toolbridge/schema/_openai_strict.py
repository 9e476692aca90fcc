"""OpenAI strict function schemas (``strict: true``).

Rules: OpenAI's Structured Outputs "Supported schemas" and the SDK's ``_ensure_strict_json_schema``
(openai 3.57.0 ``lib/_pydantic.py``); see ``shared/protocols/schema-dialects.md`` §2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolbridge.schema._common import (
    TableTransformer,
    certain_type,
    is_null,
    merge_all_of,
    merged_all_of,
    tuple_to_items,
)
from toolbridge.schema._walk import SCHEMA_CHILD, SCHEMA_LIST, SCHEMA_MAP, SchemaTarget, short

__all__ = ["OPENAI_FORMATS", "ROOT_PROPERTY", "OpenAIStrictSchema", "make_nullable"]

ROOT_PROPERTY = "value"
"""The property a root that is not a plain object becomes (strict mode needs an object root)."""

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
    wrapped = False
    """Set by the walk when the root became the property :data:`ROOT_PROPERTY`."""

    def prepare(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        node = super().prepare(node)
        if isinstance(node.get("properties"), Mapping):
            node = self._move_optional_defaults(node)
        return node

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
            if isinstance(sub, Mapping) and "allOf" in sub and name not in required:
                merged = merged_all_of(sub)  # a default may sit in an entry that annotates
                if merged is not None:
                    if id(sub) in self.origins:
                        self.origins = {**self.origins, id(merged): self.origins[id(sub)]}
                    sub = props[name] = merged
                    changed = True
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
                  "became an unconstrained schema", action="approximated", enforced=True)
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
                          text=f"oneOf: {short(branches)}", enforced=True)
            else:
                schema["anyOf"] = branches
                self.lose(schema, pointer, "oneOf", "rewritten as anyOf", action="approximated",
                          enforced=True)
        if "allOf" in schema and not merge_all_of(schema):
            self.drop(schema, pointer, "allOf", "strict mode has no allOf and the entries "
                      "cannot be merged exactly", enforced=True)
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
            # applies again when the model sends null (see decode_arguments), except where
            # null is a value of its own: then nothing can ask for the default.
            default = schema.pop("default")
            if default is not None:
                self.lose(schema, pointer, "default", "strict mode has no defaults",
                          text=f"default: {short(default)}")
        if "type" not in schema and not (_TYPED & set(schema)):
            kind = certain_type(schema) or ("object" if root else None)
            if kind is not None:
                # `{"properties": ...}` can only mean an object; a root can only be one
                # (arguments are an object on every wire), so an empty root is one too.
                schema["type"] = kind
        if "prefixItems" in schema:
            self._tuple(schema, pointer)
        if schema.get("type") == "object" or "properties" in schema:
            self._object(schema, pointer)
        if not root and not (_TYPED & set(schema)):
            # Strict mode needs a type on every schema ("schema must have a 'type' key");
            # an unconstrained one becomes any scalar.
            schema["anyOf"] = [{"type": t} for t in ("string", "number", "boolean", "null")]
            self.lose(schema, pointer, "type", "strict mode needs a type; objects and arrays "
                      "are no longer accepted here", action="approximated", enforced=True)
        if "$ref" in schema and len(schema) > 1:
            # Strict mode rejects keys next to `$ref`; wrapping keeps the annotations.
            ref = schema.pop("$ref")
            schema = {"anyOf": [{"$ref": ref}], **schema}
        return schema

    def _tuple(self, schema: dict[str, Any], pointer: str) -> None:
        if tuple_to_items(schema):
            self.lose(schema, pointer, "prefixItems", "strict mode has no tuples; each "
                      "position accepts any of the item schemas", action="approximated",
                      enforced=True)

    def _object(self, schema: dict[str, Any], pointer: str) -> None:
        props: dict[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        if extra is not False and (extra is not None or not props):
            # An open dict (`dict[str, X]`, `additionalProperties: true`, a bare object)
            # cannot be strict: strict mode requires `additionalProperties: false`. The model
            # can then send less than the schema allows, never more: enforced.
            self.lose(schema, pointer, "additionalProperties",
                      "strict mode needs additionalProperties false; the object accepts "
                      "only its declared properties",
                      text="additionalProperties: " + short(True if extra is None else extra),
                      enforced=True)
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
        if schema.get("type") == "object" and "anyOf" not in schema:
            return schema
        # Strict mode needs an object root, never anyOf (OpenAI "Supported schemas"): the
        # schema becomes one property; `unwrap_arguments` takes it out again on arrival.
        defs: dict[str, Any] = schema.pop("$defs", None) or {}
        value: dict[str, Any] = schema
        if any(_refers_to_root(node) for node in (schema, *defs.values())):
            # `#` would point at the wrapper: the old root moves into `$defs`.
            name = "Root"
            while name in defs:
                name += "_"
            defs[name] = schema
            _retarget_root_refs(defs, f"#/$defs/{name}")
            value = {"$ref": f"#/$defs/{name}"}
        wrapped: dict[str, Any] = {"type": "object", "properties": {ROOT_PROPERTY: value},
                                   "required": [ROOT_PROPERTY], "additionalProperties": False}
        if defs:
            wrapped["$defs"] = defs
        self.wrapped = True
        self.lose(wrapped, "", "type", "strict mode needs an object root; the schema became "
                  f"the property {ROOT_PROPERTY!r} (unwrapped again on arrival)",
                  action="approximated", enforced=True, parameter="")
        return wrapped


def _schema_children(node: dict[str, Any]) -> list[Any]:
    kids: list[Any] = []
    for key, value in node.items():
        if key in SCHEMA_CHILD:
            kids.append(value)
        elif key in SCHEMA_LIST and isinstance(value, list):
            kids.extend(value)
        elif key in SCHEMA_MAP and isinstance(value, dict):
            kids.extend(value.values())
    return kids


def _refers_to_root(schema: Any) -> bool:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("$ref") == "#":
                return True
            stack.extend(_schema_children(node))
    return False


def _retarget_root_refs(defs: dict[str, Any], target: str) -> None:
    stack: list[Any] = list(defs.values())
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("$ref") == "#":
                node["$ref"] = target
            stack.extend(_schema_children(node))
