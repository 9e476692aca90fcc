"""OpenAI-style function tools (``{"type": "function", ...}``) read back into definitions."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import WireFormatError
from ..model import ToolDefinition

__all__ = ["read_function_tool"]

_CHECKS: dict[str, tuple[type, str]] = {
    "description": (str, "a string"),
    "parameters": (Mapping, "a JSON Schema object"),
    "strict": (bool, "a boolean"),
    "defer_loading": (bool, "a boolean"),
    "output_schema": (Mapping, "a JSON Schema object"),
}
_ALWAYS = ("description", "parameters")


def read_function_tool(
    tool: Mapping[str, Any], where: str, dialect: str, *, nested: bool = False,
    reads: Collection[str] = ("strict",),
    extras: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
) -> ToolDefinition:
    """The neutral definition of one OpenAI-style function tool.

    ``tool`` is flat, ``{"type": "function", "name", "description", "parameters", ...}``
    (Responses, Agents sessions), or with ``nested`` ``{"type": "function", "function":
    {...}}`` (Chat Completions, Assistants). The function's ``name`` (a non-empty string),
    ``description`` (a string; missing or null reads as ``""``) and ``parameters`` (a JSON
    Schema object) are always read; of ``strict``, ``defer_loading`` and ``output_schema`` (as
    ``returns``), those the dialect ``reads``. ``extras(function)``, when not empty, becomes
    ``vendor_extras[dialect]`` (e.g. the original, so that it renders back unchanged).

    A field of the wrong type, or a definition `toolbridge.ToolDefinition` refuses, raises
    `toolbridge.WireFormatError` naming the field from ``where`` (``tools[0].function.name``).
    """
    function: Any = tool
    if nested:
        where, function = f"{where}.function", tool.get("function")
        if not isinstance(function, Mapping):
            raise WireFormatError(dialect, where, "missing or not an object", tool)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise WireFormatError(dialect, f"{where}.name", "missing or not a string", tool)
    for field in (*_ALWAYS, *reads):
        kind, what = _CHECKS[field]
        value = function.get(field)
        if value is not None and not isinstance(value, kind):
            raise WireFormatError(dialect, f"{where}.{field}", f"not {what}", tool)
    fields: dict[str, Any] = {"name": name, "description": function.get("description") or ""}
    if "strict" in reads:
        fields["strict"] = function.get("strict")
    if "defer_loading" in reads:
        fields["defer_loading"] = bool(function.get("defer_loading", False))
    if function.get("parameters") is not None:
        fields["parameters"] = dict(function["parameters"])
    if "output_schema" in reads and function.get("output_schema") is not None:
        fields["returns"] = dict(function["output_schema"])
    kept = extras(function) if extras is not None else None
    if kept:
        fields["vendor_extras"] = {dialect: dict(kept)}
    try:
        return ToolDefinition(**fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        raise WireFormatError(dialect, f"{where}.{field}".rstrip("."), error["msg"],
                              tool) from None
