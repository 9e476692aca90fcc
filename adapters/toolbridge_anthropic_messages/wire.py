"""Wire constants of the Anthropic Messages API (anthropic 2.15 names); see
``docs/protocols/anthropic-messages.md``."""

from __future__ import annotations

import re

__all__ = [
    "API_VERSION",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "DIALECT",
    "MAX_RESULT_CHARS",
    "NAME_PATTERN",
    "STRICT_OPTIONAL_PARAMETERS",
    "STRICT_TOOLS",
    "STRICT_UNION_PARAMETERS",
]

DIALECT = "anthropic-messages"
API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header every request carries."""
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Tool names the API accepts (``tools.N.custom.name``)."""
MAX_RESULT_CHARS = 10_000_000
"""Longest ``tool_result`` text toolbridge sends (the request itself is capped at 32 MB)."""
STRICT_TOOLS = 20
"""Strict tools one request may carry (Structured outputs, "Schema complexity limits")."""
STRICT_OPTIONAL_PARAMETERS = 24
"""Optional properties across every strict schema of a request (same source)."""
STRICT_UNION_PARAMETERS = 16
"""Properties with a union type (``anyOf``) across every strict schema of a request."""
DEFAULT_MODEL = "claude-sonnet-4-5"
"""The serve backend's model unless one is named."""
DEFAULT_MAX_TOKENS = 4096
"""The serve backend's ``max_tokens`` unless one is given."""
