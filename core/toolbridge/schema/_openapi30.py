"""OpenAPI 3.0 Schema Objects (standalone, no ``components``).

Rules: OpenAPI 3.0.3 "Schema Object" (``OAI/OpenAPI-Specification: versions/3.0.3.md``), checked
with ``openapi_pydantic.v3.v3_0.Schema``; see ``shared/protocols/schema-dialects.md`` §3.
"""

from __future__ import annotations

from typing import Any

from toolbridge.errors import SchemaConversionError, validation_text
from toolbridge.schema._common import TableTransformer, is_null, tuple_to_items
from toolbridge.schema._normalize import Normalized
from toolbridge.schema._walk import (
    MAX_DEPTH,
    MAX_NODES,
    SCHEMA_CHILD,
    SCHEMA_LIST,
    SCHEMA_MAP,
    SchemaTarget,
    short,
)

__all__ = ["UNROLL", "OpenAPI30Schema", "inline_recursion", "validate_openapi30"]

UNROLL = 2
"""How many times a recursive definition is unrolled before the recursion is cut."""
CUT = "x-toolbridge-recursion-cut"
_SOFT_BUDGET = 2_000  # nodes; beyond this every further recursive reference is cut


def inline_recursion(norm: Normalized, levels: int = UNROLL) -> Normalized:
    """Replace the recursive `$ref`s left by normalization with copies, ``levels`` deep.

    A standalone 3.0 Schema Object has nowhere to put definitions, so a recursive type is
    unrolled and then cut (the cut is marked and reported by :class:`OpenAPI30Schema`).
    """
    root = norm.schema
    defs: dict[str, Any] = root.get("$defs", {})
    if not defs and not _has_root_ref(root):
        return norm
    origins = dict(norm.origins)
    count = 0
    body = {k: v for k, v in root.items() if k != "$defs"}

    def copy(node: Any, hops: int, depth: int = 0) -> Any:
        nonlocal count
        if not isinstance(node, dict):
            return node
        count += 1
        if depth > MAX_DEPTH:
            raise SchemaConversionError(
                f"openapi-3.0: unrolling recursive definitions nests deeper than {MAX_DEPTH} "
                "levels; the schema is too deep for a standalone OpenAPI 3.0 schema")
        if count > MAX_NODES:
            raise SchemaConversionError(
                f"openapi-3.0: unrolling recursive definitions exceeds {MAX_NODES} nodes")
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = "#" if ref == "#" else ref.removeprefix("#/$defs/")
            target = body if name == "#" else defs.get(name)
            siblings = {k: copy(v, hops, depth + 1) for k, v in node.items() if k != "$ref"}
            # Cut after `levels` recursive hops on this path, or early once the copy grows
            # large (mutually recursive definitions multiply at every level).
            if target is None or hops >= levels or count > _SOFT_BUDGET:
                cut = {CUT: name, **siblings}
                origins[id(cut)] = norm.origins.get(id(node), "")
                return cut
            inner = copy(target, hops + 1, depth + 1)
            if isinstance(inner, dict):
                return {**inner, **siblings}
            return inner
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in SCHEMA_CHILD:
                out[key] = copy(value, hops, depth + 1)
            elif key in SCHEMA_LIST and isinstance(value, list):
                out[key] = [copy(v, hops, depth + 1) for v in value]
            elif key in SCHEMA_MAP and isinstance(value, dict):
                out[key] = {k: copy(v, hops, depth + 1) for k, v in value.items()}
            else:
                out[key] = value
        origins[id(out)] = norm.origins.get(id(node), "")
        return out

    result = copy(body, 0)
    return Normalized(result, origins)


def _has_root_ref(root: dict[str, Any]) -> bool:
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("$ref") == "#":
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


class OpenAPI30Schema(TableTransformer):
    """JSON Schema 2020-12 (recursion already unrolled) → OpenAPI 3.0 Schema Object."""

    target = "openapi-3.0"
    dialect: SchemaTarget = "openapi-3.0"

    def transform_bool(self, value: Any, pointer: str) -> Any:
        return {} if value is True else {"not": {}}

    def transform(self, schema: dict[str, Any], pointer: str, *, root: bool) -> dict[str, Any]:
        if is_null(schema) and not root:
            return schema  # the parent folds it into `nullable` (see settle_nulls)
        if CUT in schema:
            name = schema.pop(CUT)
            self.lose(schema, pointer, "$ref", f"recursive reference to {name!r} cut after "
                      f"{UNROLL} levels: OpenAPI 3.0 schemas cannot hold recursion standalone",
                      action="approximated", text=f"recursive: {name}", enforced=True)
        self.apply_table(schema, pointer)
        for key in ("additionalProperties",):
            if isinstance(schema.get(key), dict) and schema[key] == {}:
                schema[key] = True
        nullable = False
        if isinstance(schema.get("type"), list):
            schema, nullable = self.split(schema, pointer)
        if schema.get("type") == "null":
            del schema["type"]
            nullable = True
            self.lose(schema, pointer, "type", f"{self.dialect} has no null type; became "
                      "nullable without a type", action="approximated", enforced=True)
        for union in ("anyOf", "oneOf"):
            branches = schema.get(union)
            if isinstance(branches, list) and any(is_null(b) for b in branches):
                rest = [b for b in branches if not is_null(b)]
                nullable = True
                if len(rest) == 1 and isinstance(rest[0], dict) and not (
                        set(rest[0]) & (set(schema) - {union})):
                    del schema[union]
                    schema.update(rest[0])
                else:
                    schema[union] = [_nullable(b) for b in rest]
        if "const" in schema:
            value = schema.pop("const")
            schema["enum"] = [value]
            nullable = nullable or value is None
        if nullable:
            schema["nullable"] = True
        if "enum" in schema and None in schema["enum"] and not schema.get("nullable"):
            schema["nullable"] = True
        for bound, plain, stricter in (("exclusiveMinimum", "minimum", max),
                                       ("exclusiveMaximum", "maximum", min)):
            limit = schema.get(bound)
            if isinstance(limit, (int, float)) and not isinstance(limit, bool):
                # 3.0 is draft-5: the exclusive bound is a boolean that modifies min/max.
                other = schema.get(plain)
                if isinstance(other, (int, float)) and stricter(other, limit) == other \
                        and other != limit:
                    del schema[bound]
                else:
                    schema[plain] = limit
                    schema[bound] = True
        if "examples" in schema:
            examples = schema.pop("examples")
            if isinstance(examples, list) and examples:
                schema.setdefault("example", examples[0])
                if len(examples) > 1:
                    self.lose(schema, pointer, "examples", "OpenAPI 3.0 holds one example; "
                              "kept the first", action="approximated", enforced=True)
        if "prefixItems" in schema and tuple_to_items(schema):
            self.lose(schema, pointer, "prefixItems", "OpenAPI 3.0 has no tuples; each "
                      "position accepts any of the item schemas", action="approximated",
                      enforced=True)
        if schema.get("type") == "array" and "items" not in schema:
            schema["items"] = {}  # 3.0.3: `items` MUST be present if type is array
        disc = schema.get("discriminator")
        if isinstance(disc, dict) and "mapping" in disc:
            schema["discriminator"] = {k: v for k, v in disc.items() if k != "mapping"}
            self.lose(schema, pointer, "discriminator", "mapping points at inlined "
                      "definitions; only propertyName kept", action="approximated", enforced=True)
        if isinstance(disc, dict) and "propertyName" not in disc:
            del schema["discriminator"]
        self.settle_nulls(schema, pointer)
        return schema


def _nullable(branch: Any) -> Any:
    if isinstance(branch, dict) and "type" in branch:
        return {**branch, "nullable": True}
    return branch


def validate_openapi30(schema: dict[str, Any]) -> None:
    """Check ``schema`` with openapi-pydantic's 3.0 model; raise SchemaConversionError if not."""
    from openapi_pydantic.v3.v3_0 import Schema  # lazy: keep `import toolbridge` light
    from pydantic import ValidationError

    try:
        Schema.model_validate(schema)
    except ValidationError as exc:  # a toolbridge bug: the walker should have fixed it
        raise SchemaConversionError(
            f"openapi-3.0: converted schema is not a valid OpenAPI 3.0 Schema Object "
            f"({short(validation_text(exc), 300)}); please report this") from exc
