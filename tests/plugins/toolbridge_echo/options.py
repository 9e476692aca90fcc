"""The echo dialect's typed options: its serve backend's, its emulator's, its migration
target's (each field's docstring is what ``--help`` shows)."""

from __future__ import annotations

from pathlib import Path

from toolbridge.http import RetryPolicy, Secret
from toolbridge.plugin import DialectOptions, ServeOptions
from toolbridge.testing.emulators import EmulatorOptions

__all__ = ["EchoEmulatorOptions", "EchoServeOptions", "EchoTargetOptions"]

DIALECT = "echo"


class EchoServeOptions(ServeOptions):
    """Where the echo service is (it has no hosted one: ``base_url`` is required)."""

    dialect = DIALECT
    api_key: Secret | None = None
    """The bearer key the service asks for."""
    conversation: str | None = None
    """The conversation to serve or continue (default: a new one)."""
    timeout: float = 30.0
    """Seconds per request."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx and transport errors)."""

    @classmethod
    def emulated(cls, base_url: str) -> EchoServeOptions:
        return cls(base_url=base_url, api_key=Secret("emulator-key"))


class EchoEmulatorOptions(EmulatorOptions):
    """What the emulated echo service plays, and whether it asks for a key."""

    dialect = DIALECT
    require_key: bool = True
    """Refuse requests without ``Authorization: Bearer ...`` (401)."""


class EchoTargetOptions(DialectOptions):
    """Where ``toolbridge migrate --to echo-files`` writes (``-o dir=PATH``)."""

    dialect = DIALECT
    dir: Path
    """The folder holding ``agents/`` and ``conversations/`` (created if missing)."""
