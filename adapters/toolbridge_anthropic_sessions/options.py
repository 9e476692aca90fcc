"""The sessions dialect's typed options: serving (`SessionsOptions`) and its emulator's."""

from __future__ import annotations

from typing import Any

from toolbridge.http import RetryPolicy, Secret
from toolbridge.plugin import ServeOptions
from toolbridge.testing import StreamFaults
from toolbridge.testing.emulators import EmulatorOptions

from .wire import DIALECT

__all__ = ["SessionsEmulatorOptions", "SessionsFaults", "SessionsOptions"]


class SessionsOptions(ServeOptions):
    """How `toolbridge serve anthropic-sessions` and the driver reach Managed Agents."""

    dialect = DIALECT
    api_key: Secret | None = None
    """The API key, sent as ``x-api-key`` (default ``$ANTHROPIC_API_KEY``)."""
    session_id: str | None = None
    """The session to serve (serving: ``toolbridge serve``)."""
    agent_id: str | None = None
    """The agent of created sessions; default: one created with the served tools."""
    environment_id: str | None = None
    """The environment of created sessions; default: one created (``cloud``)."""
    model: str = "claude-sonnet-4-6"
    """The model of the agent created when no ``agent_id`` is given."""
    system: str | None = None
    """The system prompt of that agent."""
    metadata: dict[str, str] | None = None
    """Put on created sessions."""
    poll_every: float = 0.5
    """Seconds between two readings of the events list while the event stream cannot be
    opened (then the backend polls)."""
    timeout: float = 60.0
    """Seconds per request (event streams excepted)."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx and transport errors)."""
    client: Any = None
    """An open `AsyncSessionsClient` to use (not closed by the driver)."""

    @classmethod
    def emulated(cls, base_url: str) -> SessionsOptions:
        return cls(base_url=base_url, api_key=Secret("emulator"))


class SessionsFaults(StreamFaults):
    """The sessions emulator's faults: the shared ones and the stream ones."""


class SessionsEmulatorOptions(EmulatorOptions):
    """Options of the sessions emulator: ``script`` and ``faults`` (`SessionsFaults`)."""

    dialect = DIALECT
