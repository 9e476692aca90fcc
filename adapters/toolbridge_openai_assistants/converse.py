"""``Dialect.aconverse`` for Assistants: `arun_conversation` with the demo's option contract."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from toolbridge import Transcript, UsageError

from .serve import arun_conversation
from .wire import DIALECT

__all__ = ["aconverse", "api_root", "credentials_from_env"]

_AZURE = ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION")


def api_root(base_url: str) -> str:
    """The OpenAI-form API root of a service or emulator root URL (``/v1`` added once)."""
    root = base_url.rstrip("/")
    return root if root.endswith("/v1") else root + "/v1"


def credentials_from_env() -> dict[str, Any]:
    """Client options for the real service: Azure when ``$AZURE_OPENAI_ENDPOINT`` is set,
    else OpenAI with ``$OPENAI_API_KEY``; `UsageError` names what is missing."""
    env = os.environ
    if env.get("AZURE_OPENAI_ENDPOINT"):
        missing = [name for name in _AZURE if not env.get(name)]
        if missing:
            raise UsageError(f"{DIALECT}: Azure OpenAI needs {', '.join(missing)} (not set)")
        return {"azure_endpoint": env["AZURE_OPENAI_ENDPOINT"],
                "api_key": env["AZURE_OPENAI_API_KEY"], "api_version": env["OPENAI_API_VERSION"]}
    if env.get("OPENAI_API_KEY"):
        return {"api_key": env["OPENAI_API_KEY"]}
    raise UsageError(f"{DIALECT}: the real service needs OPENAI_API_KEY (OpenAI), or "
                     f"{', '.join(_AZURE)} (Azure OpenAI); none is set")


async def aconverse(toolbox: Any, messages: Sequence[str], **options: Any) -> Transcript:
    """`arun_conversation` where ``base_url`` is a root URL (``/v1`` is added) and
    ``base_url=None`` means the real service with credentials from the environment.

    Other options (``api_key``, ``model`` = ``"gpt-4o"``, ``instructions``, ``stream``,
    the Azure ones, handler context) go to `arun_conversation` unchanged.
    """
    base_url = options.pop("base_url", None)
    if base_url:
        options["base_url"] = api_root(str(base_url))
    elif options.get("azure_endpoint") is None and options.get("api_key") is None:
        options.update(credentials_from_env())
    return await arun_conversation(toolbox, messages, **options)
