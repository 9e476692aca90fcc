"""OpenAPI's ``readOnly`` / ``writeOnly``: a schema as it applies to requests or to responses.

OpenAPI 3.0.3 (Schema Object, ``readOnly``/``writeOnly``) and 3.1 (JSON Schema 2020-12's
meta-data vocabulary as OpenAPI uses it): a ``readOnly`` property is sent in responses only, a
``writeOnly`` one in requests only, and ``required`` applies to a property only in the direction
it is sent in. A tool's arguments are a request, its output a response.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["Direction", "for_direction"]

Direction = Literal["request", "response"]
_SKIPPED = {"request": "readOnly", "response": "writeOnly"}
_CHILD = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
          "propertyNames", "unevaluatedItems", "unevaluatedProperties")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAPS = ("$defs", "definitions", "patternProperties", "dependentSchemas")
_REF_PREFIXES = ("#/components/schemas/", "#/$defs/", "#/definitions/")


def for_direction(schema: Any, direction: Direction,
                  definitions: Mapping[str, Any] | None = None) -> Any:
    """A copy of ``schema`` without the properties not sent in ``direction`` (removed from
    ``properties`` and ``required``), at every level. ``definitions`` (the document's
    ``components.schemas``) resolve a ``$ref`` to say whether the schema it names is one."""
    skipped = _SKIPPED[direction]
    defs = definitions or {}

    def not_sent(sub: Any) -> bool:
        if not isinstance(sub, Mapping):
            return False
        if sub.get(skipped) is True:
            return True
        ref = sub.get("$ref")
        entries = sub.get("allOf")
        if not isinstance(ref, str) and isinstance(entries, list) and len(entries) == 1 and (
                isinstance(entries[0], Mapping)):
            ref = entries[0].get("$ref")  # pydantic's and 3.0's `allOf: [{$ref}]` wrapper
        if isinstance(ref, str):
            for prefix in _REF_PREFIXES:
                target = defs.get(ref.removeprefix(prefix)) if ref.startswith(prefix) else None
                if isinstance(target, Mapping) and target.get(skipped) is True:
                    return True
        return False

    def walk(node: Any, depth: int) -> Any:
        if not isinstance(node, Mapping) or depth > 256:
            return node
        out = dict(node)
        props = node.get("properties")
        if isinstance(props, Mapping):
            kept = {name: walk(sub, depth + 1) for name, sub in props.items()
                    if not not_sent(sub)}
            out["properties"] = kept
            wanted = node.get("required")
            if isinstance(wanted, list) and len(kept) < len(props):
                out["required"] = [n for n in wanted if n in kept or n not in props]
        for key in _CHILD:
            if key in node:
                out[key] = walk(node[key], depth + 1)
        for key in _LISTS:
            if isinstance(node.get(key), list):
                out[key] = [walk(sub, depth + 1) for sub in node[key]]
        for key in _MAPS:
            if isinstance(node.get(key), Mapping):
                out[key] = {name: walk(sub, depth + 1) for name, sub in node[key].items()}
        return out

    return walk(schema, 0)
