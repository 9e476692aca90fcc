"""Walker base class, loss records and the guards that keep every walk bounded."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolbridge._jsondata import json_problem
from toolbridge.errors import SchemaConversionError

__all__ = [
    "LOSS_POLICIES",
    "MAX_DEPTH",
    "MAX_NODES",
    "Conversion",
    "LossAction",
    "LossPolicy",
    "SchemaLoss",
    "SchemaTarget",
    "SchemaTransformer",
    "check_bounds",
    "child_path",
    "reference_paths",
    "escape",
    "mappings",
    "short",
]

LossPolicy = Literal["allow", "describe", "error", "lossless"]
"""What to do with what a target cannot carry exactly.

``allow``: drop it silently; ``describe``: write it into the node's description; ``error``:
describe, and raise if a loss is not enforced (nothing checks it on arrival); ``lossless``: raise
on any loss, enforced or not.
"""
LOSS_POLICIES: tuple[LossPolicy, ...] = ("allow", "describe", "error", "lossless")
SchemaTarget = Literal["openai-strict", "openapi-3.0", "ces", "gemini"]
"""Schema dialects :func:`convert_schema` writes."""
LossAction = Literal["dropped", "described", "approximated"]

MAX_DEPTH = 100
"""Deepest JSON nesting (objects and arrays) a schema may have; deeper input is refused.

Real tool schemas stay far below this (OpenAI strict allows 10 levels, a CES tool 98 nested
messages); the limit keeps every recursive walk, `jsonschema`'s included (about 8 frames per
level), well inside Python's recursion limit, so hostile input fails with a clear error.
"""
MAX_NODES = 200_000
"""Most schema nodes a conversion may produce (guards `$ref` inlining against blow-up)."""

# Children of a schema node: keyword -> how its value holds schemas.
SCHEMA_CHILD = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
                "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
                "additionalItems")
SCHEMA_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_MAP = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


@dataclass(frozen=True)
class SchemaLoss:
    """One thing a conversion could not carry exactly."""

    pointer: str
    """JSON pointer to the keyword's node in the schema given to the conversion."""
    keyword: str
    """The keyword affected, e.g. ``format``."""
    action: LossAction
    """``dropped``, ``described`` (moved into the description) or ``approximated``."""
    reason: str
    """Why, in a few words."""
    parameter: str = ""
    """The value affected, as the tool's user writes it: ``to.postcode``, ``items[].sku``,
    ``tags.*`` (a map's values); empty for the arguments object itself."""
    enforced: bool = False
    """True when no call that breaks the original schema can reach the handler through this
    loss: a `Toolbox` validates arguments against the schema you wrote before the handler runs
    (an annotation such as ``examples`` constrains nothing, so it counts as enforced).
    False when nothing checks it (a ``format``; a default the model cannot ask for)."""

    def __str__(self) -> str:
        where = f"{self.parameter} ({self.pointer or '/'})" if self.parameter else (
            self.pointer or "/")
        check = "checked on arrival" if self.enforced else "not enforced"
        return f"{where} {self.keyword}: {self.action} ({self.reason}; {check})"


@dataclass(frozen=True)
class Conversion:
    """A converted schema and every loss the conversion reported."""

    schema: dict[str, Any]
    losses: tuple[SchemaLoss, ...] = field(default=())
    wrapped: str | None = None
    """The property the schema became when the target needs an object root (OpenAI strict:
    ``"value"``): arguments then arrive as ``{"value": ...}``; `unwrap_arguments` undoes it."""

    @property
    def lossless(self) -> bool:
        """True when nothing was dropped, described or approximated."""
        return not self.losses


def escape(token: str) -> str:
    """Escape one JSON pointer token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def child_path(path: str, keyword: str, token: str | int | None = None) -> str:
    """The parameter path of the child of a node at ``path`` under ``keyword`` (``token``: the
    property name or position): ``to`` + ``properties``/``postcode`` -> ``to.postcode``.

    Keywords that constrain the same value (``anyOf`` branches, ``not``, ...) keep ``path``.
    """
    if keyword == "properties":
        return f"{path}.{token}" if path else str(token)
    if keyword == "items":
        return f"{path}[]"
    if keyword == "prefixItems":
        return f"{path}[{token}]"
    if keyword in ("additionalProperties", "patternProperties", "unevaluatedProperties"):
        return f"{path}.*" if path else "*"
    if keyword in ("contains", "unevaluatedItems", "additionalItems"):
        return f"{path}[]"
    return path


def short(value: Any, limit: int = 60) -> str:
    """Compact JSON text of ``value`` for descriptions and messages, cut at ``limit``."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_bounds(schema: Any, *, max_depth: int = MAX_DEPTH, what: str = "schema",
                 json_only: bool = True) -> None:
    """Refuse input nested deeper than ``max_depth`` (a cycle too), without recursing, and,
    with ``json_only``, input that is not JSON data (a key that is not text, NaN or an
    infinity, a value of another type), naming where. ``json_only=False`` checks depth only
    (a YAML document may key by numbers: ``200:``)."""
    found = json_problem(schema, max_depth, text_keys=json_only)
    if found is None:
        return
    if found.problem == "too deep":
        raise SchemaConversionError(
            f"{what} is nested more than {max_depth} levels deep; no tool schema needs "
            "that many, so toolbridge refuses it (flatten the schema or use $defs/$ref)"
        )
    raise SchemaConversionError(f"{what} is not JSON at {found.pointer or '/'}: "
                                f"{found.problem}")


def mappings(root: Any, children: Callable[[Mapping[str, Any]], Iterable[Any]] = Mapping.values
             ) -> Iterator[Mapping[str, Any]]:
    """Every object in ``root`` and below it (no recursion): lists are looked into, and each
    object's ``children`` (by default all its values) are walked after it."""
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, Mapping):
            yield node
            stack.extend(children(node))


def reference_paths(schema: Mapping[str, Any]) -> dict[str, str]:
    """For each root ``$defs`` entry, the parameter path of its first use (breadth first).

    A definition kept as ``$defs`` is converted once; its losses name the place the user
    reaches it first (``to.postcode`` for ``#/$defs/Address`` used at ``to``).
    """
    defs = schema.get("$defs")
    if not isinstance(defs, Mapping):
        return {}
    found: dict[str, str] = {}
    queue: deque[tuple[Any, str]] = deque([({k: v for k, v in schema.items() if k != "$defs"},
                                            "")])
    while queue:
        node, path = queue.popleft()
        if isinstance(node, list):
            queue.extend((item, path) for item in node)
            continue
        if not isinstance(node, Mapping):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/"):]
            if name not in found and name in defs:
                found[name] = path
                queue.append((defs[name], path))
        for key, value in node.items():
            if key in SCHEMA_CHILD:
                queue.append((value, child_path(path, key)))
            elif key == "prefixItems" and isinstance(value, list):
                queue.extend((v, child_path(path, key, i)) for i, v in enumerate(value))
            elif key in SCHEMA_LIST:
                queue.append((value, path))
            elif key in SCHEMA_MAP and key not in ("$defs", "definitions") and isinstance(
                    value, Mapping):
                queue.extend((v, child_path(path, key, k)) for k, v in value.items())
    return found


class SchemaTransformer:
    """Walk a normalized schema bottom-up; subclasses override :meth:`transform` per node.

    Children are transformed first, so ``transform`` sees converted sub-schemas. Losses are
    recorded with :meth:`lose`, which also applies the loss policy (``describe`` appends the
    constraint to the node's description). ``origins`` maps ``id(node)`` of the normalized
    input to its pointer in the caller's original schema, so losses point at what they wrote;
    :attr:`path` is the parameter path of the node being transformed (``to.postcode``).
    """

    target: str = ""

    def __init__(
        self,
        schema: Mapping[str, Any],
        *,
        policy: LossPolicy = "describe",
        origins: Mapping[int, str] | None = None,
    ) -> None:
        self.schema = schema
        self.policy = policy
        self.origins = origins or {}
        self.losses: list[SchemaLoss] = []
        self.path = ""
        """Parameter path of the node :meth:`transform` is converting."""
        self._seen: set[tuple[str, str, str, str]] = set()
        self._nodes = 0
        self._def_paths: dict[str, str] = {}

    # -- driving ---------------------------------------------------------------------------
    def walk(self) -> dict[str, Any]:
        """Return the converted schema; ``self.losses`` holds what was lost."""
        check_bounds(self.schema)
        self._def_paths = reference_paths(self.schema)
        converted = self.walk_node(self.schema, "", 0, root=True)
        self.path = ""
        return self.finish(converted)

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Hook for root-level rules after the walk."""
        return schema

    def walk_node(
        self, node: Any, pointer: str, depth: int, *, root: bool = False, path: str = "",
    ) -> Any:
        """Transform one node and its children; booleans and junk pass to ``transform_bool``."""
        if not isinstance(node, Mapping):
            self.path = path
            return self.transform_bool(node, pointer)
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise SchemaConversionError(
                f"{self.target}: schema has more than {MAX_NODES} nodes; refusing to convert it"
            )
        pointer = self.origins.get(id(node), pointer)
        out: dict[str, Any] = {}
        for key, value in node.items():
            here = f"{pointer}/{escape(key)}"
            if key in SCHEMA_CHILD and (isinstance(value, Mapping) or (
                    isinstance(value, bool) and key != "additionalProperties")):
                # a boolean `additionalProperties` stays for `transform`, which knows the object
                out[key] = self.walk_node(value, here, depth + 1, path=child_path(path, key))
            elif key in SCHEMA_LIST and isinstance(value, list):
                out[key] = [self.walk_node(v, f"{here}/{i}", depth + 1,
                                           path=child_path(path, key, i))
                            for i, v in enumerate(value)]
            elif key in SCHEMA_MAP and isinstance(value, Mapping):
                out[key] = {k: self.walk_node(
                    v, f"{here}/{escape(k)}", depth + 1,
                    path=self._def_paths.get(k, "") if key == "$defs" and root
                    else child_path(path, key, k)) for k, v in value.items()}
            else:
                out[key] = value
        self.path = path
        return self.transform(out, pointer, root=root)

    # -- per-dialect -----------------------------------------------------------------------
    def transform(self, schema: dict[str, Any], pointer: str, *, root: bool) -> dict[str, Any]:
        """Convert one node whose children are already converted. Override per dialect."""
        return schema

    def transform_bool(self, value: Any, pointer: str) -> Any:
        """Convert a boolean schema (``true`` = anything, ``false`` = nothing)."""
        return {} if value is True else {"not": {}}

    # -- losses ----------------------------------------------------------------------------
    def lose(
        self,
        schema: dict[str, Any],
        pointer: str,
        keyword: str,
        reason: str,
        *,
        action: LossAction = "dropped",
        text: str | None = None,
        enforced: bool = False,
        parameter: str | None = None,
    ) -> None:
        """Record a loss; unless the policy is ``allow``, append ``text`` to the description.

        ``enforced``: the original constraint is still checked when arguments arrive (see
        `SchemaLoss.enforced`). ``parameter`` defaults to :attr:`path`.
        """
        if self.policy != "allow" and text:
            described = schema.get("description")
            note = f"({text})"
            if not isinstance(described, str) or not described:
                schema["description"] = note
            elif note not in described:
                schema["description"] = f"{described} {note}"
            if action == "dropped":
                action = "described"
        key = (pointer, keyword, action, reason)
        if key not in self._seen:  # an inlined definition reports once, not per use
            self._seen.add(key)
            self.losses.append(SchemaLoss(pointer, keyword, action, reason,
                                          self.path if parameter is None else parameter,
                                          enforced))

    def drop(
        self, schema: dict[str, Any], pointer: str, keyword: str, reason: str, *,
        describe: bool = True, enforced: bool = False,
    ) -> None:
        """Remove ``keyword`` from ``schema`` and record it (described as ``keyword: value``)."""
        value = schema.pop(keyword)
        text = f"{keyword}: {_plain(value)}" if describe else None
        self.lose(schema, pointer, keyword, reason, text=text, enforced=enforced)

    def check_policy(self) -> None:
        """Raise :class:`SchemaConversionError` under policy ``error`` (a loss not enforced on
        arrival) or ``lossless`` (any loss), listing the losses that fail it."""
        failing = [loss for loss in self.losses if self.policy == "lossless" or (
            self.policy == "error" and not loss.enforced)]
        if not failing:
            return
        listed = "\n".join(f"  - {loss}" for loss in failing)
        what = "without loss" if self.policy == "lossless" else (
            "without a loss that nothing checks on arrival")
        hint = ("Use policy 'error' to accept losses toolbridge checks on arrival, 'describe' "
                "or 'allow' to accept every loss," if self.policy == "lossless" else
                "Use policy 'describe' or 'allow' to accept them,")
        raise SchemaConversionError(
            f"{self.target}: the schema cannot be converted {what} "
            f"({len(failing)} loss(es)):\n{listed}\n{hint} or change the schema.",
            failing,
        )


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else short(value)
