"""Typed options of the Gemini dialect: its serve backend's and its emulator's."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import SecretStr

from toolbridge.emulation import EmulatorOptions, StreamFaults
from toolbridge.http import RetryPolicy
from toolbridge.plugin import ServeOptions

from .wire import API_VERSION, DIALECT

__all__ = ["DEFAULT_MODEL", "GeminiEmulatorOptions", "GeminiFaults", "GeminiServeOptions"]

DEFAULT_MODEL = "gemini-2.5-flash"
"""The model used when none is given."""


class GeminiServeOptions(ServeOptions):
    """Where the Gemini API is, and what each request carries."""

    dialect: ClassVar[str] = DIALECT
    api_key: SecretStr | None = None
    """The key (default ``$GEMINI_API_KEY``, then ``$GOOGLE_API_KEY``); sent as
    ``x-goog-api-key``."""
    model: str = DEFAULT_MODEL
    """Model name (``gemini-2.5-flash``, ``models/...``)."""
    api_version: str = API_VERSION
    """The API version in the path (``v1``, as google-genai sends; or ``v1beta``)."""
    instructions: str | None = None
    """The ``systemInstruction`` of every request."""
    conversation: str | None = None
    """The id keying this conversation's results in the store (default: a new one)."""
    stream: bool = False
    """Use ``streamGenerateContent?alt=sse`` (a dropped stream is sent again)."""
    timeout: float = 120.0
    """Seconds per request (event streams excepted)."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx and transport errors)."""

    @classmethod
    def emulated(cls, base_url: str) -> Any:
        return cls(base_url=base_url, api_key=SecretStr("emulator-key"))


class GeminiFaults(StreamFaults):
    """The Gemini emulator's faults: the shared and stream ones, plus calls without ids."""

    omit_call_ids: bool = False
    """Send ``functionCall`` parts without ``id``, as models before Gemini 3 do."""


class GeminiEmulatorOptions(EmulatorOptions):
    """What the emulated Gemini API plays and how it misbehaves."""

    dialect: ClassVar[str] = DIALECT
    number_style: Literal["proto", "float"] = "proto"
    """How ``args`` numbers (a ``Struct``'s doubles) are printed: ``2`` or ``2.0``."""
