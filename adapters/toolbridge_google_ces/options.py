"""The CES dialect's typed options: serving (`CesOptions`) and its emulator's."""

from __future__ import annotations

from typing import Any, Literal

from toolbridge.http import RetryPolicy, Secret
from toolbridge.plugin import ServeOptions
from toolbridge.testing.emulators import EmulatorOptions

__all__ = ["APP_VARIABLES", "DEMO_APP", "CesEmulatorOptions", "CesOptions"]

APP_VARIABLES = ("GOOGLE_CES_APP", "TOOLBRIDGE_GOOGLE_CES_APP")
"""Where the app of a new session is read from, in order, when ``app`` is not given."""
DEMO_APP = "projects/demo/locations/us/apps/demo"
"""The app used against an emulator when none is given."""


class CesOptions(ServeOptions):
    """How the driver reaches CES: the session (or the app of a new one) and credentials."""

    dialect = "google-ces"
    token: Secret | None = None
    """An OAuth access token; a callable returning one goes in ``token_provider``. Neither:
    Google's default credentials (extra ``google-auth``)."""
    token_provider: Any = None
    """A callable returning a fresh token (called before every request)."""
    session: str | None = None
    """``projects/P/locations/L/apps/A/sessions/S``: the session to hold (else a new one)."""
    app: str | None = None
    """``projects/P/locations/L/apps/A`` for new sessions (default ``$GOOGLE_CES_APP``)."""
    sync_tools: bool = True
    """Create or update the toolbox's client functions in the app first."""
    policy: Literal["allow", "describe", "error"] = "describe"
    """The schema loss policy of the synced tools."""
    universe_domain: str = "googleapis.com"
    """The endpoint's domain (``ces.<domain>``)."""
    timeout: float = 220.0
    """Seconds per request (the SDK's ``run_session`` default)."""
    retry: RetryPolicy | None = None
    """Retries (``runSession``: only 429/503 and errors before the request was sent)."""
    client: Any = None
    """An open `AsyncCesClient` to use (not closed); replaces the connection options."""

    @classmethod
    def emulated(cls, base_url: str) -> CesOptions:
        return cls(base_url=base_url, token=Secret("emulator"), app=DEMO_APP)


class CesEmulatorOptions(EmulatorOptions):
    """Options of the CES emulator (its faults: the shared ones; it streams nothing)."""

    dialect = "google-ces"
    number_style: Literal["proto", "float"] = "proto"
    """How Struct numbers are printed: ``2`` (protobuf JSON) or ``2.0``."""
