"""Typed options of the Responses dialect: its serve backend's and its emulator's."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, SecretStr

from toolbridge.emulation import EmulatorOptions, StreamFaults
from toolbridge.http import RetryPolicy
from toolbridge.plugin import ServeOptions

from .wire import DIALECT

__all__ = ["ResponsesEmulatorOptions", "ResponsesFaults", "ResponsesServeOptions"]


class ResponsesServeOptions(ServeOptions):
    """Where the Responses service is, how to sign in, and how conversations continue."""

    dialect: ClassVar[str] = DIALECT
    api_key: SecretStr | None = None
    """OpenAI key (default ``$OPENAI_API_KEY``), or an Azure OpenAI ``api-key``."""
    azure_endpoint: str | None = None
    """Azure OpenAI resource root (``https://RES.openai.azure.com``): its ``/openai/v1/``."""
    project_endpoint: str | None = None
    """Azure Foundry project (``https://ACCOUNT.services.ai.azure.com/api/projects/P``)."""
    azure_credential: bool = False
    """Sign in with azure-identity's ``DefaultAzureCredential`` (Entra) instead of a key."""
    credential: Any = None
    """An azure-core ``TokenCredential`` (sync or async) to sign in with, from Python."""
    model: str | None = "gpt-4o"
    """Model (Azure: deployment name); unused with ``agent``."""
    instructions: str | None = None
    """Sent with every request (``previous_response_id`` does not carry them over)."""
    agent: str | None = None
    """A saved Foundry agent to answer, by ``agent_reference`` (its tools and model win)."""
    agent_version: str | None = None
    """The agent's version (default: the latest)."""
    create_agent: bool = False
    """Save the toolbox's tools as a new version of ``agent`` before the first turn."""
    conversation: str | None = None
    """An existing Responses conversation to continue or serve."""
    response_id: str | None = None
    """An existing response whose calls wait (served by ``previous_response_id``)."""
    use_conversation: bool = True
    """New conversations live in a Conversation (recoverable by listing its items)."""
    stream: bool = True
    """Stream each response (a dropped stream is re-attached or the response read)."""
    background: bool = False
    """Run responses in background mode (polled, or streamed and re-attached)."""
    poll_interval: float = 1.0
    """Seconds between reads of a background response."""
    timeout: float = 60.0
    """Seconds per request (event streams excepted)."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx and transport errors)."""

    @classmethod
    def emulated(cls, base_url: str) -> Any:
        return cls(base_url=base_url.rstrip("/") + "/v1", api_key=SecretStr("emulator-key"))


class ResponsesFaults(StreamFaults):
    """The Responses emulator's faults: the shared and stream ones, plus background pacing."""

    background_polls: int | None = Field(default=None, ge=0)
    """Reads a background response stays ``in_progress`` before its final state (1)."""


class ResponsesEmulatorOptions(EmulatorOptions):
    """What the emulated Responses service plays and how it misbehaves."""

    dialect: ClassVar[str] = DIALECT
    background_polls: int | None = None
    """Reads a background response stays ``in_progress`` before its final state (also a
    fault; default 1)."""
