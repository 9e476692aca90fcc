"""Wire constants of the Responses API (openai 3.57.0 names); calls' correlation data is
`translate.ResponsesCorrelation`."""

from __future__ import annotations

__all__ = [
    "ACTIVE_STATUSES",
    "CLIENT_ITEM_TYPES",
    "DIALECT",
    "MAX_CALL_ID_CHARS",
    "MAX_ITEMS_PER_CREATE",
    "MAX_OUTPUT_CHARS",
    "MAX_TOOLS",
    "TERMINAL_STATUSES",
]

DIALECT = "openai-responses"
MAX_OUTPUT_CHARS = 10_485_760
"""Longest ``function_call_output.output`` string (10 MiB, reported; not documented)."""
MAX_CALL_ID_CHARS = 64
"""Longest ``call_id`` the service accepts (``string_above_max_length``, reported)."""
MAX_TOOLS = 128
"""Tools per request: Chat Completions' reported limit, assumed for Responses too."""
MAX_ITEMS_PER_CREATE = 20
"""Items one ``POST /conversations`` or ``POST /conversations/{id}/items`` may carry."""

ACTIVE_STATUSES = frozenset({"queued", "in_progress"})
"""A (background) response still running: poll it, or re-attach to its stream."""
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled", "incomplete"})
"""Nothing more happens on the response."""
CLIENT_ITEM_TYPES = frozenset({
    "custom_tool_call", "computer_call", "local_shell_call", "shell_call", "apply_patch_call",
    "mcp_approval_request",
})
"""Output items other than ``function_call`` that wait on the client: left to the caller."""
