"""Typed options of the Messages dialect: its serve backend's and its emulator's."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import SecretStr

from toolbridge.emulation import EmulatorOptions
from toolbridge.http import RetryPolicy
from toolbridge.plugin import ServeOptions

from .wire import DEFAULT_MAX_TOKENS, DEFAULT_MODEL, DIALECT

__all__ = ["MessagesEmulatorOptions", "MessagesServeOptions"]


class MessagesServeOptions(ServeOptions):
    """Where the Messages API is, and what each request carries."""

    dialect: ClassVar[str] = DIALECT
    api_key: SecretStr | None = None
    """The key, sent as ``x-api-key`` (default ``$ANTHROPIC_API_KEY``)."""
    auth_token: SecretStr | None = None
    """A bearer token instead of a key (default ``$ANTHROPIC_AUTH_TOKEN``)."""
    model: str = DEFAULT_MODEL
    """Model name."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    """``max_tokens`` of each request (the API requires it)."""
    system: str | None = None
    """The system prompt (``system``)."""
    conversation: str | None = None
    """The id keying this conversation's results in the store (default: a new one)."""
    stream: bool = False
    """Stream each message (Anthropic's advice for long requests; a dropped stream is sent
    again; the stream has no sequence numbers, so a duplicated event cannot be told apart)."""
    betas: tuple[str, ...] = ()
    """``anthropic-beta`` features to turn on."""
    timeout: float = 600.0
    """Seconds per request (event streams excepted)."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx/529 and transport errors)."""

    @classmethod
    def emulated(cls, base_url: str) -> Any:
        return cls(base_url=base_url.rstrip("/"), api_key=SecretStr("emulator-key"))


class MessagesEmulatorOptions(EmulatorOptions):
    """What the emulated Messages API plays and how it misbehaves."""

    dialect: ClassVar[str] = DIALECT
