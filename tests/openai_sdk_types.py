"""Our payloads against the openai SDK's types, for both OpenAI adapters' tests.

The approach of shared/protocols/validate_samples.py: TypedDict params structurally, response
models with ``model_validate`` plus a walk for undeclared keys.
"""

from __future__ import annotations

import types
import typing
from typing import Any, get_args, get_origin

import pydantic
from typing_extensions import get_type_hints, is_typeddict


def _strip(tp: Any) -> Any:
    while True:
        origin = get_origin(tp)
        name = getattr(origin, "__name__", "") or getattr(tp, "_name", "") or ""
        if origin is typing.Annotated or name in ("Annotated", "Required", "NotRequired"):
            tp = get_args(tp)[0]
            continue
        return tp


def _wrapper(tp: Any) -> str:
    while True:
        origin = get_origin(tp)
        name = getattr(origin, "__name__", "") or getattr(tp, "_name", "") or ""
        if name in ("Required", "NotRequired"):
            return name
        if origin is typing.Annotated or name == "Annotated":
            tp = get_args(tp)[0]
            continue
        return ""


def _required_keys(tp: Any, hints: dict[str, Any]) -> set[str]:
    # SDK modules use `from __future__ import annotations`: on 3.11 `__required_keys__` misses
    # keys marked Required[...]; recompute them from the hints.
    own = getattr(tp, "__annotations__", {})
    return {k for k, h in hints.items()
            if _wrapper(h) == "Required"
            or (_wrapper(h) == "" and getattr(tp, "__total__", True) and k in own)}


def check_param(value: Any, tp: Any, path: str = "$") -> list[str]:
    """Errors of ``value`` against an SDK TypedDict param type (empty when it conforms)."""
    tp = _strip(tp)
    if tp is object or tp is typing.Any:
        return []
    if tp is type(None):
        return [] if value is None else [f"{path}: expected null"]
    for scalar, label in ((str, "string"), (bool, "boolean")):
        if tp is scalar:
            return [] if isinstance(value, scalar) else [f"{path}: expected {label}"]
    if tp in (int, float):
        ok = isinstance(value, (int, float) if tp is float else int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected number"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: expected object for {tp.__name__}"]
        hints = get_type_hints(tp, include_extras=True)
        errors = [f"{path}: missing required key {k!r} ({tp.__name__})"
                  for k in _required_keys(tp, hints) if k not in value]
        errors += [f"{path}: unknown key {k!r} ({tp.__name__})" for k in value if k not in hints]
        for key, sub in value.items():
            if key in hints:
                errors += check_param(sub, hints[key], f"{path}.{key}")
        return errors
    origin, args = get_origin(tp), get_args(tp)
    if origin is typing.Literal:
        return [] if value in args else [f"{path}: {value!r} not in {args}"]
    if origin in (typing.Union, types.UnionType):
        attempts = [check_param(value, alt, path) for alt in args]
        return [] if any(not a for a in attempts) else min(attempts, key=len)
    name = getattr(origin, "__name__", "")
    if origin is dict or name in ("Dict", "Mapping"):
        if not isinstance(value, dict):
            return [f"{path}: expected object"]
        return [e for k, v in value.items()
                for e in check_param(v, args[1] if args else object, f"{path}.{k}")]
    if origin in (list, tuple) or name in ("Iterable", "Sequence", "List", "SequenceNotStr"):
        if not isinstance(value, list):
            return [f"{path}: expected array"]
        return [e for i, v in enumerate(value)
                for e in check_param(v, args[0] if args else object, f"{path}[{i}]")]
    raise TypeError(f"{path}: checker does not handle {tp!r}")


def undeclared_keys(obj: Any, path: str = "$") -> list[str]:
    """Keys an SDK model accepted silently without declaring them."""
    found: list[str] = []
    if isinstance(obj, pydantic.BaseModel):
        name = type(obj).__name__
        found += [f"{path}.{k}: not declared by {name}" for k in obj.model_extra or {}]
        for name in type(obj).model_fields:
            found += undeclared_keys(getattr(obj, name), f"{path}.{name}")
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            found += undeclared_keys(item, f"{path}[{i}]")
    return found


def parse_model(data: Any, model: Any) -> tuple[list[str], Any]:
    """Errors of response ``data`` against an SDK model or union, and what it parsed as."""
    try:
        parsed = pydantic.TypeAdapter(model).validate_python(data)
    except pydantic.ValidationError as err:
        return [str(err)], None
    return undeclared_keys(parsed), parsed


def check_model(data: Any, model: Any) -> list[str]:
    """Errors of response ``data`` against an SDK model or union (strict parse + extras)."""
    return parse_model(data, model)[0]


def check_events_body(body: Any) -> list[str]:
    """Errors of a ``POST .../events`` body against ``EventCreateParams``."""
    from openai.types.beta.agent_session_input_param import AgentSessionInputParam

    errors = [f"$: unknown key {k!r}" for k in body if k != "events"]
    return errors + check_param(body["events"], list[AgentSessionInputParam], "$.events")


def check_tools(tools: Any) -> list[str]:
    """Errors of an ``agent.tools`` list against ``AgentToolParam``."""
    from openai.types.beta.agent_tool_param import AgentToolParam

    return check_param(tools, list[AgentToolParam], "$.tools")
