"""Request checks of the emulated Assistants service: error shape, tool lists, strict schemas.

Error texts and codes are the real service's.
"""

from __future__ import annotations

import re
from typing import Any

from toolbridge.testing.emulators import OpenAIApiError as ApiError
from toolbridge.testing.emulators import missing_parameter as missing
from toolbridge.testing.emulators import strict_schema_problem, wrong_type

from .wire import MAX_TOOLS

__all__ = ["ApiError", "check_tools", "missing", "strict_schema_problem", "wrong_type"]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


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
