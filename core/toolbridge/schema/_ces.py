"""Google CES ``Schema`` messages in proto JSON form.

Rules: google-cloud-ces 0.7.2 ``types/schema.py`` (fields tested with ``Schema.from_json(...,
ignore_unknown_fields=False)``); see ``shared/protocols/google-ces-client-functions.md`` §7.
"""

from __future__ import annotations

import json
from typing import Any

from toolbridge.errors import SchemaConversionError
from toolbridge.schema._common import TableTransformer, is_null, merge_all_of
from toolbridge.schema._walk import SchemaTarget, short

__all__ = ["MAX_MESSAGE_DEPTH", "CesSchema", "ces_enum_value"]

ROOT_DEF = "Root"


def ces_enum_value(value: Any) -> str:
    """An enum value as CES writes it: enums are ``repeated string`` in the proto."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value)


class CesSchema(TableTransformer):
    """JSON Schema 2020-12 → CES ``Schema`` (proto JSON: ``STRING``, ``ref``, ``defs``)."""

    target = "ces"
    dialect: SchemaTarget = "ces"
    label = "CES"
    """The backend's name in loss reasons."""
    int64_as_text = True
    """Write ``minItems`` / ``maxItems`` as JSON strings (proto JSON's int64)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        defs = self.schema.get("$defs", {})
        self.root_def = ROOT_DEF
        while self.root_def in defs:
            self.root_def += "_"
        self.root_referenced = False

    def transform_bool(self, value: Any, pointer: str) -> Any:
        out: dict[str, Any] = {}
        if value is not True:
            self.lose(out, pointer, "false", f"{self.label} cannot say 'no value'; became an "
                      "unconstrained schema", action="approximated", enforced=True)
        return out

    def transform(self, schema: dict[str, Any], pointer: str, *, root: bool) -> dict[str, Any]:
        if is_null(schema) and not root:
            return schema  # the parent folds it into `nullable` (see settle_nulls)
        self.apply_table(schema, pointer)
        if "oneOf" in schema:
            branches = schema.pop("oneOf")
            if "anyOf" in schema:
                self.lose(schema, pointer, "oneOf", "node has both anyOf and oneOf",
                          text=f"oneOf: {short(branches)}", enforced=True)
            else:
                schema["anyOf"] = branches
                self.lose(schema, pointer, "oneOf", f"{self.label} has no oneOf; rewritten "
                          "as anyOf", action="approximated", enforced=True)
        if "allOf" in schema and not merge_all_of(schema):
            self.drop(schema, pointer, "allOf", f"{self.label} has no allOf and the entries "
                      "cannot be merged exactly", enforced=True)
        nullable = schema.pop("nullable", False) is True
        if isinstance(schema.get("type"), list):
            schema, had_null = self.split(schema, pointer)
            nullable = nullable or had_null
        if schema.get("type") == "null":
            del schema["type"]
            nullable = True
            self.lose(schema, pointer, "type", f"{self.dialect} has no null type; became "
                      "nullable without a type", action="approximated", enforced=True)
        branches = schema.get("anyOf")
        if isinstance(branches, list) and any(is_null(b) for b in branches):
            rest = [b for b in branches if not is_null(b)]
            nullable = True
            if len(rest) == 1 and isinstance(rest[0], dict) and not (
                    set(rest[0]) & (set(schema) - {"anyOf"})):
                del schema["anyOf"]
                schema.update(rest[0])
            else:
                schema["anyOf"] = rest
        if "const" in schema:
            schema["enum"] = [schema.pop("const")]
        if "enum" in schema:
            nullable = self._enum(schema, pointer) or nullable
        self._bounds(schema, pointer)
        for key in ("minItems", "maxItems"):
            if isinstance(schema.get(key), (int, float)):
                count = int(schema[key])
                schema[key] = str(count) if self.int64_as_text else count
        extra = schema.get("additionalProperties")
        if extra is False or extra is True:
            # The proto field is a Schema message: JSON true/false do not parse (tested).
            del schema["additionalProperties"]
            if extra is False:
                # Every Python-defined tool says this; it is checked on arrival, and models
                # send the declared properties anyway: not worth a note in every description.
                self.lose(schema, pointer, "additionalProperties", f"{self.label} cannot "
                          "forbid extra properties", enforced=True)
        ref = schema.pop("$ref", None)
        if isinstance(ref, str):
            if ref == "#":
                self.root_referenced = True
                schema["ref"] = f"#/defs/{self.root_def}"
            else:
                schema["ref"] = "#/defs/" + ref.removeprefix("#/$defs/")
        if "$defs" in schema:
            defs = schema.pop("$defs")
            if root:
                schema["defs"] = defs  # the proto allows `defs` only at the root
        if nullable:
            schema["nullable"] = True
        self._type(schema)
        self.settle_nulls(schema, pointer)
        return schema

    def _enum(self, schema: dict[str, Any], pointer: str) -> bool:
        values = schema["enum"]
        nullable = None in values
        strings = [ces_enum_value(v) for v in values if v is not None]
        if len(set(strings)) != len(strings):
            self.lose(schema, pointer, "enum", "two values have the same string form in CES",
                      action="approximated", enforced=True)
            strings = list(dict.fromkeys(strings))
        if any(not isinstance(v, str) for v in values if v is not None):
            # CES enums are strings; decode_arguments maps "101" back to 101 using the
            # neutral schema, so the model answers with the string form.
            schema["type"] = "string"
            for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                schema.pop(key, None)
        schema["enum"] = strings
        if "default" in schema and schema["default"] is not None:
            schema["default"] = ces_enum_value(schema["default"])
        return nullable

    def _bounds(self, schema: dict[str, Any], pointer: str) -> None:
        for bound, plain, step, stricter in (("exclusiveMinimum", "minimum", 1, max),
                                             ("exclusiveMaximum", "maximum", -1, min)):
            if bound not in schema:
                continue
            limit = schema.pop(bound)
            if not isinstance(limit, (int, float)) or isinstance(limit, bool):
                continue
            if schema.get("type") == "integer" and float(limit).is_integer():
                value: float = int(limit) + step  # exact for integers
            else:
                value = limit
                self.lose(schema, pointer, bound, f"{self.label} has only inclusive bounds",
                          action="approximated", text=f"{bound}: {limit}", enforced=True)
            other = schema.get(plain)
            schema[plain] = stricter(other, value) if isinstance(other, (int, float)) else value

    def _type(self, schema: dict[str, Any]) -> None:
        kind = schema.get("type")
        if kind is None:
            # `type` is the proto's first field and CES expects it; infer it where certain.
            if "properties" in schema or "additionalProperties" in schema:
                kind = "object"
            elif "items" in schema or "prefixItems" in schema:
                kind = "array"
            elif "enum" in schema:
                kind = "string"
        if isinstance(kind, str):
            schema["type"] = kind.upper()

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.root_referenced:
            defs = schema.setdefault("defs", {})
            defs[self.root_def] = {k: v for k, v in schema.items() if k != "defs"}
        depth = _message_depth(schema)
        if depth > MAX_MESSAGE_DEPTH:
            raise SchemaConversionError(
                f"ces: the schema nests {depth} Schema messages; CES reads it with the proto "
                f"JSON parser, which reads at most {MAX_MESSAGE_DEPTH} in a tool (flatten it, or "
                "use $defs for what repeats)")
        return schema


MAX_MESSAGE_DEPTH = 98
"""Deepest ``Schema`` a CES tool can hold: protobuf's JSON parser reads at most 100 nested
messages (``json_format`` ``max_recursion_depth``), and a ``Tool`` holds its parameters two
messages down (``Tool`` → ``clientFunction`` → ``parameters``); tested with google-cloud-ces
0.7.2."""


def _message_depth(schema: dict[str, Any]) -> int:
    """How many messages deep ``schema`` nests (the root is 1): ``Schema`` messages, and the
    ``google.protobuf.Value`` of a ``default`` (two messages per array or object level)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict):
            continue
        deepest = max(deepest, depth)
        if "default" in node:
            deepest = max(deepest, depth + 1 + 2 * _containers(node["default"]))
        for key in ("items", "additionalProperties"):
            stack.append((node.get(key), depth + 1))
        for key in ("anyOf", "prefixItems"):
            stack.extend((sub, depth + 1) for sub in node.get(key) or ())
        for key in ("properties", "defs"):
            value = node.get(key)
            if isinstance(value, dict):
                stack.extend((sub, depth + 1) for sub in value.values())
    return deepest


def _containers(value: Any) -> int:
    """How many arrays and objects deep ``value`` nests (a scalar: 0)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth + 1)
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict)
                                                  else node))
    return deepest
