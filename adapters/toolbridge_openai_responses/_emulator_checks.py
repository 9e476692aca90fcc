"""Request checks of the emulated Responses service: the error shape, bodies, tool lists.

Error texts and codes are the real service's where they are known (openai-responses.md §8).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolbridge.testing.emulators import OpenAIApiError as ApiError
from toolbridge.testing.emulators import missing_parameter as missing
from toolbridge.testing.emulators import strict_schema_problem, wrong_type

from .wire import MAX_CALL_ID_CHARS, MAX_OUTPUT_CHARS, MAX_TOOLS

__all__ = ["ApiError", "check_create", "check_output", "check_tools", "declared", "missing",
           "wrong_type"]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
CREATE_KEYS = frozenset({
    "access_programs", "background", "background_options", "context_management",
    "conversation", "image", "include", "input", "instructions", "max_output_tokens",
    "max_tool_calls", "metadata", "model", "moderation", "parallel_tool_calls",
    "previous_response_id", "prompt", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "reasoning", "safety_identifier", "service_tier", "store",
    "stream", "stream_options", "temperature", "text", "tool_choice", "tools", "top_logprobs",
    "top_p", "truncation", "user"})
"""``ResponseCreateParams`` keys (openai 3.57.0), plus ``stream``."""


def check_create(body: Any, *, foundry: bool) -> dict[str, Any]:
    """``body`` if it is a valid create request for this URL form; else the 400."""
    if not isinstance(body, dict):
        raise ApiError(400, "We could not parse the JSON body of your request.",
                       code="invalid_json")
    if foundry and "agent" in body:
        raise ApiError(400, "The 'agent' property is deprecated; use 'agent_reference' "
                       "instead.", param="agent", code="invalid_request_error")
    allowed = CREATE_KEYS | ({"agent_reference"} if foundry else set())
    for key in body:
        if key not in allowed:
            raise ApiError(400, f"Unknown parameter: '{key}'.", param=key,
                           code="unknown_parameter")
    if body.get("agent_reference") is None and not body.get("model"):
        raise missing("model")
    if body.get("previous_response_id") and body.get("conversation"):
        raise ApiError(400, "Parameters 'previous_response_id' and 'conversation' cannot be "
                       "used together.", param="conversation", code="invalid_request_error")
    if body.get("background") and body.get("store") is False:
        raise ApiError(400, "Background mode requires 'store' to be true.", param="store")
    for key, kind, label in (("input", (str, list), "a string or an array"),
                             ("tools", list, "an array"), ("metadata", dict, "an object"),
                             ("background", bool, "a boolean"), ("stream", bool, "a boolean")):
        if body.get(key) is not None and not isinstance(body[key], kind):
            raise wrong_type(key, label, body[key])
    return body


def _check_function(tool: Mapping[str, Any], at: str) -> None:
    name = tool.get("name")
    if not isinstance(name, str):
        raise missing(f"{at}.name")
    if not _NAME.match(name):
        raise ApiError(400, f"Invalid '{at}.name': string does not match pattern. Expected a "
                       "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                       param=f"{at}.name", code="invalid_value")
    parameters = tool.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise wrong_type(f"{at}.parameters", "an object", parameters)
    if tool.get("strict", True) is not False:  # absent means strict on the Responses API
        problem = strict_schema_problem(parameters or {"type": "object", "properties": {},
                                                 "additionalProperties": False})
        if problem:
            raise ApiError(400, f"Invalid schema for function '{name}': {problem}",
                           param=f"{at}.parameters", code="invalid_function_parameters")


def check_tools(tools: Any) -> list[dict[str, Any]]:
    """``tools`` if valid (count, types, names, strict schemas, namespaces); else the 400."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise wrong_type("tools", "an array", tools)
    if len(tools) > MAX_TOOLS:
        raise ApiError(400, f"Invalid 'tools': array too long. Expected an array with maximum "
                       f"length {MAX_TOOLS}, but got an array with length {len(tools)} "
                       "instead.", param="tools", code="array_above_max_length")
    for i, tool in enumerate(tools):
        at = f"tools[{i}]"
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            raise missing(f"{at}.type")
        if tool["type"] == "function":
            _check_function(tool, at)
        elif tool["type"] == "namespace":
            for key in ("name", "description", "tools"):
                if key not in tool:
                    raise missing(f"{at}.{key}")
            for j, member in enumerate(tool["tools"]):
                if isinstance(member, dict) and member.get("type") == "function":
                    _check_function(member, f"{at}.tools[{j}]")
    return tools


def declared(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Function name -> parameters schema, namespaces flattened (what the model may call)."""
    found: dict[str, dict[str, Any]] = {}
    for tool in tools:
        members = tool.get("tools", []) if tool.get("type") == "namespace" else [tool]
        for member in members:
            if member.get("type") == "function":
                found[member["name"]] = member.get("parameters") or {}
    return found


def strict_names(tools: list[dict[str, Any]]) -> list[str]:
    """Names of the functions sent strict (an absent ``strict`` is true on this API)."""
    return [member["name"] for tool in tools
            for member in (tool.get("tools", []) if tool.get("type") == "namespace" else [tool])
            if member.get("type") == "function" and member.get("strict", True) is not False]


def check_output(item: dict[str, Any], at: str) -> None:
    """A ``function_call_output`` input item's fields; else the 400."""
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        raise missing(f"{at}.call_id")
    if len(call_id) > MAX_CALL_ID_CHARS:
        raise ApiError(400, f"Invalid '{at}.call_id': string too long. Expected a string with "
                       f"maximum length {MAX_CALL_ID_CHARS}, but got a string with length "
                       f"{len(call_id)} instead.", param=f"{at}.call_id",
                       code="string_above_max_length")
    output = item.get("output")
    if "output" not in item:
        raise missing(f"{at}.output")
    if not isinstance(output, (str, list)):
        raise wrong_type(f"{at}.output", "a string or an array", output)
    if isinstance(output, str) and len(output) > MAX_OUTPUT_CHARS:
        raise ApiError(400, f"Invalid '{at}.output': string too long. Expected a string with "
                       f"maximum length {MAX_OUTPUT_CHARS}, but got a string with length "
                       f"{len(output)} instead.", param=f"{at}.output",
                       code="string_above_max_length")
    if isinstance(output, list):
        for p, part in enumerate(output):
            check_output_part(part, f"{at}.output[{p}]")


_PART_SOURCES = {"input_text": ("text",), "input_image": ("image_url", "file_id"),
                 "input_file": ("file_data", "file_id", "file_url")}
"""Each output part's type, and the fields of which it needs one (a string)."""


def check_output_part(part: Any, at: str) -> None:
    """One part of a ``function_call_output``'s array: ``input_text`` (``text``),
    ``input_image`` (``image_url`` or ``file_id``), ``input_file`` (``file_data`` with its
    ``filename``, ``file_id`` or ``file_url``); else the 400."""
    if not isinstance(part, dict):
        raise wrong_type(at, "an object", part)
    kind = part.get("type")
    sources = _PART_SOURCES.get(kind) if isinstance(kind, str) else None
    if sources is None:
        raise ApiError(400, f"Invalid value: {kind!r}. Supported values are: 'input_text', "
                       "'input_image', and 'input_file'.", param=f"{at}.type",
                       code="invalid_value")
    given = [key for key in sources if key in part]
    if not given:
        raise missing(f"{at}.{sources[0]}")
    for key in given:
        if not isinstance(part[key], str):
            raise wrong_type(f"{at}.{key}", "a string", part[key])
    if "file_data" in given and not isinstance(part.get("filename"), str):
        raise missing(f"{at}.filename")
