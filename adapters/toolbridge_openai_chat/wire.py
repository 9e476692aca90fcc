"""Wire constants of Chat Completions (openai 3.57.0 names); calls' correlation data is
`translate.ChatCorrelation`."""

from __future__ import annotations

__all__ = ["DIALECT", "MAX_CONTENT_CHARS", "MAX_TOOLS"]

DIALECT = "openai-chat"
MAX_CONTENT_CHARS = 10_485_760
"""Longest message string (10,485,760 characters, reported)."""
MAX_TOOLS = 128
"""Tools per request (``array_above_max_length``, reported)."""
