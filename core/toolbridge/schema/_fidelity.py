"""Argument fidelity: restore the types the neutral schema declared.

Dialects deliver arguments differently from how the schema declared them: CES Structs make every
number a double and every enum value a string, Assistants sends a JSON string, OpenAI strict sends
``null`` for an optional property it was forced to include. :func:`compile_decoder` turns a schema
into a plan that only visits the places where something can change, and caches it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolbridge.errors import ArgumentError, ToolbridgeError
from toolbridge.schema._ces import ces_enum_value
from toolbridge.schema._normalize import normalize_schema
from toolbridge.schema._openai_strict import allows_null
from toolbridge.schema._walk import SchemaTarget

__all__ = ["compile_decoder", "decode_arguments", "unwrap_arguments"]

Step = Callable[[Any, str], Any]
"""Decode one value found at a JSON pointer; returns the value itself when nothing changes."""

_CACHE: dict[int, tuple[Mapping[str, Any], Callable[[Any], Any]]] = {}
_CACHE_SIZE = 512
_WRAPPED: dict[tuple[int, str], tuple[Mapping[str, Any], str | None]] = {}
MAX_RECURSION = 200
"""Deepest nesting of one recursive type that :func:`decode_arguments` accepts."""
_KINDS = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def decode_arguments(schema: Mapping[str, Any], arguments: Any) -> Any:
    """Decode ``arguments`` (an object, or its JSON text) as declared by ``schema``.

    Integral doubles become ints where the schema says integer (a fraction there raises
    :class:`~toolbridge.errors.ArgumentError` with the value's JSON pointer), stringified enum
    values get their declared type back, and ``null`` for an optional non-nullable property is
    removed so the neutral default applies.
    """
    return compile_decoder(schema)(arguments)


def unwrap_arguments(schema: Mapping[str, Any], target: SchemaTarget, arguments: Any) -> Any:
    """Arguments as ``schema`` declares them, from a backend that got its ``target`` form.

    When the target needs an object root and the conversion wrapped the schema as one property
    (OpenAI strict: ``{"value": ...}``, see `Conversion.wrapped`), the arguments arrive as
    ``{"value": {...}}``: this returns the inner object. Unchanged when nothing was wrapped;
    :class:`~toolbridge.errors.ArgumentError` when wrapped arguments do not have that shape.
    """
    hit = _WRAPPED.get((id(schema), target))
    if hit is None or hit[0] is not schema:
        from toolbridge.schema._convert import convert_schema

        try:
            key = convert_schema(schema, target, policy="allow").wrapped
        except ToolbridgeError:
            key = None  # a schema that cannot be converted was never sent wrapped
        hit = _WRAPPED[(id(schema), target)] = (schema, key)
        if len(_WRAPPED) > _CACHE_SIZE:
            _WRAPPED.pop(next(iter(_WRAPPED)))
    key = hit[1]
    if key is None:
        return arguments
    if isinstance(arguments, Mapping) and set(arguments) == {key}:
        inner = arguments[key]
        if isinstance(inner, dict):
            return inner
        raise ArgumentError(f"expected an object, got {type(inner).__name__}", path=f"/{key}")
    raise ArgumentError(f"expected the arguments wrapped as {{{key!r}: {{...}}}} (the {target} "
                        "form of this tool's schema)", path="")


def compile_decoder(schema: Mapping[str, Any]) -> Callable[[Any], Any]:
    """Return a cached decoder for ``schema`` (treated as immutable once compiled).

    Dialects call it for every call they decode: a hit is one dictionary lookup (the
    cache forgets the longest kept schema first, not the least used: no bookkeeping per hit).
    """
    hit = _CACHE.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    decoder = _build(schema)
    _CACHE[id(schema)] = (schema, decoder)
    if len(_CACHE) > _CACHE_SIZE:
        del _CACHE[next(iter(_CACHE))]
    return decoder


def _build(schema: Mapping[str, Any]) -> Callable[[Any], Any]:
    neutral = normalize_schema(schema)
    step = _Compiler(neutral).node(neutral)
    wants_object = neutral.get("type") in ("object", None)

    def decode(arguments: Any) -> Any:
        if isinstance(arguments, (str, bytes)) and wants_object:
            # Assistants and Chat Completions deliver arguments as JSON text.
            text = arguments.strip() or "{}"
            try:
                arguments = json.loads(text)
            except ValueError as exc:
                raise ArgumentError(f"arguments are not valid JSON ({exc})", path="") from exc
        return arguments if step is None else step(arguments, "")

    return decode


@dataclass
class _Branch:
    kinds: frozenset[type]
    step: Step | None
    integer: bool = False
    enum_strings: frozenset[str] = field(default_factory=frozenset)
    schema: Any = None
    accepts: Callable[[Any], bool] | None = None
    """The branch's own check (compiled on first use): picks the branch a value belongs to."""


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.defs: dict[str, Any] = root.get("$defs", {})
        self.done: dict[str, Step | None] = {}
        self.cells: dict[str, list[Step | None]] = {}
        self._validator: Any = None

    def ref(self, ref: str) -> Step | None:
        name = "#" if ref == "#" else ref.removeprefix("#/$defs/")
        if name in self.done:
            return self.done[name]
        if name in self.cells:  # recursion: bind late
            cell = self.cells[name]

            depth = [0]

            def late(value: Any, ptr: str) -> Any:
                inner = cell[0]
                if inner is None:
                    return value
                # Recursive schemas take arbitrarily deep values: bound the recursion.
                depth[0] += 1
                try:
                    if depth[0] > MAX_RECURSION:
                        raise ArgumentError(f"arguments nest more than {MAX_RECURSION} levels "
                                            "of a recursive type", path=ptr)
                    return inner(value, ptr)
                finally:
                    depth[0] -= 1

            return late
        cell = self.cells[name] = [None]
        target = self.root if name == "#" else self.defs.get(name, {})
        step = self.node(target)
        cell[0] = step
        self.done[name] = step
        return step

    def resolve(self, schema: Any) -> Any:
        """The schema a `$ref` points at (for syntactic checks), one level only."""
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            return self.root if ref == "#" else self.defs.get(ref.removeprefix("#/$defs/"), {})
        return schema

    def node(self, schema: Any) -> Step | None:
        if not isinstance(schema, dict):
            return None
        if isinstance(schema.get("$ref"), str):
            return self.ref(schema["$ref"])
        steps: list[Step] = []
        kinds = _types(schema)
        if "integer" in kinds and "number" not in kinds:
            steps.append(_integer)
        enum_map = _enum_map(schema)
        if enum_map:
            steps.append(_enum_step(enum_map))
        obj = self.object(schema)
        if obj is not None:
            steps.append(obj)
        arr = self.array(schema)
        if arr is not None:
            steps.append(arr)
        for key in ("anyOf", "oneOf"):
            union = self.union(schema.get(key))
            if union is not None:
                steps.append(union)
        for sub in schema.get("allOf", ()):
            sub_step = self.node(sub)
            if sub_step is not None:
                steps.append(sub_step)
        if not steps:
            return None
        if len(steps) == 1:
            return steps[0]

        def chain(value: Any, ptr: str) -> Any:
            for step in steps:
                value = step(value, ptr)
            return value

        return chain

    def object(self, schema: dict[str, Any]) -> Step | None:
        props: dict[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required", ()))
        plans = {name: (step, "/" + _esc(name)) for name, sub in props.items()
                 if (step := self.node(sub)) is not None}
        # OpenAI strict made optional properties nullable; null there means "absent".
        absent = frozenset(name for name, sub in props.items()
                           if name not in required and not allows_null(self.resolve(sub)))
        extra = self.node(schema.get("additionalProperties"))
        if not plans and not absent and extra is None:
            return None

        def decode_object(value: Any, ptr: str) -> Any:
            if not isinstance(value, dict):
                return value
            out: dict[str, Any] | None = None
            for name in absent:
                if name in value and value[name] is None:
                    out = dict(value) if out is None else out
                    del out[name]
            for name, (step, token) in plans.items():
                item = value.get(name)
                if item is not None:
                    new = step(item, ptr + token)
                    if new is not item:
                        out = dict(value) if out is None else out
                        out[name] = new
            if extra is not None:
                for name, item in value.items():
                    if name not in props and item is not None:
                        new = extra(item, f"{ptr}/{_esc(name)}")
                        if new is not item:
                            out = dict(value) if out is None else out
                            out[name] = new
            return value if out is None else out

        return decode_object

    def array(self, schema: dict[str, Any]) -> Step | None:
        head = [self.node(s) for s in schema.get("prefixItems", ())]
        rest = self.node(schema.get("items"))
        if rest is None and not any(head):
            return None

        def decode_array(value: Any, ptr: str) -> Any:
            if not isinstance(value, list):
                return value
            out: list[Any] | None = None
            for i, item in enumerate(value):
                step = head[i] if i < len(head) else rest
                if step is None or item is None:
                    continue
                new = step(item, f"{ptr}/{i}")
                if new is not item:
                    out = list(value) if out is None else out
                    out[i] = new
            return value if out is None else out

        return decode_array

    def union(self, branches: Any) -> Step | None:
        if not isinstance(branches, list):
            return None
        compiled = [self.branch(b) for b in branches]
        if not any(b.step for b in compiled):
            return None
        # A double becomes an int only if no branch could take it as a number.
        number_ok = any(float in b.kinds and not b.integer for b in compiled)
        strings_ok = any(str in b.kinds and not b.enum_strings for b in compiled)

        def decode_union(value: Any, ptr: str) -> Any:
            kind = type(value)
            if kind is float and number_ok:
                return value
            if kind is str and strings_ok:
                return value
            candidates = [b for b in compiled if kind in b.kinds and not (
                kind is str and value not in b.enum_strings)]
            if len(candidates) > 1:
                # Decode as each branch in turn; the first whose own schema then accepts the
                # value is the branch it belongs to (a CES double in the second object branch,
                # "2" for a `Literal[1, 2, 3]` field of the second model of a tagged union).
                for branch in candidates:
                    try:
                        decoded = value if branch.step is None else branch.step(value, ptr)
                    except ArgumentError:
                        continue
                    if self.accepts(branch, decoded):
                        return decoded
            error: ArgumentError | None = None
            for branch in candidates:  # none fits: the first decoding that works; check reports
                if branch.step is None:
                    continue
                try:
                    return branch.step(value, ptr)
                except ArgumentError as exc:
                    error = error or exc
            if error is not None:
                raise error
            return value

        return decode_union

    def accepts(self, branch: _Branch, value: Any) -> bool:
        """Whether ``value`` is valid for ``branch``'s schema (references resolve in the root)."""
        if branch.accepts is None:
            import jsonschema  # loaded on first use: only unions of several candidates need it

            if self._validator is None:
                cls = jsonschema.validators.validator_for(
                    self.root, default=jsonschema.Draft202012Validator)
                self._validator = cls(self.root)
            branch.accepts = self._validator.evolve(schema=branch.schema).is_valid
        return branch.accepts(value)

    def branch(self, schema: Any) -> _Branch:
        target = self.resolve(schema)
        kinds = _types(target) if isinstance(target, dict) else set()
        py: set[type] = set()
        for kind in kinds or ("object", "array", "string", "number", "boolean", "null"):
            if kind in ("integer", "number"):
                py.update((int, float))
            elif kind in _KINDS:
                py.add(_KINDS[kind])
        enum = _enum_map(target) if isinstance(target, dict) else {}
        if enum:
            py.add(str)  # CES sends these enum values as strings
        integer = "integer" in kinds and "number" not in kinds
        return _Branch(frozenset(py), self.node(schema), integer, frozenset(enum), schema)


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    kinds: set[str] = set()
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list):
        for value in values:
            kinds.add("integer" if isinstance(value, int) and not isinstance(value, bool)
                      else _json_kind(value))
        if "integer" in kinds and "number" in kinds:
            kinds.discard("integer")
    return kinds


def _json_kind(value: Any) -> str:
    for name, kind in (("boolean", bool), ("string", str), ("number", float), ("object", dict),
                       ("array", list), ("null", type(None))):
        if isinstance(value, kind):
            return name
    return "number"


def _enum_map(schema: dict[str, Any]) -> dict[str, Any]:
    """Stringified enum values (as CES sends them) → the declared value."""
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if not isinstance(values, list):
        return {}
    strings = {v for v in values if isinstance(v, str)}
    return {text: v for v in values if v is not None and not isinstance(v, str)
            if (text := ces_enum_value(v)) not in strings}


def _enum_step(mapping: dict[str, Any]) -> Step:
    def decode_enum(value: Any, ptr: str) -> Any:
        if type(value) is str:
            return mapping.get(value, value)
        return value

    return decode_enum


def _integer(value: Any, ptr: str) -> Any:
    if type(value) is float:
        if value.is_integer():
            return int(value)
        raise ArgumentError(f"expected an integer, got {value!r}", path=ptr)
    return value


def _esc(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")
