"""``normalize_root``: an arguments schema's root in the form every function-calling API takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolbridge.errors import SchemaConversionError

__all__ = ["normalize_root"]

_ANNOTATIONS = frozenset({"title", "description", "$schema", "$id", "$comment", "$defs",
                          "definitions", "examples", "default"})


def normalize_root(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with its root spelt as an explicit object schema, meaning the same.

    Arguments are a JSON object on every wire, and APIs reject roots that only imply one (a
    non-strict tool is sent as declared): a root ``$ref`` is replaced by the local definition it
    names (annotations beside it kept, ``$defs`` kept for other references); a root with
    ``properties`` but no ``type`` gets ``"type": "object"``; an object root without
    ``properties`` (the usual no-argument tool, ``{}`` or ``{"type": "object"}``) gets
    ``"properties": {}``. Anything else is returned as a copy, unchanged. ``schema`` itself is
    never modified.
    """
    if not isinstance(schema, Mapping):
        raise SchemaConversionError(f"a schema must be a JSON object, not "
                                    f"{type(schema).__name__}")
    root = dict(schema)
    for _ in range(8):  # a chain of definitions that only refer on; a loop stays as it is
        target = _local_definition(root, root.get("$ref"))
        if target is None:
            break
        merged = dict(target)
        for key, value in root.items():
            if key != "$ref" and (key in _ANNOTATIONS or key not in merged):
                merged[key] = value  # the root's annotations and definitions win
        root = merged
    kind = root.get("type")
    if kind is None and not set(root) - _ANNOTATIONS:
        root["type"] = kind = "object"  # `{}`: no constraint, and arguments are an object
    elif kind is None and "properties" in root and not {"items", "prefixItems"} & set(root):
        root["type"] = kind = "object"
    if kind == "object" and "properties" not in root:
        root["properties"] = {}
    return root


def _local_definition(root: Mapping[str, Any], ref: Any) -> Mapping[str, Any] | None:
    """The schema ``#/$defs/Name`` (or ``#/definitions/Name``) names in ``root``, if any."""
    if not isinstance(ref, str):
        return None
    for key in ("$defs", "definitions"):
        prefix = f"#/{key}/"
        defs = root.get(key)
        if ref.startswith(prefix) and isinstance(defs, Mapping):
            name = ref[len(prefix):].replace("~1", "/").replace("~0", "~")
            target = defs.get(name)
            if isinstance(target, Mapping):
                return target
    return None
