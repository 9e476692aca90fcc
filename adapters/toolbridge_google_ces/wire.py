"""Google CES wire facts: resource names, endpoints, enums, the error shape.

Source: google-cloud-ces 0.7.2 (``google.cloud.ces_v1``); see the project's protocol notes
``shared/protocols/google-ces-client-functions.md``.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any

DIALECT = "google-ces"

__all__ = [
    "API_VERSION",
    "DIALECT",
    "DEFAULT_UNIVERSE",
    "EXECUTION_TYPES",
    "MAX_RESULT_BYTES",
    "SCHEMA_FIELDS",
    "SCHEMA_TYPES",
    "SESSION_ID_PATTERN",
    "app_of",
    "endpoint",
    "error_body",
    "new_session_id",
    "normalize_schema_enums",
    "normalize_tool_enums",
    "parse_session",
    "session_name",
    "tool_name",
]

API_VERSION = "v1"
MAX_RESULT_BYTES = 1_048_576
"""Largest result we send (UTF-8 bytes of its JSON text): 1 MiB. Our choice: Google documents
no size limit for a ``ToolResponse``; a result this large already fills a model's context."""
DEFAULT_UNIVERSE = "googleapis.com"
"""``ces.{UNIVERSE_DOMAIN}`` is the SDK's endpoint template (``session_service/client.py``)."""

SESSION_RE = re.compile(
    r"^projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/apps/(?P<app>[^/]+)"
    r"/sessions/(?P<session>[^/:]+)$"
)
APP_RE = re.compile(r"^projects/[^/]+/locations/[^/]+/apps/[^/]+$")
TOOL_RE = re.compile(r"^(?P<app>projects/[^/]+/locations/[^/]+/apps/[^/]+)/tools/[^/]+$")
SESSION_ID_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_-]{4,62}$")
"""Session ids CES accepts (Google's "API access" deployment page)."""

# Enums (types/schema.py, types/common.py). Proto JSON accepts names or numbers; names are
# upper case and case-sensitive.
SCHEMA_TYPES = ("TYPE_UNSPECIFIED", "STRING", "INTEGER", "NUMBER", "BOOLEAN", "OBJECT", "ARRAY")
EXECUTION_TYPES = ("EXECUTION_TYPE_UNSPECIFIED", "SYNCHRONOUS", "ASYNCHRONOUS")

SCHEMA_FIELDS = frozenset({
    "type", "properties", "required", "description", "items", "nullable", "uniqueItems",
    "prefixItems", "additionalProperties", "anyOf", "enum", "default", "ref", "defs", "title",
    "minItems", "maxItems", "minimum", "maximum",
})
"""JSON names of the ``Schema`` message's fields (``types/schema.py``)."""

_SCHEMA_PROTO_NAMES = {"unique_items": "uniqueItems", "prefix_items": "prefixItems",
                       "additional_properties": "additionalProperties", "any_of": "anyOf",
                       "min_items": "minItems", "max_items": "maxItems"}


def endpoint(*, universe_domain: str = DEFAULT_UNIVERSE) -> str:
    """The CES base URL, ``https://ces.{universe_domain}``: the SDK's only endpoint template
    (``_DEFAULT_ENDPOINT_TEMPLATE``); any other host is the client's ``base_url``."""
    return f"https://ces.{universe_domain}"


def session_name(project: str, location: str, app: str, session: str | None = None) -> str:
    """``projects/{project}/locations/{location}/apps/{app}/sessions/{session}``.

    ``session`` defaults to a fresh random id (`new_session_id`).
    """
    return f"projects/{project}/locations/{location}/apps/{app}/sessions/" + (
        session or new_session_id())


def new_session_id() -> str:
    """A random session id matching `SESSION_ID_PATTERN` (CES has no create-session call)."""
    return "s-" + secrets.token_hex(12)


def parse_session(name: str) -> dict[str, str]:
    """The parts of a session name; `ValueError` naming the expected form otherwise."""
    match = SESSION_RE.match(name)
    if match is None:
        raise ValueError(f"session {name!r} must look like "
                         "projects/P/locations/L/apps/A/sessions/S")
    return match.groupdict()


def app_of(name: str) -> str:
    """The app (``projects/P/locations/L/apps/A``) of a session, tool or app name."""
    if APP_RE.match(name):
        return name
    tool = TOOL_RE.match(name)
    if tool:
        return tool.group("app")
    parts = parse_session(name)
    return f"projects/{parts['project']}/locations/{parts['location']}/apps/{parts['app']}"


def tool_name(app: str, tool_id: str) -> str:
    """The resource name of tool ``tool_id`` in ``app``."""
    return f"{app}/tools/{tool_id}"


def _enum_name(value: Any, names: tuple[str, ...]) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return names[value]
    return value


def normalize_schema_enums(schema: Any) -> Any:
    """A CES ``Schema`` with enum numbers as names and proto field names as JSON names."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for raw, value in schema.items():
        key = _SCHEMA_PROTO_NAMES.get(str(raw), str(raw))
        if key == "type":
            out[key] = _enum_name(value, SCHEMA_TYPES)
        elif key in ("properties", "defs") and isinstance(value, Mapping):
            out[key] = {k: normalize_schema_enums(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = normalize_schema_enums(value)
        elif key in ("anyOf", "prefixItems") and isinstance(value, list):
            out[key] = [normalize_schema_enums(v) for v in value]
        else:
            out[key] = value
    return out


def normalize_tool_enums(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A ``Tool`` with enum numbers as names (``executionType``, schema ``type``)."""
    out = dict(tool)
    for key in ("execution_type", "executionType"):
        if key in out:
            out["executionType"] = _enum_name(out.pop(key), EXECUTION_TYPES)
    function = out.pop("client_function", None) or out.get("clientFunction")
    if isinstance(function, Mapping):
        function = dict(function)
        for key in ("parameters", "response"):
            if key in function:
                function[key] = normalize_schema_enums(function[key])
        out["clientFunction"] = function
    return out


_STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                 404: "NOT_FOUND", 409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED",
                 500: "INTERNAL", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def error_body(code: int, message: str, status: str | None = None) -> dict[str, Any]:
    """Google's JSON error shape: ``{"error": {"code", "message", "status"}}``."""
    return {"error": {"code": code, "message": message,
                      "status": status or _STATUS_NAMES.get(code, "UNKNOWN")}}
