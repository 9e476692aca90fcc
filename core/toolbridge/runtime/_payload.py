"""Backend payloads in any form a user holds them, as JSON-compatible data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._articles import a_value_of
from .._json_text import loads
from ..errors import WireFormatError
from ..plugin import MAX_NESTING_DEPTH, MAX_PAYLOAD_BYTES, nests_deeper_than

__all__ = ["to_data"]


def to_data(payload: Any, dialect: str) -> Mapping[str, Any]:
    """Decode ``payload``: a dict, JSON text or bytes, an openai SDK model or a proto-plus message.

    JSON text is measured before it is parsed: over `MAX_PAYLOAD_BYTES` bytes or nested more
    than `MAX_NESTING_DEPTH` levels, it is refused with `WireFormatError`. Data already decoded
    (a dict, an SDK object) is the caller's memory: the dialect reads its fixed structure, and
    each call's arguments are bounded where they are read. The vendor SDKs are recognised by
    shape, never imported.
    """
    if type(payload) is dict or isinstance(payload, Mapping):  # `dict` first: the ABC is slow
        return payload
    if isinstance(payload, (str, bytes, bytearray, memoryview)):
        data = _parse(payload, dialect)
    elif hasattr(payload, "model_dump") and callable(payload.model_dump):
        # openai SDK objects are pydantic models; by_alias keeps wire names such as "async".
        data = payload.model_dump(mode="json", by_alias=True, exclude_unset=True)
    elif hasattr(type(payload), "to_json") and hasattr(type(payload), "pb"):
        # proto-plus messages (google-cloud-ces): camelCase JSON with enum names.
        data = _parse(type(payload).to_json(payload), dialect)
    elif hasattr(payload, "to_dict") and callable(payload.to_dict):
        data = payload.to_dict()
    else:
        raise WireFormatError(
            dialect, "<payload>",
            f"cannot read {a_value_of(payload)}; pass a dict, JSON text or bytes, "
            "or an official SDK object",
        )
    if not isinstance(data, Mapping):
        raise WireFormatError(
            dialect, "<payload>", f"expected a JSON object, got {a_value_of(data)}"
        )
    return data


def _parse(text: str | bytes | bytearray | memoryview, dialect: str) -> Any:
    """JSON text as data, after checking its size and nesting against the shared bounds."""
    if isinstance(text, memoryview):
        text = bytes(text)
    # A character is 1 to 4 UTF-8 bytes: only text near the bound needs encoding to be sure.
    size = len(text) if not isinstance(text, str) or len(text) * 4 <= MAX_PAYLOAD_BYTES else (
        len(text.encode("utf-8", "surrogatepass")))
    if size > MAX_PAYLOAD_BYTES:
        raise WireFormatError(dialect, "<payload>", f"{size:,} bytes of JSON text; toolbridge "
                              f"reads at most {MAX_PAYLOAD_BYTES:,} (MAX_PAYLOAD_BYTES)")
    if nests_deeper_than(text, MAX_NESTING_DEPTH):
        raise WireFormatError(dialect, "<payload>", f"nested more than {MAX_NESTING_DEPTH} "
                              "levels deep (MAX_NESTING_DEPTH); no backend payload needs that")
    try:
        return loads(text)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise WireFormatError(dialect, "<payload>", f"not valid JSON: {exc}") from None
