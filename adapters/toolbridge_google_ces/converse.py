"""``Dialect.aconverse`` for CES: `arun_conversation` with the demo's option contract."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from toolbridge import Transcript, UsageError

from . import wire
from .serve import arun_conversation

__all__ = ["APP_VARIABLES", "DEMO_APP", "aconverse"]

APP_VARIABLES = ("GOOGLE_CES_APP", "TOOLBRIDGE_GOOGLE_CES_APP")
"""Where the app of a new session is read from, in order."""
DEMO_APP = "projects/demo/locations/us/apps/demo"
"""The app used against an emulator when none is given."""


def _default_credentials() -> Any:
    """Google's default credentials as a token provider, or None when there are none."""
    from .client import _google_default_token

    try:
        return _google_default_token()
    except UsageError:
        return None
    except Exception as exc:  # google.auth.exceptions.DefaultCredentialsError
        if type(exc).__name__ == "DefaultCredentialsError":
            return None
        raise


async def aconverse(toolbox: Any, messages: Sequence[str], **options: Any) -> Transcript:
    """A new session in ``app`` (else ``$GOOGLE_CES_APP``; against an emulator `DEMO_APP`),
    unless ``session`` is given; ``api_key`` is taken as the token.

    ``base_url=None`` means the real service: without an app `UsageError` names
    ``GOOGLE_CES_APP`` at once, before any network call (looking for Google's default
    credentials may ask the metadata server); with one, missing credentials are named.
    """
    if "api_key" in options:
        options.setdefault("token", options.pop("api_key"))
    session = options.pop("session", None)
    app = options.pop("app", None)
    if session is None and app is None:
        app = next((os.environ[v] for v in APP_VARIABLES if os.environ.get(v)), None)
        if app is None and options.get("base_url"):
            app = DEMO_APP
    needs_credentials = not options.get("base_url") and options.get("token") is None and (
        options.get("client") is None)
    if session is None and app is None:
        also = ("; it also needs credentials: token=... or Google's default credentials"
                if needs_credentials else "")
        raise UsageError("google-ces needs GOOGLE_CES_APP (projects/P/locations/L/apps/A) in "
                         f"the environment, or app=/session=, to open a session{also}")
    if needs_credentials:
        provider = _default_credentials()
        if provider is None:
            raise UsageError("google-ces needs credentials: token=... or Google's default "
                             "credentials ($GOOGLE_APPLICATION_CREDENTIALS or `gcloud auth "
                             "application-default login`)")
        options["token"] = provider
    if session is None:
        session = f"{app}/sessions/{wire.new_session_id()}"
    return await arun_conversation(toolbox, messages, session=session, **options)
