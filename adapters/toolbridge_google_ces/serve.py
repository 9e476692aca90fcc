"""The conversation driver: send user text, answer each round of ``toolCalls``, repeat."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

from toolbridge import BackendError, Toolbox, ToolCall, Transcript, UsageError, get_dialect
from toolbridge.http import RetryPolicy, Secret

from . import wire
from .client import DEFAULT_RETRY, DEFAULT_TIMEOUT, AsyncCesClient, TokenProvider
from .translate import CesCorrelation

__all__ = ["Conversation", "arun_conversation", "aserve", "run_conversation"]

DIALECT = "google-ces"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _wire_calls(response: Mapping[str, Any], calls: Sequence[ToolCall]) -> list[Any]:
    """The wire ``ToolCall`` of each call, by ``id`` (else by position: `read_calls` reads
    one call per item, in order)."""
    items: list[Any] = []
    for output in response.get("outputs", []):
        holder = output.get("toolCalls", output.get("tool_calls")) or {}
        items += holder.get("toolCalls", holder.get("tool_calls", []))
    by_id = {item["id"]: item for item in items if item.get("id")}
    wired = []
    for index, call in enumerate(calls):
        corr = call.correlation
        key = corr.id if isinstance(corr, CesCorrelation) else ""
        wired.append(by_id.get(key) if key else items[index] if index < len(items) else None)
    return wired


def _result_text(response: Mapping[str, Any]) -> str:
    """The output of a ``ToolResponse.response``, or ``error: <message>``."""
    if "error" in response:
        error = response["error"]
        return "error: " + (error if isinstance(error, str) else _compact(error))
    output = response.get("output")
    return output if isinstance(output, str) else _compact(output)


class Conversation:
    """One CES session served by a toolbox; `turn` plays one user message to the end."""

    def __init__(self, toolbox: Toolbox, client: AsyncCesClient, session: str, *,
                 transcript: Transcript | None = None, max_rounds: int = 32,
                 context: Mapping[str, Any] | None = None) -> None:
        try:
            wire.parse_session(session)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.toolbox = toolbox
        self.client = client
        self.session = session
        self.transcript = transcript or Transcript(DIALECT)
        self.max_rounds = max_rounds
        self.context = dict(context or {})
        self.tool_names: dict[str, str] = {}

    async def sync_tools(self, *, policy: Any = "describe") -> None:
        """Create or update the toolbox's client functions in the session's app."""
        app = wire.app_of(self.session)
        report = await self.client.sync_tools(self.toolbox, app, policy=policy)
        self.tool_names.update(report.tool_names)
        self.transcript.add(
            "tools", f"{', '.join(self.toolbox.names())} on {app} (created "
            f"{len(report.created)}, updated {len(report.updated)}, unchanged "
            f"{len(report.unchanged)})", self.toolbox.definitions(DIALECT, policy=policy))

    async def turn(self, message: str) -> dict[str, Any]:
        """Send ``message``; answer tool calls until an answer holds none; return it."""
        from . import GoogleCesDialect

        dialect = GoogleCesDialect(session=self.session, tool_names=self.tool_names)
        self.transcript.add("user", message)
        response = await self.client.send_text(self.session, message)
        for _ in range(self.max_rounds + 1):
            self._note_texts(response)
            pending = dialect.read_calls(response)
            if not pending.calls:
                return response
            wired = _wire_calls(response, pending.calls)
            for call, item in zip(pending.calls, wired, strict=True):
                self.transcript.add("call", f"{call.name}({_compact(call.arguments)})", item)
            body = await self.toolbox.ahandle(dialect, response, **self.context)
            for entry in body["inputs"][0]["toolResponses"]["toolResponses"]:
                self.transcript.add("result", _result_text(entry["response"]), entry)
            response = await self.client.run_session(self.session, body)
        raise BackendError(f"google-ces: session {self.session} asked for tool calls "
                           f"{self.max_rounds} rounds in a row; stopped (raise max_rounds if "
                           "your agent needs more)")

    def _note_texts(self, response: Mapping[str, Any]) -> None:
        outputs = response.get("outputs", [])
        for output in outputs if isinstance(outputs, list) else []:
            if isinstance(output, Mapping) and isinstance(output.get("text"), str):
                self.transcript.add("reply", output["text"], dict(output))


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
    ``timeout``; ``context`` goes to every handler's `ToolContext.extra`. Returns the
    transcript: ``tools``, then per message ``user``, ``call``/``result`` rounds, ``reply``.
    """
    get_dialect(DIALECT)  # fail early if the plugin is not installed
    own = client is None
    ces = client or AsyncCesClient(base_url=base_url, token=token, retry=retry, timeout=timeout)
    try:
        conversation = Conversation(toolbox, ces, session, max_rounds=max_rounds,
                                    context=context)
        if sync_tools:
            await conversation.sync_tools(policy=policy)
        for message in messages:
            await conversation.turn(message)
        return conversation.transcript
    finally:
        if own:
            await ces.aclose()


def run_conversation(toolbox: Toolbox, messages: Iterable[str], *, session: str,
                     **options: Any) -> Transcript:
    """Blocking form of `arun_conversation` (not inside a running event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arun_conversation(toolbox, messages, session=session, **options))
    raise UsageError("run_conversation was called inside a running event loop; use "
                     "await arun_conversation(...) instead")


async def aserve(toolbox: Toolbox, *, session: str | None = None,
                 messages: Iterable[str] | None = None, app: str | None = None,
                 stdin: TextIO | None = None, stdout: TextIO | None = None,
                 **options: Any) -> Transcript:
    """``toolbridge serve google-ces``: drive ``session`` (or a new session in ``app``) with
    ``messages``, else one turn per line of stdin, printing each reply as it arrives."""
    if session is None:
        if app is None:
            raise UsageError("google-ces serve needs session=projects/P/locations/L/apps/A/"
                             "sessions/S (or app=projects/P/locations/L/apps/A for a new one)")
        session = f"{app}/sessions/{wire.new_session_id()}"
    if messages is not None:
        return await arun_conversation(toolbox, messages, session=session, **options)
    source, sink = stdin or sys.stdin, stdout or sys.stdout
    client = options.pop("client", None)
    ces = client or AsyncCesClient(base_url=options.pop("base_url", None),
                                   token=options.pop("token", None))
    try:
        conversation = Conversation(toolbox, ces, session,
                                    max_rounds=options.pop("max_rounds", 32),
                                    context=options.pop("context", None))
        if options.pop("sync_tools", True):
            await conversation.sync_tools(policy=options.pop("policy", "describe"))
        if options:
            raise UsageError(f"unknown google-ces serve options: {sorted(options)}")
        while True:
            line = await asyncio.to_thread(source.readline)
            if not line:
                return conversation.transcript
            if not line.strip():
                continue
            seen = len(conversation.transcript.entries)
            await conversation.turn(line.strip())
            for entry in conversation.transcript.entries[seen:]:
                if entry.kind == "reply":
                    print(entry.text, file=sink, flush=True)
    finally:
        if client is None:
            await ces.aclose()
