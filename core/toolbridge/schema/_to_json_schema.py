"""OpenAPI 3.0 / 3.1 and CES schemas back to neutral JSON Schema 2020-12 (for importing tools)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from toolbridge.errors import SchemaConversionError, UsageError
from toolbridge.schema._convert import check_valid
from toolbridge.schema._normalize import ANNOTATIONS, normalize_schema
from toolbridge.schema._walk import (
    SCHEMA_CHILD,
    SCHEMA_LIST,
    SCHEMA_MAP,
    Conversion,
    SchemaLoss,
    check_bounds,
    escape,
    short,
)

__all__ = ["SchemaSource", "to_json_schema"]

SchemaSource = Literal["openapi-3.0", "openapi-3.1", "ces"]
"""The schema dialects `to_json_schema` reads."""

# Proto JSON parsers accept the proto field names too (google.protobuf json_format).
_CES_FIELDS = {"any_of": "anyOf", "prefix_items": "prefixItems", "unique_items": "uniqueItems",
               "additional_properties": "additionalProperties", "min_items": "minItems",
               "max_items": "maxItems", "type_": "type"}
_CES_TYPES = {"STRING": "string", "INTEGER": "integer", "NUMBER": "number",
              "BOOLEAN": "boolean", "OBJECT": "object", "ARRAY": "array",
              1: "string", 2: "integer", 3: "number", 4: "boolean", 5: "object", 6: "array"}
_OPENAPI_ONLY = ("xml", "externalDocs")
_COMPONENTS = "#/components/schemas/"


def to_json_schema(schema: Mapping[str, Any], source: SchemaSource) -> Conversion:
    """Convert an OpenAPI 3.0/3.1 Schema Object or a CES ``Schema`` to neutral JSON Schema.

    References to ``#/components/schemas/X`` become ``#/$defs/X``: put the components under
    ``$defs`` (as :func:`tools_from_openapi` does) or inline them first. A schema that is not
    valid in ``source`` (or not JSON Schema once converted) raises `SchemaConversionError`
    naming where.
    """
    if source not in ("openapi-3.0", "openapi-3.1", "ces"):
        raise UsageError(f"unknown schema source {source!r}; use 'openapi-3.0', "
                         "'openapi-3.1' or 'ces'")
    if not isinstance(schema, Mapping):
        raise SchemaConversionError(f"{source}: a schema must be a JSON object, not "
                                    f"{type(schema).__name__}")
    check_bounds(schema)
    losses: list[SchemaLoss] = []
    neutral = normalize_schema(_convert(schema, source, "", losses))
    check_valid(neutral)
    return Conversion(neutral, tuple(losses))


def _convert(node: Any, source: SchemaSource, ptr: str, losses: list[SchemaLoss]) -> Any:
    if not isinstance(node, Mapping):
        return node
    if source == "ces":
        node = {_CES_FIELDS.get(k, k): v for k, v in node.items()}
        if "defs" in node:
            node["$defs"] = node.pop("defs")
        if "ref" in node and isinstance(node["ref"], str):
            ref = node.pop("ref")
            node["$ref"] = "#/$defs/" + ref.removeprefix("#/defs/") if ref != "#" else "#"
    out: dict[str, Any] = {}
    for key, value in node.items():
        here = f"{ptr}/{escape(key)}"
        if key in SCHEMA_CHILD and isinstance(value, Mapping):
            out[key] = _convert(value, source, here, losses)
        elif key in SCHEMA_LIST and isinstance(value, list):
            out[key] = [_convert(v, source, f"{here}/{i}", losses) for i, v in enumerate(value)]
        elif key in SCHEMA_MAP and isinstance(value, Mapping):
            out[key] = {k: _convert(v, source, f"{here}/{escape(k)}", losses)
                        for k, v in value.items()}
        else:
            out[key] = value
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(_COMPONENTS):
        out["$ref"] = "#/$defs/" + ref[len(_COMPONENTS):]
    if source == "openapi-3.0" and isinstance(ref, str):
        # 3.0: a Reference Object ignores its siblings (3.0.3 "Reference Object").
        for key in [k for k in out if k != "$ref" and k not in ANNOTATIONS]:
            del out[key]
            losses.append(SchemaLoss(ptr, key, "dropped", "ignored next to $ref in OpenAPI 3.0",
                                     enforced=True))
    if source == "ces":
        _from_ces(out, ptr)
    if source.startswith("openapi"):
        for key in _OPENAPI_ONLY:
            if key in out:
                del out[key]
                losses.append(SchemaLoss(ptr, key, "dropped", "not a JSON Schema keyword",
                                         enforced=True))
        if "example" in out:
            out.setdefault("examples", [out["example"]])
            del out["example"]
    if out.pop("nullable", False) is True:
        out = _add_null(out)
    return out


def _from_ces(out: dict[str, Any], ptr: str) -> None:
    kind = out.pop("type", None)
    if isinstance(kind, (str, int)) and not isinstance(kind, bool) and kind in _CES_TYPES:
        out["type"] = _CES_TYPES[kind]
    elif kind not in (None, "TYPE_UNSPECIFIED", 0):
        raise SchemaConversionError(
            f"ces: {ptr or '/'}: type {short(kind)} is not a CES Schema type; use one of "
            "STRING, INTEGER, NUMBER, BOOLEAN, OBJECT, ARRAY (and nullable: true for null)")
    for key in ("minItems", "maxItems"):
        if isinstance(out.get(key), str) and out[key].lstrip("-").isdigit():
            out[key] = int(out[key])  # int64 arrives as a JSON string
    if out.get("type") in ("integer", "number") and isinstance(out.get("enum"), list):
        # CES enums are strings; an INTEGER/NUMBER enum holds numbers written as strings.
        try:
            numbers = [float(v) for v in out["enum"]]
        except (TypeError, ValueError):
            out["type"] = "string"
        else:
            out["enum"] = [int(n) if n.is_integer() and out["type"] == "integer" else n
                           for n in numbers]


def _add_null(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and "$ref" not in schema:
        schema["type"] = [kind, "null"]
        if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    if "anyOf" in schema and "$ref" not in schema:
        schema["anyOf"] = [*schema["anyOf"], {"type": "null"}]
        return schema
    if "$ref" in schema or "allOf" in schema or "oneOf" in schema or "enum" in schema:
        keep = {k: v for k, v in schema.items() if k in ANNOTATIONS}
        body = {k: v for k, v in schema.items() if k not in ANNOTATIONS}
        return {"anyOf": [body, {"type": "null"}], **keep}
    return schema  # no type: already accepts null
