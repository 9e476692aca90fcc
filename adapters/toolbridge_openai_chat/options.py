"""Typed options of the Chat Completions dialect: its serve backend's and its emulator's."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import SecretStr

from toolbridge.http import RetryPolicy
from toolbridge.migration.targets import DEFAULT_MODEL
from toolbridge.plugin import ServeOptions
from toolbridge.testing import StreamFaults
from toolbridge.testing.emulators import EmulatorOptions

from .wire import DIALECT

__all__ = ["ChatEmulatorOptions", "ChatFaults", "ChatServeOptions"]


class ChatServeOptions(ServeOptions):
    """Where the OpenAI-compatible server is, and what each request carries."""

    dialect: ClassVar[str] = DIALECT
    api_key: SecretStr | None = None
    """The key (default ``$OPENAI_API_KEY``); Azure: the ``api-key``."""
    azure_endpoint: str | None = None
    """Azure OpenAI resource root, with ``deployment`` and ``api_version``."""
    deployment: str | None = None
    """Azure deployment name (the path's ``/deployments/{name}``)."""
    api_version: str | None = None
    """Azure ``api-version`` (e.g. ``2024-10-21``)."""
    model: str | None = DEFAULT_MODEL
    """Model name (Azure: defaults to the deployment). Default: a current model
    (``toolbridge.migration.targets.DEFAULT_MODEL``)."""
    instructions: str | None = None
    """A system message opening the conversation."""
    conversation: str | None = None
    """The id keying this conversation's results in the store (default: a new one)."""
    stream: bool = False
    """Stream each completion (a dropped stream is sent again)."""
    timeout: float = 60.0
    """Seconds per request (event streams excepted)."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx and transport errors)."""

    @classmethod
    def emulated(cls, base_url: str) -> Any:
        return cls(base_url=base_url.rstrip("/") + "/v1", api_key=SecretStr("emulator-key"))


class ChatFaults(StreamFaults):
    """The Chat emulator's faults: the shared and stream ones, plus reused call ids."""

    reuse_call_ids: bool = False
    """Ids ``call_0``, ``call_1``, ... in every reply, as some servers do."""


class ChatEmulatorOptions(EmulatorOptions):
    """What the emulated Chat Completions server plays and how it misbehaves."""

    dialect: ClassVar[str] = DIALECT
