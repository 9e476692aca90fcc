"""The Agents dialect's typed options: serving (`AgentsOptions`) and its emulator's."""

from __future__ import annotations

from typing import Any

from toolbridge.http import RetryPolicy, Secret
from toolbridge.plugin import ServeOptions
from toolbridge.testing import StreamFaults
from toolbridge.testing.emulators import EmulatorOptions

from .translate import DIALECT

__all__ = ["AgentsEmulatorOptions", "AgentsFaults", "AgentsOptions"]


class AgentsOptions(ServeOptions):
    """How `toolbridge serve openai-agents` and the driver reach the Agents API."""

    dialect = DIALECT
    api_key: Secret | None = None
    """The API key (default ``$OPENAI_API_KEY``); the real service needs one."""
    organization: str | None = None
    """``OpenAI-Organization`` header."""
    project: str | None = None
    """``OpenAI-Project`` header."""
    session_id: str | None = None
    """The session to serve (serving: ``toolbridge serve``)."""
    watch: bool = False
    """Keep serving the session after it is idle (a long-running worker), until cancelled."""
    model: str | None = None
    """The model of sessions created for a conversation."""
    instructions: str | None = None
    """The instructions of sessions created for a conversation."""
    environment: dict[str, Any] | None = None
    """The ``environment`` of created sessions (default ``{"type": "none"}``)."""
    metadata: dict[str, str] | None = None
    """Put on created sessions; serving with discovery serves the sessions that carry it."""
    discover_every: float = 1.0
    """Seconds between two listings of the waiting sessions (discovery)."""
    timeout: float = 60.0
    """Seconds per request (event streams excepted)."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx and transport errors)."""
    race_delays: tuple[float, ...] | None = None
    """Waits before re-sending a result refused by the registration race."""
    client: Any = None
    """An open `AsyncAgentsClient` to use (not closed by the driver); it replaces the
    connection options above."""

    @classmethod
    def emulated(cls, base_url: str) -> AgentsOptions:
        return cls(base_url=base_url, api_key=Secret("emulator"))


class AgentsFaults(StreamFaults):
    """The Agents emulator's faults: the shared ones and the stream ones, plus its own."""

    registration_race: bool = False
    """Answer the first submission of each call ``400 Unknown pending tool call`` (the
    service's registration race)."""


class AgentsEmulatorOptions(EmulatorOptions):
    """Options of the Agents emulator: ``script`` and ``faults`` (`AgentsFaults`)."""

    dialect = DIALECT
