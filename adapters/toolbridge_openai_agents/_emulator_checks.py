"""Request checks of the emulated Agents API, with the real error shape."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from toolbridge.testing.emulators import OpenAIApiError as ApiError
from toolbridge.testing.emulators import missing_parameter as missing

from .wire import MAX_RESULT_BYTES, MAX_TOOLS_BYTES, RACE_MESSAGE, TOOL_RESULT

__all__ = ["ApiError", "check_create", "check_events", "check_tools", "race", "unknown_call"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FUNCTION_KEYS = frozenset({"type", "name", "description", "parameters", "defer_loading",
                            "async"})
INPUT_TYPES = frozenset({TOOL_RESULT, "agent.session.input.message", "agent.session.input.cancel",
                         "agent.session.input.mcp_approval_request_result",
                         "agent.session.input.computer_use_approval_request_result"})


def invalid(param: str, message: str, code: str = "invalid_value") -> ApiError:
    return ApiError(400, message, param=param, code=code)


def unknown_call(call_id: str, param: str) -> ApiError:
    # The SDK retries exactly this body (lib/streaming/agents/_tools.py, is_pending_call_race).
    return ApiError(400, RACE_MESSAGE + call_id, param=param, code="invalid_request_error")


race = unknown_call


def _object(value: Any, param: str) -> Mapping[str, Any]:
    if value is None:
        raise missing(param)
    if not isinstance(value, Mapping):
        raise invalid(param, f"Invalid type for '{param}': expected an object.", "invalid_type")
    return value


def _string(obj: Mapping[str, Any], key: str, where: str, *, empty: bool = False) -> str:
    value = obj.get(key)
    if value is None:
        raise missing(f"{where}.{key}" if where else key)
    if not isinstance(value, str) or (not empty and not value):
        raise invalid(f"{where}.{key}", f"Invalid value for '{where}.{key}': expected a "
                      "non-empty string.", "invalid_type")
    return value


def check_tools(tools: Any, where: str = "agent.tools") -> list[dict[str, Any]]:
    """Validate a tool list; return it in the response form (``defer_loading`` always set)."""
    if not isinstance(tools, list):
        raise invalid(where, f"Invalid type for '{where}': expected an array.", "invalid_type")
    size = len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_TOOLS_BYTES:
        raise invalid(where, f"The tool list is {size} bytes; the maximum is "
                      f"{MAX_TOOLS_BYTES} bytes.", "string_above_max_length")
    out: list[dict[str, Any]] = []
    names: set[str] = set()
    deferred = search = False
    for index, raw in enumerate(tools):
        path = f"{where}[{index}]"
        tool = _object(raw, path)
        kind = _string(tool, "type", path)
        if kind == "tool_search":
            extra = sorted(set(tool) - {"type"})
            if extra:
                raise invalid(f"{path}.{extra[0]}", f"Unknown parameter: '{path}.{extra[0]}'.",
                              "unknown_parameter")
            search = True
            out.append({"type": "tool_search"})
            continue
        if kind != "function":
            out.append(dict(tool))
            continue
        extra = sorted(set(tool) - _FUNCTION_KEYS)
        if extra:  # e.g. `strict`: Agents function tools have none
            raise invalid(f"{path}.{extra[0]}", f"Unknown parameter: '{path}.{extra[0]}'.",
                          "unknown_parameter")
        name = _string(tool, "name", path)
        if not _NAME.match(name):
            raise invalid(f"{path}.name", f"Invalid '{path}.name': must match "
                          "^[a-zA-Z0-9_-]{1,64}$.")
        if name in names:
            raise invalid(f"{path}.name", f"Duplicate function name '{name}'.")
        names.add(name)
        _string(tool, "description", path, empty=True)
        params = _object(tool.get("parameters"), f"{path}.parameters")
        if params.get("type", "object") != "object":
            raise invalid(f"{path}.parameters", f"Invalid schema for function '{name}': "
                          "the root must be of type 'object'.", "invalid_function_parameters")
        defer = tool.get("defer_loading", False)
        if not isinstance(defer, bool):
            raise invalid(f"{path}.defer_loading", "Invalid type: expected a boolean.",
                          "invalid_type")
        deferred = deferred or defer
        out.append({**tool, "defer_loading": defer})
    if deferred and not search:
        raise invalid(where, "Functions with defer_loading require a tool_search tool in "
                      "agent.tools.")
    return out


def check_create(body: Any) -> Mapping[str, Any]:
    """Validate ``POST /agents/sessions``."""
    checked = _object(body, "body")
    body = checked
    environment = _object(body.get("environment"), "environment")
    _string(environment, "type", "environment")
    agent = body.get("agent")
    if agent is None and body.get("agent_id") is None:
        raise missing("agent")
    if agent is not None:
        agent = _object(agent, "agent")
        check_tools(agent.get("tools", []))
    text_input = body.get("input")
    if text_input is None and (environment.get("type") == "none" or body.get("stream")):
        # session_create_params.py: required for environment none, and when streaming.
        raise missing("input")
    metadata = body.get("metadata") or {}
    if not isinstance(metadata, Mapping) or len(metadata) > 16 or not all(
        isinstance(k, str) and len(k) <= 64 and isinstance(v, str) and len(v) <= 512
        for k, v in metadata.items()
    ):
        raise invalid("metadata", "Invalid 'metadata': at most 16 string pairs, keys up to 64 "
                      "and values up to 512 characters.")
    return checked


def check_events(body: Any) -> list[Mapping[str, Any]]:
    """Validate the shape of ``POST .../events`` (pending-call checks are the session's)."""
    body = _object(body, "body")
    events = body.get("events")
    if events is None:
        raise missing("events")
    if not isinstance(events, list) or not events:
        raise invalid("events", "Invalid 'events': expected a non-empty array.")
    checked = []
    for index, raw in enumerate(events):
        where = f"events[{index}]"
        event = _object(raw, where)
        kind = _string(event, "type", where)
        if kind not in INPUT_TYPES:
            raise invalid(f"{where}.type", f"Invalid value: '{kind}'. Supported values are: "
                          + ", ".join(f"'{t}'" for t in sorted(INPUT_TYPES)) + ".")
        if kind == TOOL_RESULT:
            _check_result(event, where)
        elif kind == "agent.session.input.message":
            messages = event.get("input")
            if messages is None:
                raise missing(f"{where}.input")
            if isinstance(messages, str):
                messages = [{"role": "user", "content": messages}]
            if not isinstance(messages, list) or not messages:
                raise invalid(f"{where}.input", "Invalid 'input': expected a non-empty array.")
            for m, message in enumerate(messages):
                _string(_object(message, f"{where}.input[{m}]"), "role", f"{where}.input[{m}]")
                if "content" not in message:
                    raise missing(f"{where}.input[{m}].content")
        checked.append(event)
    return checked


def _check_result(event: Mapping[str, Any], where: str) -> None:
    _string(event, "turn_id", where)
    _string(event, "call_id", where)
    if "success" not in event:
        raise missing(f"{where}.success")
    if not isinstance(event["success"], bool):
        raise invalid(f"{where}.success", "Invalid type: expected a boolean.", "invalid_type")
    output = event.get("output")
    if output is not None and not isinstance(output, (str, list)):
        raise invalid(f"{where}.output", "Invalid type: expected a string or an array of "
                      "content parts.", "invalid_type")
    if isinstance(output, list):
        for p, part in enumerate(output):
            part = _object(part, f"{where}.output[{p}]")
            kind = _string(part, "type", f"{where}.output[{p}]")
            key = {"input_text": "text", "input_image": "image_url"}.get(kind)
            if key is None:
                raise invalid(f"{where}.output[{p}].type", f"Invalid content part type '{kind}'.")
            _string(part, key, f"{where}.output[{p}]", empty=True)
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    size = len(text.encode()) + len(str(event.get("error") or "").encode())
    if size > MAX_RESULT_BYTES:
        raise invalid(f"{where}.output", f"Tool result is {size} bytes; the maximum is "
                      f"{MAX_RESULT_BYTES} bytes.", "string_above_max_length")
