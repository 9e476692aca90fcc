"""Holding CES conversations: thin calls into the core serve driver (`toolbridge.serve`).

`arun_conversation` plays user messages in a session, answering every round of tool calls
through the toolbox; it returns the `toolbridge.Transcript` (with its status). The driver
and the `CesBackend` do the work, including resending a persisted answer after a failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolbridge import Toolbox, Transcript
from toolbridge.http import RetryPolicy, Secret
from toolbridge.serve import DriverSettings, aconverse, converse

from .client import DEFAULT_RETRY, DEFAULT_TIMEOUT, AsyncCesClient, TokenProvider
from .options import CesOptions

__all__ = ["arun_conversation", "run_conversation"]

DIALECT = "google-ces"


def _options(session: str, base_url: str | None,
             token: str | Secret | TokenProvider | None, client: AsyncCesClient | None,
             fields: Mapping[str, Any]) -> CesOptions:
    provider = token if callable(token) and not isinstance(token, Secret) else None
    return CesOptions.parse(session=session, base_url=base_url, client=client,
                            token=None if provider is not None else token,
                            token_provider=provider, **fields)


async def arun_conversation(
    toolbox: Toolbox, messages: Iterable[str], *, session: str, base_url: str | None = None,
    token: str | Secret | TokenProvider | None = None, client: AsyncCesClient | None = None,
    sync_tools: bool = True, policy: Any = "describe", max_rounds: int = 32,
    retry: RetryPolicy = DEFAULT_RETRY, timeout: float = DEFAULT_TIMEOUT,
    context: Mapping[str, Any] | None = None,
) -> Transcript:
    """Play ``messages`` in ``session``, answering every tool call through ``toolbox``.

    With ``sync_tools`` (the default) the toolbox's client functions are first created or
    updated in the session's app. ``client`` replaces ``base_url``/``token``/``retry``/
    ``timeout``; ``context`` goes to every handler's `ToolContext.extra`. A session whose
    previous driver stopped mid-turn first finishes that turn from its checkpoint.
    """
    options = _options(session, base_url, token, client, {
        "sync_tools": sync_tools, "policy": policy, "retry": retry, "timeout": timeout})
    return await aconverse(toolbox, DIALECT, list(messages), options, context=context,
                           settings=DriverSettings(max_rounds=max_rounds))


def run_conversation(toolbox: Toolbox, messages: Iterable[str], *, session: str,
                     **options: Any) -> Transcript:
    """Blocking form of `arun_conversation` (not inside a running event loop)."""
    context = options.pop("context", None)
    max_rounds = options.pop("max_rounds", 32)
    token = options.pop("token", None)
    parsed = _options(session, options.pop("base_url", None), token,
                      options.pop("client", None), options)
    return converse(toolbox, DIALECT, list(messages), parsed, context=context,
                    settings=DriverSettings(max_rounds=max_rounds))
