"""Wire constants and the correlation data of Chat Completions (openai 3.57.0 names)."""

from __future__ import annotations

from toolbridge import Correlation

__all__ = ["DIALECT", "MAX_CONTENT_CHARS", "MAX_TOOLS", "ChatCorrelation"]

DIALECT = "openai-chat"
MAX_CONTENT_CHARS = 10_485_760
"""Longest message string (10,485,760 characters, reported)."""
MAX_TOOLS = 128
"""Tools per request (``array_above_max_length``, reported)."""


class ChatCorrelation(Correlation):
    """What answering a call needs: its id, and where its assistant message sits."""

    tool_call_id: str
    position: int | None = None
    """Index of the assistant message in the conversation's ``messages``, when known."""
