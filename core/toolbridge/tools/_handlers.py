"""Whether a hand-written definition's handler can take the arguments its schema allows."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ToolbridgeError
from ..model import ToolDefinition

__all__ = ["handler_mismatches"]

log = logging.getLogger("toolbridge")

_BY_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def handler_mismatches(
    definition: ToolDefinition, handler: Callable[..., Any], context_param: str | None,
) -> list[str]:
    """Why ``handler`` cannot be called with arguments ``definition`` accepts; one line each.

    The handler gets the arguments as keywords: it must take every property of the schema (or
    ``**kwargs``), and each of its parameters without a default must be a required property.
    ``context_param`` (the `ToolContext` parameter) is toolbridge's to fill. A handler whose
    signature cannot be read is accepted (logged): nothing can be checked.
    """
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError) as exc:
        log.info("tool %s: the signature of its handler %r cannot be read (%s); its arguments "
                 "are not checked against the schema", definition.name, handler, exc)
        return []
    properties, required = _schema_parameters(definition.parameters)
    params = {n: p for n, p in signature.parameters.items() if n != context_param}
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    problems = []
    for name in properties:
        param = params.get(name)
        if param is not None and param.kind is param.POSITIONAL_ONLY:
            problems.append(f"parameter {name!r}: the handler takes it positional-only; "
                            "tools are called by keyword")
        elif (param is None or param.kind not in _BY_KEYWORD) and not takes_any:
            problems.append(f"parameter {name!r}: the schema has it, the handler takes no such "
                            "argument (add it, or **kwargs)")
    for name, param in params.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or (
                param.default is not param.empty):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            if name not in properties:
                problems.append(f"parameter {name!r}: the handler requires it positional-only, "
                                "and tools are called by keyword")
        elif name not in properties:
            problems.append(f"parameter {name!r}: the handler requires it, the schema has no "
                            "such property")
        elif name not in required:
            problems.append(f"parameter {name!r}: the handler requires it, the schema makes it "
                            "optional (give it a default, or list it in 'required')")
    return problems


def _schema_parameters(schema: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The property names an arguments object may hold, and those it must hold.

    Properties of root ``allOf``/``anyOf``/``oneOf`` branches count (an argument of one of
    the shapes); only the root's and ``allOf``'s ``required`` are always required.
    """
    from ..schema import normalize_schema

    try:
        root = normalize_schema(schema)
    except ToolbridgeError:
        root = dict(schema)
    properties = set(_names(root.get("properties")))
    required = {n for n in root.get("required") or () if isinstance(n, str)}
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in root.get(key) or ():
            if isinstance(branch, Mapping):
                properties |= set(_names(branch.get("properties")))
                if key == "allOf":
                    required |= {n for n in branch.get("required") or () if isinstance(n, str)}
    return properties, required


def _names(value: Any) -> list[str]:
    return [n for n in value if isinstance(n, str)] if isinstance(value, Mapping) else []
