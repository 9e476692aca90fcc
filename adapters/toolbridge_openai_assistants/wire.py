"""Wire constants of the Assistants API (runs, tool outputs); calls' correlation data is
`translate.AssistantsCorrelation`."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ACTIVE_STATUSES",
    "BETA_HEADER",
    "DIALECT",
    "MAX_OUTPUT_CHARS",
    "MAX_TOOLS",
    "STOP_STATUSES",
    "TERMINAL_STATUSES",
    "run_of",
]

DIALECT = "openai-assistants"
BETA_HEADER = ("OpenAI-Beta", "assistants=v2")
"""Sent on every request, OpenAI and Azure alike."""
MAX_OUTPUT_CHARS = 1_048_576
"""Longest ``tool_outputs[].output`` string we send: the issue's requirement (1,048,576
characters); the service's real limit is not documented."""
MAX_TOOLS = 128
"""Most tools one assistant holds (``assistant_create_params.py``)."""

ACTIVE_STATUSES = frozenset({"queued", "in_progress", "cancelling"})
"""The run is working: poll or follow the stream."""
TERMINAL_STATUSES = frozenset({"completed", "cancelled", "failed", "incomplete", "expired"})
"""Nothing more happens on the run."""
STOP_STATUSES = TERMINAL_STATUSES | {"requires_action"}
"""Where polling stops (the SDK's ``runs.poll`` list)."""


def run_of(payload: Any) -> tuple[Any, str]:
    """The run object of ``payload`` and the field prefix to name it in errors.

    Accepts a run, or a stream event wrapped the SDK's way (``{"event", "data"}``).
    """
    if isinstance(payload, dict) and "event" in payload and "data" in payload:
        return payload["data"], "data."
    return payload, ""
