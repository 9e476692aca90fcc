"""Walker base class, loss records and the guards that keep every walk bounded."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolbridge.errors import SchemaConversionError

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "Conversion",
    "LossAction",
    "LossPolicy",
    "SchemaLoss",
    "SchemaTarget",
    "SchemaTransformer",
    "check_bounds",
    "escape",
    "short",
]

LossPolicy = Literal["allow", "describe", "error"]
"""What to do with a keyword a target cannot carry: drop it silently, describe it, or raise."""
SchemaTarget = Literal["openai-strict", "openapi-3.0", "ces"]
"""Schema dialects :func:`convert_schema` writes."""
LossAction = Literal["dropped", "described", "approximated"]

MAX_DEPTH = 128
"""Deepest JSON nesting (objects and arrays) a schema may have; deeper input is refused.

Real tool schemas stay far below this (OpenAI strict allows 10 levels); the limit keeps every
recursive walk well inside Python's recursion limit, so hostile input fails with a clear error.
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

    def __str__(self) -> str:
        return f"{self.pointer or '/'} {self.keyword}: {self.action} ({self.reason})"


@dataclass(frozen=True)
class Conversion:
    """A converted schema and every loss the conversion reported."""

    schema: dict[str, Any]
    losses: tuple[SchemaLoss, ...] = field(default=())

    @property
    def lossless(self) -> bool:
        """True when nothing was dropped, described or approximated."""
        return not self.losses


def escape(token: str) -> str:
    """Escape one JSON pointer token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def short(value: Any, limit: int = 60) -> str:
    """Compact JSON text of ``value`` for descriptions and messages, cut at ``limit``."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_bounds(schema: Any, *, max_depth: int = MAX_DEPTH, what: str = "schema") -> None:
    """Refuse input nested deeper than ``max_depth``, without recursing (explicit stack)."""
    stack: list[tuple[Any, int]] = [(schema, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > max_depth:
            raise SchemaConversionError(
                f"{what} is nested more than {max_depth} levels deep; no tool schema needs "
                "that many, so toolbridge refuses it (flatten the schema or use $defs/$ref)"
            )
        if isinstance(value, Mapping):
            stack.extend((child, depth + 1) for child in value.values()
                         if isinstance(child, (Mapping, list)))
        elif isinstance(value, list):
            stack.extend((child, depth + 1) for child in value
                         if isinstance(child, (Mapping, list)))


class SchemaTransformer:
    """Walk a normalized schema bottom-up; subclasses override :meth:`transform` per node.

    Children are transformed first, so ``transform`` sees converted sub-schemas. Losses are
    recorded with :meth:`lose`, which also applies the loss policy (``describe`` appends the
    constraint to the node's description). ``origins`` maps ``id(node)`` of the normalized
    input to its pointer in the caller's original schema, so losses point at what they wrote.
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
        self._seen: set[SchemaLoss] = set()
        self._nodes = 0

    # -- driving ---------------------------------------------------------------------------
    def walk(self) -> dict[str, Any]:
        """Return the converted schema; ``self.losses`` holds what was lost."""
        check_bounds(self.schema)
        return self.finish(self.walk_node(self.schema, "", 0, root=True))

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Hook for root-level rules after the walk."""
        return schema

    def walk_node(self, node: Any, pointer: str, depth: int, *, root: bool = False) -> Any:
        """Transform one node and its children; booleans and junk pass to ``transform_bool``."""
        if not isinstance(node, Mapping):
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
                out[key] = self.walk_node(value, here, depth + 1)
            elif key in SCHEMA_LIST and isinstance(value, list):
                out[key] = [self.walk_node(v, f"{here}/{i}", depth + 1)
                            for i, v in enumerate(value)]
            elif key in SCHEMA_MAP and isinstance(value, Mapping):
                out[key] = {k: self.walk_node(v, f"{here}/{escape(k)}", depth + 1)
                            for k, v in value.items()}
            else:
                out[key] = value
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
    ) -> None:
        """Record a loss; under policy ``describe`` append ``text`` to the description."""
        if self.policy == "describe" and text:
            described = schema.get("description")
            note = f"({text})"
            if not isinstance(described, str) or not described:
                schema["description"] = note
            elif note not in described:
                schema["description"] = f"{described} {note}"
            if action == "dropped":
                action = "described"
        loss = SchemaLoss(pointer, keyword, action, reason)
        if loss not in self._seen:  # an inlined definition reports once, not per use
            self._seen.add(loss)
            self.losses.append(loss)

    def drop(
        self, schema: dict[str, Any], pointer: str, keyword: str, reason: str, *,
        describe: bool = True,
    ) -> None:
        """Remove ``keyword`` from ``schema`` and record it (described as ``keyword: value``)."""
        value = schema.pop(keyword)
        text = f"{keyword}: {_plain(value)}" if describe else None
        self.lose(schema, pointer, keyword, reason, text=text)

    def check_policy(self) -> None:
        """Raise :class:`SchemaConversionError` listing every loss under policy ``error``."""
        if self.policy == "error" and self.losses:
            listed = "\n".join(f"  - {loss}" for loss in self.losses)
            raise SchemaConversionError(
                f"{self.target}: the schema cannot be converted without loss "
                f"({len(self.losses)} loss(es)):\n{listed}\n"
                "Use policy 'describe' or 'allow' to accept them, or change the schema.",
                self.losses,
            )


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else short(value)
