"""Turning handler return values into result outputs, and outputs into wire text."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from pydantic_core import to_jsonable_python

from ..errors import ToolError
from ..model import Content, ImagePart, TextPart, ToolCall, ToolResult, new_result

__all__ = ["default_error_formatter", "output_text", "serialize_output", "serialize_result"]

log = logging.getLogger("toolbridge.runtime")


def serialize_output(value: Any) -> Any:
    """A handler's return value as a result output: text, JSON-compatible data, or `Content`."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not valid JSON")
    if value is None or isinstance(value, (str, bool, int, float, Content)):
        return value
    if isinstance(value, (TextPart, ImagePart)):
        return Content(parts=(value,))
    if isinstance(value, (list, tuple)) and value and all(
        isinstance(v, (TextPart, ImagePart)) for v in value
    ):
        return Content(parts=tuple(value))
    if isinstance(value, (dict, list)) and _plain_json(value):
        return value
    converted = to_jsonable_python(value)
    if not _plain_json(converted):
        raise ValueError("not representable as JSON (NaN or Infinity, or nesting over 512 levels)")
    return converted


def serialize_result(call: ToolCall, value: Any) -> ToolResult:
    """A handler's return value as a successful result, or an error result if it cannot be."""
    try:
        return new_result(call, True, serialize_output(value), None)
    except Exception as exc:
        log.error("tool %s returned a value that is not JSON-compatible", call.name, exc_info=exc)
        return ToolResult.failed(call, f"{call.name} returned a {type(value).__name__}, which "
                                       "cannot be sent as a result")


def _plain_json(value: Any, depth: int = 0) -> bool:
    if depth > 512:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_json(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain_json(v, depth + 1) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, bool, int))


def output_text(output: Any) -> str:
    """The text form of an output: strings as they are, everything else as compact JSON."""
    if isinstance(output, str):
        return output
    if isinstance(output, Content):
        return output.as_text()
    return json.dumps(output, separators=(",", ":"), ensure_ascii=False)


def default_error_formatter(exc: BaseException) -> str:
    """The error text an agent sees: a `ToolError`'s message, else ``Type: message``.

    Never a traceback or locals: those go to the log only.
    """
    if isinstance(exc, ToolError):
        return str(exc)
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
