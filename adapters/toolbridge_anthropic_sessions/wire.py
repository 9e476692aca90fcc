"""Wire constants and shapes of Claude Managed Agents sessions (``anthropic`` 2.15 names:
``anthropic.types.beta.sessions``)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = [
    "BETA",
    "CALL_EVENTS",
    "CONFIRMATION",
    "CUSTOM_TOOL_RESULT",
    "CUSTOM_TOOL_USE",
    "DIALECT",
    "MAX_RESULT_BYTES",
    "MAX_TOOL_NAME",
    "RESULT_MARGIN_BYTES",
    "TOOL_NAME_PATTERN",
    "VERSION",
    "CustomToolDict",
    "CustomToolResultDict",
    "ToolConfirmationDict",
]

DIALECT = "anthropic-sessions"

BETA = "managed-agents-2026-04-01"
"""The ``anthropic-beta`` value every Managed Agents request carries."""
VERSION = "2023-06-01"
"""The ``anthropic-version`` header."""
CUSTOM_TOOL_USE = "agent.custom_tool_use"
"""The event of a call of one of the agent's custom tools (the client runs it)."""
CUSTOM_TOOL_RESULT = "user.custom_tool_result"
"""The event that answers it, naming its ``custom_tool_use_id``."""
CONFIRMATION = "user.tool_confirmation"
"""The answer to a tool call the permission policy holds (``allow`` / ``deny``)."""
CALL_EVENTS = frozenset({CUSTOM_TOOL_USE, "agent.tool_use", "agent.mcp_tool_use"})
"""Events a ``requires_action`` idle may name (the two others ask for a confirmation)."""
MAX_TOOL_NAME = 128
TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,128}$"
"""A custom tool's name: 1-128 letters, digits, underscores, hyphens
(``BetaManagedAgentsCustomToolParams.name``)."""
MAX_RESULT_BYTES = 4_194_304
"""The service documents no limit of one result; toolbridge keeps one under 4 MiB (the API
refuses a request over 32 MB, and every result of an idle may go in one)."""
RESULT_MARGIN_BYTES = 16_384
"""Room left under `MAX_RESULT_BYTES` for the event's own fields."""


class CustomToolDict(TypedDict):
    """An ``agent.tools`` entry the client runs (``BetaManagedAgentsCustomToolParams``)."""

    type: Literal["custom"]
    name: str
    description: str
    input_schema: dict[str, Any]


class CustomToolResultDict(TypedDict, total=False):
    """``user.custom_tool_result``: content blocks, ``is_error`` on failure."""

    type: Literal["user.custom_tool_result"]
    custom_tool_use_id: str
    content: list[dict[str, Any]]
    is_error: bool


class ToolConfirmationDict(TypedDict, total=False):
    """``user.tool_confirmation``; ``deny_message`` only with ``deny``."""

    type: Literal["user.tool_confirmation"]
    tool_use_id: str
    result: Literal["allow", "deny"]
    deny_message: str
