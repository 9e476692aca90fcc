"""Our payloads against the openai SDK's types (after shared/protocols/validate_samples.py)."""

from __future__ import annotations

import types
import typing
from typing import get_args, get_origin

import pydantic
from typing_extensions import get_type_hints, is_typeddict


# ---------------------------------------------------------------- TypedDict checker
def _strip(tp: object) -> object:
    """Remove Annotated/Required/NotRequired wrappers."""
    while True:
        origin = get_origin(tp)
        name = getattr(origin, "__name__", "") or getattr(tp, "_name", "") or ""
        if origin is typing.Annotated or name in ("Annotated", "Required", "NotRequired"):
            tp = get_args(tp)[0]
            continue
        return tp


def _wrapper(tp: object) -> str:
    """Name of the outermost Required/NotRequired wrapper, looking through Annotated."""
    while True:
        origin = get_origin(tp)
        name = getattr(origin, "__name__", "") or getattr(tp, "_name", "") or ""
        if name in ("Required", "NotRequired"):
            return name
        if origin is typing.Annotated or name == "Annotated":
            tp = get_args(tp)[0]
            continue
        return ""


def _required_keys(tp: type, hints: dict[str, object]) -> set[str]:
    # The SDK modules use `from __future__ import annotations`, so on Python 3.11
    # `__required_keys__` misses keys marked Required[...]; recompute from the hints.
    own = getattr(tp, "__annotations__", {})
    keys = set()
    for key, hint in hints.items():
        wrapper = _wrapper(hint)
        total = getattr(tp, "__total__", True)
        if wrapper == "Required" or (wrapper == "" and total and key in own):
            keys.add(key)
    return keys


def check_param(value: object, tp: object, path: str = "$") -> list[str]:
    tp = _strip(tp)
    if tp is object or tp is typing.Any:
        return []
    if tp is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{path}: expected string"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: expected boolean"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected integer"]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected number"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: expected object for {tp.__name__}"]
        hints = get_type_hints(tp, include_extras=True)
        required = _required_keys(tp, hints)
        errors = [f"{path}: missing required key {k!r} ({tp.__name__})"
                  for k in required if k not in value]
        errors += [f"{path}: unknown key {k!r} ({tp.__name__})" for k in value if k not in hints]
        for key, sub in value.items():
            if key in hints:
                errors += check_param(sub, hints[key], f"{path}.{key}")
        return errors
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is typing.Literal:
        return [] if value in args else [f"{path}: {value!r} not in {args}"]
    if origin in (typing.Union, types.UnionType):
        attempts = [check_param(value, alt, path) for alt in args]
        if any(not a for a in attempts):
            return []
        return min(attempts, key=len)
    name = getattr(origin, "__name__", "")
    if origin is dict or name in ("Dict", "Mapping"):
        if not isinstance(value, dict):
            return [f"{path}: expected object"]
        sub = args[1] if args else object
        return [e for k, v in value.items() for e in check_param(v, sub, f"{path}.{k}")]
    if origin in (list, tuple) or name in ("Iterable", "Sequence", "List", "SequenceNotStr"):
        if not isinstance(value, list):
            return [f"{path}: expected array"]
        sub = args[0] if args else object
        return [e for i, v in enumerate(value) for e in check_param(v, sub, f"{path}[{i}]")]
    raise TypeError(f"{path}: checker does not handle {tp!r}")


# ---------------------------------------------------------------- model walker
def undeclared_keys(obj: object, path: str = "$") -> list[str]:
    """SDK models allow extra keys; list every key a model did not declare."""
    found: list[str] = []
    if isinstance(obj, pydantic.BaseModel):
        for key in obj.model_extra or {}:
            found.append(f"{path}.{key}: not declared by {type(obj).__name__}")
        for name in type(obj).model_fields:
            found += undeclared_keys(getattr(obj, name), f"{path}.{name}")
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            found += undeclared_keys(item, f"{path}[{i}]")
    return found


def check_model(data: object, model: object) -> tuple[list[str], str]:
    adapter = pydantic.TypeAdapter(model)
    try:
        parsed = adapter.validate_python(data)
    except pydantic.ValidationError as err:
        return [str(err)], ""
    return undeclared_keys(parsed), type(parsed).__name__


