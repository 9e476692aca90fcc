"""Serve loops: answer a session's pending function calls through a `Toolbox`.

Each pending call is answered as soon as it appears (its own task, its own request), through
`Toolbox.ahandle`, so the toolbox's store, limits and side-effect rules apply. After a dropped
stream the session is re-read and every call still in ``required_actions`` is offered to the
toolbox again; a call whose result the store holds is resubmitted without running twice.
Pending actions that are not function calls (MCP or computer-use approvals, environment
connections) are left to the caller: serving stops when only they remain, and the returned
session (or a ``note`` in the transcript) shows them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from toolbridge import Toolbox, Transcript, UsageError
from toolbridge.http import Secret

from ._client_common import DEFAULT_BASE_URL
from .client import AsyncAgentsClient, AsyncEventStream, PendingCallRaceError
from .translate import DIALECT

__all__ = ["arun_conversation", "aserve_session", "run_conversation", "serve_session"]

log = logging.getLogger("toolbridge.openai_agents")

Stop = Callable[[Mapping[str, Any], "_SessionServer"], bool]
_ACTIVE = ("in_progress", "requires_action")


class _Failure:
    def __init__(self, error: BaseException) -> None:
        self.error = error


class _SessionServer:
    """Answers the pending calls of one session while its events are read."""

    def __init__(self, toolbox: Toolbox, client: AsyncAgentsClient, session_id: str,
                 context: Mapping[str, Any], transcript: Transcript | None = None,
                 last_active_at: Any = None) -> None:
        self.toolbox = toolbox
        self.client = client
        self.session_id = session_id
        self.context = dict(context)
        self.transcript = transcript
        self.tasks: dict[tuple[str, str], asyncio.Task[None]] = {}
        self.submitted: set[tuple[str, str]] = set()
        self.recorded: set[tuple[str, str]] = set()
        self.unhandled: set[str] = set()
        self.limit = asyncio.Semaphore(toolbox.max_concurrency)
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.session: Mapping[str, Any] = {}
        self.reply: str | None = None
        self.turn_id: str | None = None
        self.turn_ended = False
        self.started = False
        """Evidence that the awaited turn began (turn created, an active status, or activity)."""
        self.last_active_at = last_active_at

    # ------------------------------------------------------------------ calls
    def offer(self, session: Mapping[str, Any]) -> None:
        """Start a task for every pending function call not answered or in flight."""
        for action in session.get("required_actions") or ():
            if action.get("type") != "function_call":
                marker = json.dumps(action, sort_keys=True, default=str)
                if marker not in self.unhandled:
                    self.unhandled.add(marker)
                    log.warning("%s: session %s requires a %r action, which is left to the "
                                "caller", DIALECT, self.session_id, action.get("type"))
                continue
            key = (str(action.get("turn_id")), str(action.get("call_id")))
            if key in self.tasks or key in self.submitted:
                continue
            self.tasks[key] = asyncio.create_task(self._answer(key, action))

    async def _answer(self, key: tuple[str, str], action: Mapping[str, Any]) -> None:
        try:
            async with self.limit:
                payload = {"id": self.session_id, "required_actions": [action]}
                body = await self.toolbox.ahandle(DIALECT, payload, **self.context)
                await self.client.submit_results(self.session_id, body)
            self.submitted.add(key)
            if key not in self.recorded:
                self.recorded.add(key)
                self._record(action, body)
        except PendingCallRaceError as exc:
            # No longer pending (answered elsewhere, or the turn ended); a re-read decides.
            log.warning("%s: %s", DIALECT, exc)
        except Exception as exc:
            self.inbox.put_nowait(_Failure(exc))
        finally:
            self.tasks.pop(key, None)
            self.inbox.put_nowait(None)  # wake the loop: a stop condition may now hold

    def _record(self, action: Mapping[str, Any], body: Mapping[str, Any]) -> None:
        if self.transcript is None:
            return
        arguments = action.get("arguments")
        shown = arguments if isinstance(arguments, str) else json.dumps(arguments)
        self.transcript.add("call", f"{action.get('name')}({shown})", dict(action))
        for event in body.get("events", []):
            text = event.get("output") if event.get("success") else f"error: {event.get('error')}"
            self.transcript.add("result", text if isinstance(text, str) else json.dumps(text),
                                event)

    # ------------------------------------------------------------------ events
    def see(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        session = event.get("session")
        if isinstance(session, Mapping) and session.get("id") == self.session_id:
            if _is_resync(event):
                self._resynced(session)
            elif session.get("status") in _ACTIVE:
                self.started = True
            self.session = session
            self.offer(session)
        if kind == "agent.session.turn.created":
            turn = event.get("turn") or {}
            if self.turn_id is None and not turn.get("subagent_id"):
                self.turn_id = str(event.get("turn_id"))
                self.started = True
        elif kind in ("agent.session.turn.completed", "agent.session.turn.failed",
                      "agent.session.turn.cancelled") and event.get("turn_id") == self.turn_id:
            self.turn_ended = True
        elif kind == "agent.session.turn.item.done":
            item = event.get("item") or {}
            if item.get("type") == "message" and item.get("phase") != "commentary":
                self.reply = "".join(p.get("text", "") for p in item.get("content") or []
                                     if p.get("type") == "output_text")

    def _resynced(self, session: Mapping[str, Any]) -> None:
        """A snapshot read after (re)connecting: a call it still lists as pending is offered
        again even if submitted (the submission may have been lost; the store answers it)."""
        for action in self.function_calls(session):
            self.submitted.discard((str(action.get("turn_id")), str(action.get("call_id"))))
        if session.get("status") in _ACTIVE or (
                self.last_active_at is not None
                and session.get("last_active_at") != self.last_active_at):
            self.started = True

    @staticmethod
    def function_calls(session: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        return [a for a in session.get("required_actions") or ()
                if a.get("type") == "function_call"]

    def settled(self) -> bool:
        """Idle or failed, with nothing in flight."""
        return not self.tasks and self.session.get("status") in ("idle", "failed")

    def left_to_caller(self) -> list[Mapping[str, Any]]:
        """The non-function actions the session waits on, once every function call pending
        beside them is submitted and nothing is in flight; else empty."""
        actions = list(self.session.get("required_actions") or ())
        if self.tasks or self.session.get("status") != "requires_action":
            return []
        calls = self.function_calls(self.session)
        if any((str(a.get("turn_id")), str(a.get("call_id"))) not in self.submitted
               for a in calls):
            return []
        return [a for a in actions if a.get("type") != "function_call"]

    async def run(self, source: AsyncGenerator[dict[str, Any], None], stop: Stop | None
                  ) -> None:
        """Read ``source`` into the inbox and handle it until ``stop`` holds."""

        async def pump() -> None:
            try:
                async with aclosing(source) as events:
                    async for event in events:
                        self.inbox.put_nowait(event)
            except BaseException as exc:
                self.inbox.put_nowait(_Failure(exc))
                raise

        reader = asyncio.create_task(pump())
        try:
            while True:
                item = await self.inbox.get()
                if isinstance(item, _Failure):
                    raise item.error
                if item is not None:
                    self.see(item)
                if stop is not None and stop(item or {}, self):
                    return
        finally:
            reader.cancel()
            for task in list(self.tasks.values()):
                task.cancel()
            await asyncio.gather(reader, *self.tasks.values(), return_exceptions=True)

    def source(self, first: AsyncEventStream | None = None
               ) -> AsyncGenerator[dict[str, Any], None]:
        """Events of ``first`` (an already open stream), then `follow_session` after it ends."""

        async def events() -> AsyncGenerator[dict[str, Any], None]:
            if first is not None:
                async with first:
                    async for event in first:
                        yield event
            async with aclosing(self.client.follow_session(self.session_id)) as follow:
                async for event in follow:
                    yield event

        return events()


def _is_resync(event: Mapping[str, Any]) -> bool:
    return str(event.get("event_id", "")).startswith("resync-")


def _until_settled(event: Mapping[str, Any], server: _SessionServer) -> bool:
    return server.settled() or bool(server.left_to_caller())


def _until_turn_done(event: Mapping[str, Any], server: _SessionServer) -> bool:
    if server.left_to_caller():
        return True
    status = server.session.get("status")
    if server.tasks or status not in ("idle", "failed"):
        return False
    return status == "failed" or server.turn_ended or (_is_resync(event) and server.started)


def _client(client: AsyncAgentsClient | None, base_url: str | None,
            api_key: str | Secret | None, options: Mapping[str, Any]) -> AsyncAgentsClient:
    if client is not None:
        return client
    real = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    if api_key is None and not os.environ.get("OPENAI_API_KEY") and real == DEFAULT_BASE_URL:
        raise UsageError(f"{DIALECT}: the real service needs OPENAI_API_KEY (not set); export "
                         "it, or pass api_key=... or base_url=... (emulator)")
    return AsyncAgentsClient(base_url=base_url, api_key=api_key, **options)


async def aserve_session(
    toolbox: Toolbox, session_id: str, *, client: AsyncAgentsClient | None = None,
    base_url: str | None = None, api_key: str | Secret | None = None, watch: bool = False,
    context: Mapping[str, Any] | None = None, **client_options: Any,
) -> dict[str, Any]:
    """Answer every pending function call of ``session_id`` until it is idle or failed, or
    until only actions that are not function calls (e.g. ``mcp_approval_request``) remain.

    With ``watch=True`` it keeps serving (a long-running worker) until cancelled. Returns the
    last session snapshot (its ``required_actions`` show what is left to the caller).
    ``context`` goes to each handler's `ToolContext.extra`. Without ``client``, ``base_url``
    or ``api_key``, ``$OPENAI_API_KEY`` is required (`UsageError` before any request).
    """
    http = _client(client, base_url, api_key, client_options)
    try:
        server = _SessionServer(toolbox, http, session_id, context or {})
        await server.run(server.source(), None if watch else _until_settled)
        return dict(server.session)
    finally:
        if client is None:
            await http.aclose()


def serve_session(toolbox: Toolbox, session_id: str, **options: Any) -> dict[str, Any]:
    """Blocking form of `aserve_session`."""
    session: dict[str, Any] = _run(aserve_session(toolbox, session_id, **options))
    return session


async def arun_conversation(
    toolbox: Toolbox, messages: Sequence[str], *, base_url: str | None = None,
    api_key: str | Secret | None = None, client: AsyncAgentsClient | None = None,
    model: str | None = None, instructions: str | None = None,
    environment: Mapping[str, Any] | None = None, metadata: Mapping[str, str] | None = None,
    context: Mapping[str, Any] | None = None, **client_options: Any,
) -> Transcript:
    """Create a session declaring the toolbox's tools, send each message, serve its calls.

    The first message is the session's ``input`` (created with ``stream: true``); each later
    one is posted after the event stream is open, so no event is missed. When the session
    waits on an action that is not a function call, a ``note`` entry (data: those actions)
    ends the transcript and later messages are not sent.
    """
    if not messages:
        raise UsageError(f"{DIALECT}: arun_conversation needs at least one message")
    http = _client(client, base_url, api_key, client_options)
    transcript = Transcript(DIALECT)
    definitions = toolbox.definitions(DIALECT)
    transcript.add("tools", ", ".join(d.get("name", d["type"]) for d in definitions),
                   definitions)
    session_id = ""
    last_active_at: Any = None
    try:
        for index, message in enumerate(messages):
            transcript.add("user", message)
            if index == 0:
                stream = await http.create_session_stream(
                    toolbox, input=message, environment=environment, model=model,
                    instructions=instructions, metadata=metadata)
            else:
                stream = await http.stream_events(session_id)
                try:
                    await http.send_message(session_id, message)
                except BaseException:
                    await stream.aclose()
                    raise
            if index == 0:
                session_id, last_active_at = await _created(stream)
            server = _SessionServer(toolbox, http, session_id, context or {}, transcript,
                                    last_active_at)
            await server.run(server.source(stream), _until_turn_done)
            if not await _reply(http, server, transcript):
                break
            last_active_at = server.session.get("last_active_at")
        return transcript
    finally:
        if client is None:
            await http.aclose()


async def _created(stream: AsyncEventStream) -> tuple[str, Any]:
    """The session id (and ``last_active_at``, if shown) from the first event of a create
    stream."""
    async for event in stream:
        session = event.get("session")
        if isinstance(session, Mapping) and isinstance(session.get("id"), str):
            return str(session["id"]), session.get("last_active_at")
        if isinstance(event.get("session_id"), str):
            return str(event["session_id"]), None
    raise UsageError(f"{DIALECT}: the create stream ended before naming the session")


async def _reply(http: AsyncAgentsClient, server: _SessionServer,
                 transcript: Transcript) -> bool:
    """Record how the turn ended; False when the conversation cannot go on."""
    left = server.left_to_caller()
    if left:
        kinds = ", ".join(sorted({str(a.get("type")) for a in left}))
        transcript.add("note", f"session {server.session_id} waits on action(s) left to the "
                       f"caller: {kinds}", [dict(a) for a in left])
        return False
    if server.session.get("status") == "failed":
        transcript.add("note", f"session failed: {server.session.get('error')}",
                       dict(server.session))
        return True
    reply = server.reply
    if reply is None:  # the stream dropped before the final message: read it from history
        page = await http.list_items(server.session_id, limit=20, order="desc")
        for item in page.get("data", []):
            if item.get("type") == "message" and item.get("role") == "assistant":
                reply = "".join(p.get("text", "") for p in item.get("content") or [])
                break
    transcript.add("reply", reply or "")
    return True


def run_conversation(toolbox: Toolbox, messages: Sequence[str], **options: Any) -> Transcript:
    """Blocking form of `arun_conversation`."""
    transcript: Transcript = _run(arun_conversation(toolbox, messages, **options))
    return transcript


async def serve_from_options(toolbox: Toolbox, options: Mapping[str, Any]) -> dict[str, Any]:
    """``Dialect.aserve``: options ``session_id`` (required), ``base_url``, ``api_key``,
    ``watch``, ``organization``, ``project``."""
    known = {"session_id", "base_url", "api_key", "watch", "organization", "project"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise UsageError(f"{DIALECT}: unknown serve option(s) {', '.join(unknown)}; "
                         f"use {', '.join(sorted(known))}")
    session_id = options.get("session_id")
    if not session_id:
        raise UsageError(f"{DIALECT}: serve needs session_id=<the session to serve>")
    extra = {k: options[k] for k in ("organization", "project") if options.get(k)}
    return await aserve_session(toolbox, str(session_id), base_url=options.get("base_url"),
                                api_key=options.get("api_key"),
                                watch=bool(options.get("watch")), **extra)


def _run(coro: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise UsageError("called the blocking form inside a running event loop; await the async "
                     "form (aserve_session / arun_conversation) instead")
