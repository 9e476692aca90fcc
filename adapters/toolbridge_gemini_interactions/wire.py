"""Wire constants of the Gemini Interactions API (google-genai 3.6.1 names); see
``docs/protocols/gemini-interactions.md``."""

from __future__ import annotations

import re

__all__ = [
    "ACTIVE_STATUSES",
    "API_VERSION",
    "DEFAULT_BASE_URL",
    "DIALECT",
    "MAX_RESULT_CHARS",
    "MAX_TOOLS",
    "NAME_PATTERN",
    "TERMINAL_STATUSES",
]

DIALECT = "gemini-interactions"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1"
"""The path's ``{api_version}`` (what google-genai 3.6.1 sends)."""
MAX_RESULT_CHARS = 1_000_000
"""Longest result text toolbridge sends (undocumented; the model's context is 1M tokens)."""
MAX_TOOLS = 128
"""Function declarations per request (reported for generateContent, assumed here)."""
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")
"""Function names the Gemini API accepts (letters, digits, ``_ . : -``; at most 128)."""

ACTIVE_STATUSES = frozenset({"queued", "in_progress"})
"""An interaction still running (background): read it again."""
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled", "incomplete",
                               "budget_exceeded"})
"""Nothing more happens on the interaction (``requires_action`` waits on the caller)."""
