"""Request checks of the emulated Assistants service: error shape, tool lists, strict schemas.

Error texts and codes are the real service's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .wire import MAX_TOOLS

__all__ = ["ApiError", "check_tools", "missing", "strict_schema_problem", "wrong_type"]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class ApiError(Exception):
    """An error answer in OpenAI's shape."""

    def __init__(self, status: int, message: str, *, param: str | None = None,
                 code: str | None = None, type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.type = (
            status, message, param, code, type)

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}


def missing(param: str) -> ApiError:
    """The 400 for an absent required field."""
    return ApiError(400, f"Missing required parameter: '{param}'.", param=param,
                    code="missing_required_parameter")


def wrong_type(param: str, expected: str, value: Any) -> ApiError:
    """The 400 for a field of the wrong JSON type."""
    got = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
           type(None): "null"}.get(type(value), "a number")
    return ApiError(400, f"Invalid type for '{param}': expected {expected}, but got {got} "
                    "instead.", param=param, code="invalid_type")


def strict_schema_problem(schema: Any, context: str = "()") -> str | None:
    """Why ``schema`` is not a valid strict function schema, or ``None``."""
    if not isinstance(schema, Mapping):
        return None
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return (f"In context={context}, 'additionalProperties' is required to be supplied "
                    "and to be false.")
        missing = [k for k in props if k not in schema.get("required", ())]
        if missing:
            return (f"In context={context}, 'required' is required to be supplied and to be "
                    f"an array including every key in properties. Missing '{missing[0]}'.")
        for key, sub in props.items():
            problem = strict_schema_problem(sub, f"('properties', '{key}')")
            if problem:
                return problem
    for key in ("items",):
        problem = strict_schema_problem(schema.get(key), f"('{key}',)")
        if problem:
            return problem
    for key in ("anyOf",):
        for i, sub in enumerate(schema.get(key, ())):
            problem = strict_schema_problem(sub, f"('{key}', {i})")
            if problem:
                return problem
    for name, sub in schema.get("$defs", {}).items():
        problem = strict_schema_problem(sub, f"('$defs', '{name}')")
        if problem:
            return problem
    return None


def check_tools(tools: Any, param: str = "tools") -> list[dict[str, Any]]:
    """``tools`` if it is a valid tool list (count, types, names, strict schemas); else 400."""
    if not isinstance(tools, list):
        raise wrong_type(param, "an array", tools)
    if len(tools) > MAX_TOOLS:
        raise ApiError(400, f"Invalid '{param}': array too long. Expected an array with maximum "
                       f"length {MAX_TOOLS}, but got an array with length {len(tools)} instead.",
                       param=param, code="array_above_max_length")
    for i, tool in enumerate(tools):
        at = f"{param}[{i}]"
        if not isinstance(tool, dict) or "type" not in tool:
            raise missing(f"{at}.type")
        if tool["type"] in ("code_interpreter", "file_search"):
            continue
        if tool["type"] != "function":
            raise ApiError(400, f"Invalid value: '{tool['type']}'. Supported values are: "
                           "'code_interpreter', 'function', and 'file_search'.",
                           param=f"{at}.type", code="invalid_value")
        function = tool.get("function")
        if not isinstance(function, dict) or "name" not in function:
            raise missing(f"{at}.function.name")
        if not isinstance(function["name"], str) or not _NAME.match(function["name"]):
            raise ApiError(400, f"Invalid '{at}.function.name': string does not match pattern. "
                           "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                           param=f"{at}.function.name", code="invalid_value")
        if function.get("strict") is True:
            problem = strict_schema_problem(function.get("parameters", {}))
            if problem:
                raise ApiError(400, f"Invalid schema for function '{function['name']}': "
                               f"{problem}", param=f"{at}.function.parameters",
                               code="invalid_function_parameters")
    return tools
