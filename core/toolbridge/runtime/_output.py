"""Handler return values as result outputs, and outputs as wire text (encoded once)."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

from pydantic_core import from_json, to_json, to_jsonable_python

from .._articles import a_value_of
from .._redact import redact_text
from ..errors import ToolError
from ..model import Content, DocumentPart, ImagePart, TextPart
from ..plugin import nests_deeper_than
from ..plugin._record import ENCODED as _ENCODED
from ..plugin._record import write_encoded

__all__ = [
    "default_error_formatter", "json_text", "output_is_json", "output_text",
    "serialize_output", "shape", "write_encoded",
]

log = logging.getLogger("toolbridge.runtime")




_PARTS = (TextPart, ImagePart, DocumentPart)
_PART_TYPES: frozenset[type] = frozenset(_PARTS)
_CONTENT_TYPES: frozenset[type] = frozenset((Content, *_PARTS))
"""What is sent as content, seen in a type's ``__mro__`` (no ABC check per call)."""
_JSON_TYPES = frozenset((dict, list, str, int, float, bool, type(None)))




def serialize_output(value: Any) -> Any:
    """A handler's return value as a result output: text, JSON-compatible data, or `Content`."""
    kind = type(value)
    if kind is dict or kind is list:  # the common cases first, by exact type
        if kind is list and value and type(value[0]) not in _JSON_TYPES and all(
                isinstance(v, _PARTS) for v in value):
            return Content(parts=tuple(value))
        if _plain_json(value):
            return value
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not valid JSON")
    elif value is None or isinstance(value, (str, bool, int, float, Content)):
        return value
    elif isinstance(value, _PARTS):
        return Content(parts=(value,))
    elif isinstance(value, (list, tuple)) and value and all(
        isinstance(v, _PARTS) for v in value
    ):
        return Content(parts=tuple(value))
    converted = to_jsonable_python(value)
    if not _plain_json(converted):
        raise ValueError("not representable as JSON (NaN or Infinity, or nesting over 512 levels)")
    return converted


def shape(name: str, value: Any) -> tuple[bool, Any, str | None, str | None]:
    """A handler's return value (of tool ``name``) as a successful result's fields (or an
    error result's if it cannot be sent): ``(success, output, error, text)``, ``text`` the
    output's JSON text when it is JSON data (encoded here, once)."""
    kind = type(value)
    if kind is str:  # the common case: text is sent as it is
        return True, value, None, None
    if kind is dict or kind is list:
        first = type(value[0]) if kind is list and value else str
        if first in _JSON_TYPES and _plain_json(value):  # JSON data as it is
            return True, value, None, json_text(value)
        direct = not _PART_TYPES.isdisjoint(first.__mro__)  # parts: content
    elif kind is tuple:  # as a list
        direct = bool(value) and not _PART_TYPES.isdisjoint(type(value[0]).__mro__)
    else:  # scalars and content: `serialize_output`'s own
        direct = kind in _JSON_TYPES or not _CONTENT_TYPES.isdisjoint(kind.__mro__)
    if not direct:  # models, dataclasses, lists or dicts of them...: pydantic-core's, in Rust
        converted = _converted(value)
        if converted is not None:
            return True, converted[0], None, converted[1]
    try:
        output = serialize_output(value)
        text = None if isinstance(output, (str, Content)) else json_text(output)
    except Exception as exc:
        log.error("tool %s returned a value that is not JSON-compatible", name, exc_info=exc)
        return False, None, (f"{name} returned {a_value_of(value)}, which cannot be sent as a "
                             "result"), None
    return True, output, None, text


def _converted(value: Any) -> tuple[Any, str] | None:
    """``value`` as its JSON text, by pydantic-core (a model's own serializer and settings),
    and that text's data: no walk of the data in Python. ``None`` when the text cannot be made
    (a lone surrogate, a type pydantic-core does not know), holds NaN or an infinity, or nests
    past 512 levels: `serialize_output` decides, and says why."""
    try:
        data = to_json(value)
        if data.count(b"[") + data.count(b"{") > 512 and nests_deeper_than(data, 512):
            return None
        return from_json(data, allow_inf_nan=False), data.decode()
    except Exception:  # whatever refused it (a model's own serializer too) is decided there
        return None


def _plain_json(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is JSON data as it is: dicts with text keys, lists, finite numbers."""
    if depth > 512:
        return False
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            kind = type(item)
            if kind is str or kind is int or kind is bool or item is None:
                continue
            if kind is float:
                if item - item != 0.0:  # NaN or an infinity
                    return False
            elif not _plain_json(item, depth + 1):
                return False
        return True
    if kind is list:
        for item in value:
            kind = type(item)
            if kind is str or kind is int or kind is bool or item is None:
                continue
            if kind is float:
                if item - item != 0.0:
                    return False
            elif not _plain_json(item, depth + 1):
                return False
        return True
    if kind is float:
        return bool(value - value == 0.0)
    return kind is str or kind is int or kind is bool or value is None


def output_text(output: Any) -> str:
    """The text form of an output: strings as they are, everything else as compact JSON."""
    if type(output) is str:
        return output
    known = _ENCODED.known
    if known is not None:
        hit = known.get(id(output))
        if hit is not None and hit[0] is output:
            return hit[1]
    if isinstance(output, str):
        return output
    if isinstance(output, Content):
        return output.as_text()
    return json_text(output)


def json_text(value: Any) -> str:
    """Compact JSON text of JSON data. Text holding a lone surrogate (``"\\ud800"`` is valid
    JSON, so a model can send one and a handler echo it) cannot be UTF-8: it is written with
    ASCII escapes, the same value."""
    try:
        return to_json(value).decode()
    except ValueError:  # PydanticSerializationError: the UTF-8 encoder refused a surrogate
        import json

        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def output_is_json(returns: Any) -> bool:
    """Whether every output a ``returns`` schema describes reaches the wire as its JSON text.

    Text is sent as it is (`output_text`), so a schema that admits a string (``str``,
    ``Optional[str]``, ``Union[str, int]``, an unconstrained or unresolved one) does not
    describe the wire text: a dialect then sends no output schema. Conservative: ``$ref``,
    ``not`` and anything unknown count as admitting a string.
    """
    if not isinstance(returns, Mapping):
        return returns is False
    kind = returns.get("type")
    if isinstance(kind, str):
        return kind != "string"
    if isinstance(kind, list):
        return "string" not in kind
    if "enum" in returns or "const" in returns:
        values = returns.get("enum") if "enum" in returns else [returns.get("const")]
        return isinstance(values, list) and not any(isinstance(v, str) for v in values)
    for key in ("anyOf", "oneOf"):
        if isinstance(returns.get(key), list):
            return all(output_is_json(branch) for branch in returns[key])
    entries = returns.get("allOf")
    if isinstance(entries, list) and entries:
        return any(output_is_json(entry) for entry in entries)
    return False


def _message(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception as failure:
        log.debug("the message of a %s could not be read: %s", type(exc).__name__,
                  type(failure).__name__)
        return "(its message could not be read)"


def default_error_formatter(exc: BaseException) -> str:
    """The error text an agent sees: a `ToolError`'s message, else ``Type: message``.

    Never a traceback or locals: those go to the log only. An exception whose ``__str__``
    fails still gives its type. URLs in the text lose their credentials, query string and
    fragment (where API keys and signatures travel), a `ToolError`'s included.
    """
    message = redact_text(_message(exc))
    if isinstance(exc, ToolError):
        return message
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
