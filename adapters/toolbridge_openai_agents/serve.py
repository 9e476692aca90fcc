"""Serving Agents API sessions: thin calls into the core serve driver (`toolbridge.serve`).

`aserve_session` answers what a session waits for; `arun_conversation` creates a session and
holds a conversation. Both return a `toolbridge.Transcript` (with its status); the driver,
its recovery rule and the `AgentsBackend` do the work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import Toolbox, Transcript, UsageError
from toolbridge.http import Secret
from toolbridge.serve import aanswer_pending, aconverse, answer_pending, converse

from .client import AsyncAgentsClient
from .options import AgentsOptions
from .translate import DIALECT

__all__ = ["arun_conversation", "aserve_session", "run_conversation", "serve_session"]


def _options(client: AsyncAgentsClient | None, base_url: str | None,
             api_key: str | Secret | None, fields: Mapping[str, Any]) -> AgentsOptions:
    given = {k: v for k, v in fields.items() if v is not None}
    return AgentsOptions.parse(client=client, base_url=base_url, api_key=api_key, **given)


async def aserve_session(
    toolbox: Toolbox, session_id: str, *, client: AsyncAgentsClient | None = None,
    base_url: str | None = None, api_key: str | Secret | None = None, watch: bool = False,
    context: Mapping[str, Any] | None = None, **options: Any,
) -> Transcript:
    """Answer every pending function call of ``session_id`` until it is idle or failed, or
    until only actions that are not function calls (an ``mcp_approval_request``) remain
    (status ``incomplete``; the note's data lists them).

    With ``watch=True`` it keeps serving (a long-running worker) until cancelled. ``options``
    are other `AgentsOptions` (``retry``, ``organization``, ...). Without ``client``,
    ``base_url`` or ``api_key``, ``$OPENAI_API_KEY`` is required (`UsageError` first).
    """
    return await aanswer_pending(toolbox, DIALECT, _options(client, base_url, api_key, {
        "watch": watch, **options}), conversation=session_id, context=context)


def serve_session(toolbox: Toolbox, session_id: str, **options: Any) -> Transcript:
    """Blocking form of `aserve_session`."""
    context = options.pop("context", None)
    return answer_pending(toolbox, DIALECT, AgentsOptions.parse(options), conversation=session_id,
                          context=context)


async def arun_conversation(
    toolbox: Toolbox, messages: Sequence[str], *, base_url: str | None = None,
    api_key: str | Secret | None = None, client: AsyncAgentsClient | None = None,
    model: str | None = None, instructions: str | None = None,
    environment: Mapping[str, Any] | None = None, metadata: Mapping[str, str] | None = None,
    context: Mapping[str, Any] | None = None, **options: Any,
) -> Transcript:
    """Create a session declaring the toolbox's tools, send each message, serve its calls.

    The first message is the session's ``input`` (created with ``stream: true``); each later
    one is posted after the event stream is open, so no event is missed.
    """
    if not messages:
        raise UsageError(f"{DIALECT}: arun_conversation needs at least one message")
    fields = {"model": model, "instructions": instructions, "metadata": metadata,
              "environment": dict(environment) if environment is not None else None, **options}
    return await aconverse(toolbox, DIALECT, messages,
                           _options(client, base_url, api_key, fields), context=context)


def run_conversation(toolbox: Toolbox, messages: Sequence[str], **options: Any) -> Transcript:
    """Blocking form of `arun_conversation`."""
    if not messages:
        raise UsageError(f"{DIALECT}: run_conversation needs at least one message")
    context = options.pop("context", None)
    return converse(toolbox, DIALECT, messages, AgentsOptions.parse(options), context=context)
