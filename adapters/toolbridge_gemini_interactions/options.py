"""Typed options of the Interactions dialect: its serve backend's and its emulator's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import SecretStr

from toolbridge import UsageError
from toolbridge.http import RetryPolicy
from toolbridge.plugin import ServeOptions
from toolbridge.testing import StreamFaults
from toolbridge.testing.emulators import EmulatorOptions

from .wire import DIALECT

__all__ = ["DEFAULT_MODEL", "InteractionsEmulatorOptions", "InteractionsFaults",
           "InteractionsServeOptions"]

DEFAULT_MODEL = "gemini-3-flash-preview"
"""A current Gemini model (the vendor docs' examples)."""


class InteractionsServeOptions(ServeOptions):
    """Where the Gemini API is, how to sign in, and what every create carries."""

    dialect: ClassVar[str] = DIALECT
    api_key: SecretStr | None = None
    """The Gemini API key (default ``$GOOGLE_API_KEY``, then ``$GEMINI_API_KEY``, as
    google-genai reads them)."""
    key_in_query: bool = False
    """Send the key as ``?key=`` instead of the ``x-goog-api-key`` header."""
    model: str = DEFAULT_MODEL
    """The model of every interaction."""
    system_instruction: str | None = None
    """Sent with every create (a chain does not carry it over)."""
    generation_config: dict[str, Any] | None = None
    """``generation_config`` of every create (``temperature``, ``tool_choice``, ...)."""
    tools: list[dict[str, Any]] | None = None
    """The service's own tools (``google_search``, ``code_execution``, ...), sent after the
    toolbox's functions; a ``function`` here must be one of the toolbox's."""
    interaction_id: str | None = None
    """An existing interaction whose calls wait (served by continuing it)."""
    stream: bool = False
    """Stream each interaction (a dropped stream is read back with a ``GET``)."""
    timeout: float = 60.0
    """Seconds per request (event streams excepted)."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx and transport errors)."""

    def request_fields(self, functions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The fields of every create: model, the toolbox's ``functions`` and the hosted
        ``tools``, and the instruction and configuration that are set."""
        defined = {f.get("name") for f in functions}
        hosted = []
        for i, tool in enumerate(self.tools or []):
            kind = tool.get("type")
            if not isinstance(kind, str):
                raise UsageError(f"{DIALECT} options: tools[{i}]: no 'type'")
            if kind == "function":
                if tool.get("name") not in defined:
                    raise UsageError(f"{DIALECT} options: tools[{i}]: function "
                                     f"{tool.get('name')!r} has no handler in the toolbox")
                continue
            hosted.append(dict(tool))
        fields: dict[str, Any] = {"model": self.model}
        if functions or hosted:
            fields["tools"] = [dict(f) for f in functions] + hosted
        if self.system_instruction:
            fields["system_instruction"] = self.system_instruction
        if self.generation_config:
            fields["generation_config"] = dict(self.generation_config)
        return fields

    @classmethod
    def emulated(cls, base_url: str) -> Any:
        return cls(base_url=base_url.rstrip("/"), api_key=SecretStr("emulator-key"))


class InteractionsFaults(StreamFaults):
    """The Interactions emulator's faults: the shared and stream ones."""


class InteractionsEmulatorOptions(EmulatorOptions):
    """What the emulated Interactions service plays and how it misbehaves."""

    dialect: ClassVar[str] = DIALECT
