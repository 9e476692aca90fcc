"""Anthropic strict tool schemas (``strict: true`` on a Messages or Managed Agents tool).

Rules: Anthropic's "Structured outputs" guide, "JSON Schema limitations", and the SDK's own
rewrite, ``transform_schema`` (anthropic 2.15 ``lib/_parse/_transform.py``), which the tests use
as the oracle: what it leaves unchanged is the subset. A node carries ``type`` *or* a union
(``anyOf`` / ``allOf``) *or* literals (``enum`` / ``const``), never two of them (the SDK keeps
one and drops the rest); every object gets ``additionalProperties: false``; ``required`` stays
as declared (unlike OpenAI, optional properties stay optional); recursion is not supported, so
it is unrolled two levels and then cut. See ``docs/protocols/anthropic-messages.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolbridge.schema._common import TableTransformer, certain_type, merge_all_of
from toolbridge.schema._openai_strict import ROOT_PROPERTY
from toolbridge.schema._openapi30 import CUT, UNROLL
from toolbridge.schema._walk import SchemaTarget, short

__all__ = ["ANTHROPIC_FORMATS", "AnthropicStrictSchema"]

ANTHROPIC_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname",
                               "uri", "ipv4", "ipv6", "uuid"})
"""String formats strict mode supports (the SDK's ``SupportedStringFormats``)."""
_ANNOTATIONS = ("title", "description")
_SCALARS = ("string", "number", "boolean", "null")
_BY_TYPE = {"object": frozenset({"properties", "required", "additionalProperties"}),
            "array": frozenset({"items", "minItems"}), "string": frozenset({"format"})}
_TYPED_KEYWORDS = frozenset().union(*_BY_TYPE.values())
_COMPATIBLE = {("integer", "number"): "integer", ("number", "integer"): "integer"}


def _primitive(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _fits(value: Any, kind: str) -> bool:
    """Whether a literal ``value`` is of JSON type ``kind``."""
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float))
    return (kind == "string" and isinstance(value, str)) or (kind == "null" and value is None)


class AnthropicStrictSchema(TableTransformer):
    """JSON Schema 2020-12 (recursion already unrolled) → Anthropic strict ``input_schema``."""

    target = "anthropic-strict"
    dialect: SchemaTarget = "anthropic-strict"
    _root = False

    def walk_node(self, node: Any, pointer: str, depth: int, *, root: bool = False,
                  path: str = "") -> Any:
        self._root = root  # for `prepare`, which runs first
        return super().walk_node(node, pointer, depth, root=root, path=path)

    def prepare(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        node = super().prepare(node)
        if not self._root:  # the root stays one object (see `transform`)
            node = self._typed_branches(node)
        properties = node.get("properties")
        if not isinstance(properties, Mapping):
            return node
        # An optional property's default is kept faithfully, not lost: strict mode leaves
        # the property optional, so the handler's default applies when the model leaves it
        # out; the description tells the model what that means.
        required = set(node.get("required") or ())
        moved = {}
        for name, sub in properties.items():
            if name in required or not isinstance(sub, Mapping) or "default" not in sub:
                continue
            out = {k: v for k, v in sub.items() if k != "default"}
            note = f"(default: {short(sub['default'])})"
            out["description"] = f"{out['description']} {note}" if isinstance(
                out.get("description"), str) and out["description"] else note
            if id(sub) in self.origins:
                self.origins = {**self.origins, id(out): self.origins[id(sub)]}
            moved[name] = out
        if not moved:
            return node
        return {**node, "properties": {**properties, **moved}}

    def _typed_branches(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        """``type: T`` beside ``anyOf``/``oneOf`` copied into each untyped branch before the
        branches are converted (exact: T and (A or B) is (T and A) or (T and B)), so a
        branch such as ``{"format": "email"}`` is converted as the string it constrains; an
        object's ``properties``, ``required`` and ``additionalProperties`` go into each
        object branch the same way (``{"required": ["a"]}`` alone would be closed empty)."""
        kind = node.get("type")
        if not isinstance(kind, str):
            return node
        out = dict(node)
        shared = {k: node[k] for k in _BY_TYPE["object"] if k in node} if kind == "object" else {}
        for union in ("anyOf", "oneOf"):
            branches = node.get(union)
            if not isinstance(branches, list):
                continue
            typed = [self._typed(b, kind) for b in branches]
            merged = [_with_object(b, shared) for b in typed] if shared else typed
            if all(m is not None for m in merged):
                typed = [m for m in merged if m is not None]
                for key in shared:
                    out.pop(key, None)
                shared = {}  # moved into this union's branches
            out[union] = typed
        return out

    def _typed(self, branch: Any, kind: str) -> Any:
        if not isinstance(branch, Mapping) or "type" in branch:
            return branch
        copy = {**branch, "type": kind}
        if id(branch) in self.origins:
            self.origins = {**self.origins, id(copy): self.origins[id(branch)]}
        return copy

    def transform_bool(self, value: Any, pointer: str) -> Any:
        out: dict[str, Any] = {}
        if value is not True:
            self.lose(out, pointer, "false", "strict mode has no 'nothing' schema; became an "
                      "unconstrained schema", action="approximated", enforced=True)
        return self.transform(out, pointer, root=False)

    def transform(self, schema: dict[str, Any], pointer: str, *, root: bool) -> dict[str, Any]:
        if CUT in schema:
            name = schema.pop(CUT)
            self.lose(schema, pointer, "$ref", f"recursive reference to {name!r} cut after "
                      f"{UNROLL} levels: strict mode does not support recursive schemas",
                      action="approximated", text=f"recursive: {name}", enforced=True)
        self.apply_table(schema, pointer)
        if "default" in schema:
            # Strict mode has no defaults; an optional property's moved into its description
            # (`prepare`), one anywhere else never applies.
            self.drop(schema, pointer, "default", "strict mode has no defaults")
        nullable = schema.pop("nullable", False) is True
        if "oneOf" in schema:
            branches = schema.pop("oneOf")
            if "anyOf" in schema:
                self.lose(schema, pointer, "oneOf", "node has both anyOf and oneOf",
                          text=f"oneOf: {short(branches)}", enforced=True)
            else:
                schema["anyOf"] = branches
                self.lose(schema, pointer, "oneOf", "rewritten as anyOf", action="approximated",
                          enforced=True)
        if "allOf" in schema and not merge_all_of(schema):
            self.drop(schema, pointer, "allOf", "the entries cannot be merged exactly into one "
                      "schema strict mode accepts", enforced=True)
        if isinstance(schema.get("type"), list):
            schema, had_null = self.split(schema, pointer)
            nullable = nullable or had_null
        self._literals(schema, pointer)
        fmt = schema.get("format")
        if fmt is not None and fmt not in ANTHROPIC_FORMATS:
            self.drop(schema, pointer, "format", "strict mode supports only the formats "
                      f"{', '.join(sorted(ANTHROPIC_FORMATS))}")
        least = schema.get("minItems")
        if least is not None and least not in (0, 1):
            self.drop(schema, pointer, "minItems", "strict mode supports minItems 0 and 1 only",
                      enforced=True)
        if "type" not in schema and not {"anyOf", "enum", "const"} & set(schema):
            kind = certain_type(schema) or ("object" if root else None)
            if kind is not None:
                schema["type"] = kind
            elif not root:
                schema["anyOf"] = [{"type": t} for t in _SCALARS]
                self.lose(schema, pointer, "type", "strict mode needs a type; objects and "
                          "arrays are no longer accepted here", action="approximated",
                          enforced=True)
        if root and schema.get("type") == "object" and "anyOf" in schema:
            # A tool's input_schema is an object, and strict mode keeps one of `type` and
            # `anyOf`: the alternatives are left to the check on arrival.
            self.drop(schema, pointer, "anyOf", "a tool's input_schema is one object schema; "
                      "its alternatives are checked on arrival", enforced=True)
        if "anyOf" in schema and "type" in schema:
            schema = self._type_into_branches(schema, pointer)
        self._other_types(schema, pointer)
        if schema.get("type") == "object":
            self._object(schema, pointer)
        if nullable:
            schema = _with_null(schema)
        return schema

    def _literals(self, schema: dict[str, Any], pointer: str) -> None:
        """``enum`` / ``const`` of primitives, without the ``type`` they imply."""
        if "enum" in schema:
            values = schema["enum"]
            if not all(_primitive(v) for v in values):
                self.drop(schema, pointer, "enum", "strict mode takes enums of strings, "
                          "numbers, booleans and null only", enforced=True)
        if "const" in schema and not _primitive(schema["const"]):
            self.drop(schema, pointer, "const", "strict mode takes a string, number, boolean "
                      "or null const only", enforced=True)
        kind = schema.get("type")
        if isinstance(kind, str) and {"enum", "const"} & set(schema):
            # The SDK keeps the literals and drops the type: the same values when each fits.
            if "const" in schema and not _fits(schema["const"], kind):
                schema["enum"] = []
                del schema["const"]
            if "enum" in schema:
                kept = [v for v in schema["enum"] if _fits(v, kind)]
                if kept and len(kept) < len(schema["enum"]):
                    self.lose(schema, pointer, "enum", f"values that are not {kind} can never "
                              "be valid; left out", action="approximated", enforced=True)
                schema["enum"] = kept
            if schema.get("enum") != []:
                del schema["type"]
        if schema.get("enum") == []:
            # No value is valid, and strict mode has no empty enum: what is left accepts more
            # than nothing, and nothing invalid reaches the handler (checked on arrival).
            del schema["enum"]
            self.lose(schema, pointer, "enum", "no value is valid and strict mode has no empty "
                      "enum", action="approximated", enforced=True)

    def _other_types(self, schema: dict[str, Any], pointer: str) -> None:
        """Keywords of another type than the node's: constraints of nothing (JSON Schema
        applies ``properties`` to objects only), left out; on a node without a type, where
        strict mode cannot hold them, lost."""
        kind = schema.get("type")
        own = _BY_TYPE.get(kind, frozenset()) if isinstance(kind, str) else frozenset()
        for key in [k for k in schema if k in _TYPED_KEYWORDS and k not in own]:
            if isinstance(kind, str):
                del schema[key]
            else:
                self.drop(schema, pointer, key, "strict mode holds it only beside its type",
                          enforced=True)

    def _object(self, schema: dict[str, Any], pointer: str) -> None:
        extra = schema.get("additionalProperties")
        if extra is not False and extra is not None:
            # Strict mode needs `additionalProperties: false`: the model can then send less
            # than the schema allows, never more, and arguments are checked on arrival.
            self.lose(schema, pointer, "additionalProperties",
                      "strict mode needs additionalProperties false; the object accepts "
                      "only its declared properties",
                      text="additionalProperties: " + short(extra), enforced=True)
        schema["additionalProperties"] = False
        schema.setdefault("properties", {})

    def _type_into_branches(self, schema: dict[str, Any], pointer: str) -> dict[str, Any]:
        """``type: T, anyOf: [A, B]`` as ``anyOf: [T and A, T and B]`` (exact): the SDK keeps only
        one of the two keywords. A branch of another type can never match: left out."""
        kind = schema.pop("type")
        branches = []
        for branch in schema["anyOf"]:
            theirs = branch.get("type")
            if isinstance(theirs, str):
                if theirs == kind or (kind, theirs) in _COMPATIBLE:
                    branches.append({**branch, "type": _COMPATIBLE.get((kind, theirs), kind)})
            elif "enum" in branch or "const" in branch:
                values = branch.get("enum", [branch.get("const")])
                if any(_fits(v, kind) for v in values):
                    branches.append(branch)
            else:
                branches.append(branch)
        if not branches:
            self.lose(schema, pointer, "anyOf", f"no branch is of type {kind}: no value is "
                      "valid", action="approximated", enforced=True)
            branches = [{"type": kind}]
        if len(branches) == 1:
            del schema["anyOf"]
            return {**branches[0], **{k: v for k, v in schema.items() if k in _ANNOTATIONS}}
        schema["anyOf"] = branches
        return schema

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        if schema.get("type") == "object":
            return schema
        # A tool's input_schema is an object: any other root becomes the one property
        # ROOT_PROPERTY, taken out again on arrival (`unwrap_arguments`), as for OpenAI.
        self.wrapped = True
        wrapped: dict[str, Any] = {"type": "object", "properties": {ROOT_PROPERTY: schema},
                                   "required": [ROOT_PROPERTY], "additionalProperties": False}
        self.lose(wrapped, "", "type", "a tool's input_schema is an object; the schema became "
                  f"the property {ROOT_PROPERTY!r} (unwrapped again on arrival)",
                  action="approximated", enforced=True, parameter="")
        return wrapped


def _with_object(branch: Any, shared: Mapping[str, Any]) -> Any:
    """An object ``branch`` with its parent's ``shared`` object keywords; None when they
    clash (then nothing moves); another type's branch as it is (it never matches)."""
    if not isinstance(branch, Mapping) or branch.get("type") != "object":
        return branch
    out = dict(branch)
    for key, value in shared.items():
        mine = out.get(key)
        if mine is None:
            out[key] = value
        elif key == "required" and isinstance(mine, list) and isinstance(value, list):
            out[key] = list(dict.fromkeys([*value, *mine]))
        elif key == "properties" and isinstance(mine, Mapping) and isinstance(value, Mapping):
            if any(mine[k] != value[k] for k in set(mine) & set(value)):
                return None
            out[key] = {**value, **mine}
        elif mine != value:
            return None
    return out


def _with_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` also accepting ``null``: a ``null`` branch of its ``anyOf``."""
    if schema.get("type") == "null" or ("enum" in schema and None in schema["enum"]):
        return schema
    if "anyOf" in schema and not {"type", "enum", "const"} & set(schema):
        if not any(b.get("type") == "null" for b in schema["anyOf"]):
            schema["anyOf"] = [*schema["anyOf"], {"type": "null"}]
        return schema
    notes = {k: schema.pop(k) for k in _ANNOTATIONS if k in schema}
    return {"anyOf": [schema, {"type": "null"}], **notes}
