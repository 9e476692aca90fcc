"""Wire constants and shapes of the Agents API payloads this adapter writes (openai 3.57.0
names)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = [
    "DIALECT",
    "BETA_HEADER",
    "MAX_RESULT_BYTES",
    "MAX_TOOLS_BYTES",
    "RACE_MESSAGE",
    "RESULT_MARGIN_BYTES",
    "TOOL_RESULT",
    "FunctionToolDict",
    "ToolResultEventDict",
]

DIALECT = "openai-agents"

BETA_HEADER = ("OpenAI-Beta", "agents=v1")
"""Header every Agents API call carries."""
TOOL_RESULT = "agent.session.input.tool_result"
"""Event type that answers a pending function call."""
MAX_RESULT_BYTES = 4_194_304
"""A tool result must stay under 4 MiB (seeds 001/002)."""
RESULT_MARGIN_BYTES = 16_384
"""Room left under `MAX_RESULT_BYTES` for the event's own fields and Agents API metadata."""
MAX_TOOLS_BYTES = 3_145_728
"""The resolved tool list is at most 3 MiB of compact UTF-8 JSON (session_create_params.py)."""
RACE_MESSAGE = "Unknown pending tool call: "
"""Prefix of the 400 message of the call-registration race (SDK: ``is_pending_call_race``)."""


class FunctionToolDict(TypedDict, total=False):
    """A function entry of ``agent.tools`` (``AgentToolConfigParamFunction``); no ``strict``."""

    type: Literal["function"]
    name: str
    description: str
    parameters: dict[str, Any]
    defer_loading: bool


class ToolResultEventDict(TypedDict, total=False):
    """``agent.session.input.tool_result``: ``output`` on success, ``error`` on failure."""

    type: Literal["agent.session.input.tool_result"]
    turn_id: str
    call_id: str
    success: bool
    output: str | list[dict[str, str]]
    error: str
