"""Backend payloads in any form a user holds them, as JSON-compatible data."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import WireFormatError

__all__ = ["to_data"]


def to_data(payload: Any, dialect: str) -> Mapping[str, Any]:
    """Decode ``payload``: a dict, JSON text or bytes, an openai SDK model or a proto-plus message.

    The vendor SDKs are recognised by shape, never imported.
    """
    if type(payload) is dict or isinstance(payload, Mapping):  # `dict` first: the ABC is slow
        return payload
    if isinstance(payload, (str, bytes, bytearray, memoryview)):
        try:
            data = json.loads(bytes(payload) if isinstance(payload, memoryview) else payload)
        except ValueError as exc:
            raise WireFormatError(dialect, "<payload>", f"not valid JSON: {exc}") from None
    elif hasattr(payload, "model_dump") and callable(payload.model_dump):
        # openai SDK objects are pydantic models; by_alias keeps wire names such as "async".
        data = payload.model_dump(mode="json", by_alias=True, exclude_unset=True)
    elif hasattr(type(payload), "to_json") and hasattr(type(payload), "pb"):
        # proto-plus messages (google-cloud-ces): camelCase JSON with enum names.
        data = json.loads(type(payload).to_json(payload))
    elif hasattr(payload, "to_dict") and callable(payload.to_dict):
        data = payload.to_dict()
    else:
        raise WireFormatError(
            dialect, "<payload>",
            f"cannot read a {type(payload).__name__}; pass a dict, JSON text or bytes, "
            "or an official SDK object",
        )
    if not isinstance(data, Mapping):
        raise WireFormatError(
            dialect, "<payload>", f"expected a JSON object, got {type(data).__name__}"
        )
    return data
