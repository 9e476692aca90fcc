"""What the OpenAI-family emulators share: the error answer's shape and the strict-schema check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["OpenAIApiError", "missing_parameter", "strict_schema_problem", "wrong_type"]


class OpenAIApiError(Exception):
    """An error answer: HTTP ``status`` and OpenAI's ``{"error": {...}}`` body."""

    def __init__(self, status: int, message: str, *, param: str | None = None,
                 code: str | None = None, type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.type = (
            status, message, param, code, type)

    def body(self) -> dict[str, Any]:
        """The JSON body OpenAI answers with."""
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}


def missing_parameter(param: str) -> OpenAIApiError:
    """The 400 for an absent required field."""
    return OpenAIApiError(400, f"Missing required parameter: '{param}'.", param=param,
                          code="missing_required_parameter")


def wrong_type(param: str, expected: str, value: Any) -> OpenAIApiError:
    """The 400 for a field of the wrong JSON type."""
    got = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
           type(None): "null"}.get(type(value), "a number")
    return OpenAIApiError(400, f"Invalid type for '{param}': expected {expected}, but got "
                          f"{got} instead.", param=param, code="invalid_type")


def strict_schema_problem(schema: Any, context: str = "()") -> str | None:
    """Why ``schema`` is not a valid strict function schema (OpenAI's message), or ``None``:
    every object closed, every property required, through ``items``, ``anyOf`` and ``$defs``."""
    if not isinstance(schema, Mapping):
        return None
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return (f"In context={context}, 'additionalProperties' is required to be supplied "
                    "and to be false.")
        absent = [k for k in properties if k not in schema.get("required", ())]
        if absent:
            return (f"In context={context}, 'required' is required to be supplied and to be "
                    f"an array including every key in properties. Missing '{absent[0]}'.")
        for key, sub in properties.items():
            problem = strict_schema_problem(sub, f"('properties', '{key}')")
            if problem:
                return problem
    subs = [("('items',)", schema.get("items"))]
    subs += [(f"('anyOf', {i})", sub) for i, sub in enumerate(schema.get("anyOf", ()))]
    subs += [(f"('$defs', '{name}')", sub) for name, sub in schema.get("$defs", {}).items()]
    for where, sub in subs:
        problem = strict_schema_problem(sub, where)
        if problem:
            return problem
    return None
