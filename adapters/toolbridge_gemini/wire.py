"""Wire constants of the Gemini API's ``generateContent`` (google-genai 3.6.1 names)."""

from __future__ import annotations

import re

__all__ = [
    "API_VERSION",
    "DEFAULT_BASE_URL",
    "DIALECT",
    "JSON_SCHEMA_KEYWORDS",
    "MAX_RESULT_BYTES",
    "MAX_TOOLS",
    "NAME_PATTERN",
]

DIALECT = "gemini"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1"
"""The version google-genai 3.6.1's ``genai.Client`` uses for the Gemini API by default
(``GOOGLE_AI_API_DEFAULT_VERSION``); ``v1beta`` serves the same requests and preview fields."""
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
"""``FunctionDeclaration.name``: a letter or underscore first, then letters, digits, ``_``,
``.``, ``:``, ``-``; at most 64 characters (the Gemini API reference)."""
MAX_TOOLS = 512
"""Function declarations per request (Vertex AI's documented limit; the Gemini API states
none, and the same backend serves both)."""
MAX_RESULT_BYTES = 1_048_576
"""Our cap on one ``functionResponse.response`` (compact JSON bytes): Google states no size
limit per part, only the model's context window (tokens)."""
JSON_SCHEMA_KEYWORDS = frozenset({
    "$id", "$defs", "$ref", "$anchor", "$schema", "$comment", "type", "format", "title",
    "description", "enum", "items", "prefixItems", "minItems", "maxItems", "minimum",
    "maximum", "anyOf", "oneOf", "properties", "additionalProperties", "required",
    "propertyOrdering"})
"""The JSON Schema keywords ``parametersJsonSchema`` honours (Gemini API, "Structured
output: JSON Schema support"); the model ignores the others."""
