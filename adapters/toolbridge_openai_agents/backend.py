"""The serve driver's backend for Agents API sessions: events in, ``tool_result`` events out.

Steps arrive on the session's event stream (`AsyncAgentsClient.follow_session` reconnects
and re-reads the session after a drop); results go back as soon as they are ready, several in
one request when they are ready together, each request under its own ``Idempotency-Key``
reused on every retry. A step carries only the session's id and ``required_actions``, never
the snapshot the event brought.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, UsageError
from toolbridge.plugin import Dialect, DiscoveringConnection, Step, StreamingBackend
from toolbridge.serve import results_key

from ._client_common import DEFAULT_BASE_URL, OPENING_KEY
from ._session_events import SessionEvents
from .client import AsyncAgentsClient, PendingCallRaceError
from .options import AgentsOptions
from .translate import DIALECT

__all__ = ["AgentsBackend", "AgentsConnection"]

log = logging.getLogger("toolbridge.openai_agents")

_ACTIVE = ("in_progress", "requires_action")
_TURN_ENDS = ("agent.session.turn.completed", "agent.session.turn.failed",
              "agent.session.turn.cancelled")


def _api_root(base_url: str) -> str:
    root = base_url.rstrip("/")
    return root if root.endswith("/v1") else root + "/v1"


class AgentsConnection(DiscoveringConnection):
    """One `AsyncAgentsClient` for every session a worker serves."""

    def __init__(self, dialect: Dialect, options: AgentsOptions,
                 tools: Sequence[ToolDefinition]) -> None:
        self.dialect = dialect
        self.options = options
        self.tools = list(tools)
        self._owns = options.client is None
        self.client = options.client or self._client(options)

    @staticmethod
    def _client(options: AgentsOptions) -> AsyncAgentsClient:
        base = _api_root(options.base_url) if options.base_url else None
        real = (base or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if options.api_key is None and not os.environ.get("OPENAI_API_KEY") and (
                real == DEFAULT_BASE_URL):
            raise UsageError(f"{DIALECT}: the real service needs OPENAI_API_KEY (not set); "
                             "export it, or pass api_key=... or base_url=... (emulator)")
        extra: dict[str, Any] = {}
        if options.retry is not None:
            extra["retry"] = options.retry
        if options.race_delays is not None:
            extra["race_delays"] = options.race_delays
        return AsyncAgentsClient(base_url=base, api_key=options.api_key,
                                 organization=options.organization, project=options.project,
                                 timeout=options.timeout, **extra, **options.network())

    def backend(self, conversation: str | None = None) -> AgentsBackend:
        return AgentsBackend(self, conversation or self.options.session_id)

    async def discover(self) -> AsyncIterator[str]:
        """Sessions (with the options' ``metadata``) whose calls wait, newest first, listed
        every ``discover_every`` seconds."""
        while True:
            after: str | None = None
            while True:
                page = await self.client.list_sessions(metadata=self.options.metadata,
                                                       after=after, limit=100)
                for session in page.get("data", []):
                    if session.get("status") == "requires_action":
                        yield str(session["id"])
                if not page.get("has_more") or not page.get("data"):
                    break
                after = str(page["data"][-1]["id"])
            await asyncio.sleep(self.options.discover_every)

    async def aclose(self) -> None:
        if self._owns:
            await self.client.aclose()


class AgentsBackend(StreamingBackend):
    """One session: created by the first message, or an existing one to serve."""

    lists_pending = True
    partial_submit = True
    provider = "openai"

    def __init__(self, connection: AgentsConnection, session_id: str | None) -> None:
        self.connection = connection
        self.client = connection.client
        self.dialect = connection.dialect
        self.conversation = session_id or ""
        self.watching = connection.options.watch
        self._events = SessionEvents(self.client)
        """The session's event stream, kept across turns (`next` reads it)."""
        self._opening: asyncio.Event | None = None
        """Set while `send` opens the stream (the driver may already be waiting in `next`)."""
        self._serving = False
        self._turn_id: str | None = None
        self._turn_ended = False
        self._over = False
        """The awaited turn's end was reported: later snapshots of the idle session (a
        reconnect between two turns) are not a turn's end again."""
        self._started = False
        """Evidence that the awaited turn began (turn created, an active status, activity)."""
        self._last_active_at: Any = None
        """The session's ``last_active_at`` when the awaited turn's message was sent."""
        self._seen_active_at: Any = None
        self._reply: str | None = None
        self._previous_turn: str | None = None
        """The id of the last turn followed before the awaited one (its items are not ours)."""
        self._message = ""
        self._submitted: dict[str, int] = {}
        """Results key -> times this backend sent those results again (bounded)."""
        self._named = None if self.conversation else asyncio.Event()
        """Set once the session is known (`next` waits for it after a failed first send);
        none for a session known from the start (an event costs 0.8 KB per conversation)."""

    # ------------------------------------------------------------------ the seam
    async def send(self, message: str) -> Step | None:
        self._serving = False
        self._previous_turn, self._message = self._turn_id or self._previous_turn, message
        self._turn_id, self._turn_ended, self._started, self._reply = None, False, False, None
        self._over = False
        self._last_active_at = self._seen_active_at
        opening = self._opening = asyncio.Event()
        try:
            await self._send(message)
        finally:
            self._opening = None
            opening.set()
        return None

    async def _send(self, message: str) -> None:
        options = self.connection.options
        key = self.message_key or None  # the same on every attempt of this message
        if not self.conversation:
            stream = await self.client.create_session_stream(
                self.connection.tools, input=message, environment=options.environment,
                model=options.model, instructions=options.instructions,
                metadata=options.metadata, idempotency_key=self.message_key or None)
            self._events.attach(stream, ends_with_turn=True)
            self.conversation, self._last_active_at = await self._events.created()
            self._name_known()
        elif self._events.streaming and not self._events.ends_with_turn:  # it sees this turn
            await self.client.send_message(self.conversation, message, idempotency_key=key)
        else:  # the stream is opened first, so no event of the turn is missed
            await self._events.detach()  # a create stream ends with its turn: not this one
            stream = await self._events.open(self.conversation)
            try:
                await self.client.send_message(self.conversation, message,
                                               idempotency_key=key)
            except BaseException:
                await stream.aclose()
                raise
            self._events.attach(stream)

    async def resume(self) -> Step | None:
        if not self.conversation:
            raise UsageError(f"{DIALECT}: serving needs session_id=<the session to serve>")
        if not self._started:  # else: the turn `sent` found goes on
            self._serving = True
        return None

    async def sent(self, message: str) -> bool | None:
        """Whether the session's latest user message is ``message`` (its items, newest
        first); then the turn it started is the one `next` follows."""
        if not self.conversation:  # its creation's reply was lost: find it by its key
            if not self.message_key:
                return False  # no key: the message reached no session we can find
            found = await self.client.list_sessions(metadata={OPENING_KEY: self.message_key},
                                                    limit=1)
            if not found.get("data"):
                return False
            self.conversation = str(found["data"][0]["id"])
            self._name_known()
        page = await self.client.list_items(self.conversation, limit=20, order="desc")
        for item in page.get("data", []):
            if item.get("type") == "message" and item.get("role") == "user":
                if _text(item) != message:
                    return False
                self._serving, self._turn_id, self._turn_ended = False, None, False
                self._started, self._reply, self._over = True, None, False
                return True
        return False

    async def next(self) -> Step:
        while True:
            while self._opening is not None:  # `send` is opening the stream: read that one
                await self._opening.wait()
            if not self.conversation:  # a first send failed: wait until one names it
                if self._named is None:
                    self._named = asyncio.Event()
                await self._named.wait()
                continue
            if not self._events.attached:
                resync = await self._events.reconnect(self.conversation)
                step = self._see(resync)
                if step is None and await self._began_unseen(resync):
                    step = self._see(resync)
                if step is not None:
                    return await self._with_reply(step)
                continue
            event = await self._events.event(self.conversation)
            if event is None:
                continue
            step = self._see(event)
            if step is not None:
                return await self._with_reply(step)

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        events = list(body.get("events", []))
        try:
            await self.client.send_events(self.conversation, events,
                                          idempotency_key=self._results_key(events))
        except PendingCallRaceError as exc:
            # One of them is no longer pending (answered before, or the turn ended): the
            # request was refused whole, so the others go again one by one.
            if len(events) == 1:
                log.warning("%s: %s", DIALECT, exc)
            for event in events if len(events) > 1 else ():
                try:
                    await self.client.send_events(self.conversation, [event],
                                                  idempotency_key=self._results_key([event]))
                except PendingCallRaceError as single:
                    log.warning("%s: %s", DIALECT, single)
        return None

    def _results_key(self, events: Sequence[Mapping[str, Any]]) -> str:
        """The key of these results (`results_key`) and of how often this backend sent them
        before: the first attempt's is the same for a successor (a submission that landed
        is not applied twice); one sent again after the session still listed them pending
        (202 promises no durable apply) gets a new one."""
        calls = [(str(e.get("turn_id")), str(e.get("call_id"))) for e in events]
        key = results_key(self.conversation, calls)
        sent = self._submitted[key] = self._submitted.get(key, -1) + 1
        while len(self._submitted) > 1024:
            del self._submitted[next(iter(self._submitted))]
        return key if sent == 0 else f"{key}.{sent}"

    async def state(self) -> Step | None:
        session = await self.client.retrieve_session(self.conversation)
        final = self._final(session, resync=True)
        if final is not None:
            return await self._with_reply(final)
        return self._waiting(session, fresh=True)

    def retryable(self, error: BaseException) -> bool:
        """Also a user message refused because a turn is running (``session_busy``): the
        turn may be the one an earlier attempt of that message started (`sent` tells)."""
        body = getattr(error, "body", None)
        inner = body.get("error") if isinstance(body, Mapping) else None
        return super().retryable(error) or (
            isinstance(inner, Mapping) and inner.get("code") == "session_busy")

    def checkpoint(self) -> dict[str, Any]:
        """Whether it serves or plays a turn, and what it knows of that turn (a backend
        rebuilt elsewhere goes on with it: the turn's end brings its reply)."""
        return {"session_id": self.conversation, "serving": self._serving,
                "turn_id": self._turn_id,
                "started": self._started, "last_active_at": self._last_active_at,
                "previous_turn": self._previous_turn, "message": self._message,
                "message_key": self.message_key}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        if checkpoint.get("session_id") and not self.conversation:
            self.conversation = str(checkpoint["session_id"])
            self._name_known()
        self._serving = bool(checkpoint.get("serving", self._serving))
        self._turn_id = checkpoint.get("turn_id") or self._turn_id
        self._started = bool(checkpoint.get("started", self._started))
        self._last_active_at = checkpoint.get("last_active_at", self._last_active_at)
        self._previous_turn = checkpoint.get("previous_turn") or self._previous_turn
        self._message = str(checkpoint.get("message") or self._message)
        self.message_key = str(checkpoint.get("message_key") or self.message_key)

    async def aclose(self) -> None:
        await self._events.detach()

    def _name_known(self) -> None:
        if self._named is not None:
            self._named.set()

    # ------------------------------------------------------------------ the turn
    def _see(self, event: Mapping[str, Any]) -> Step | None:
        """Track the turn; the step an event calls for, if any."""
        kind = event.get("type")
        if kind == "agent.session.turn.created":
            turn = event.get("turn") or {}
            if self._turn_id is None and not turn.get("subagent_id"):
                self._turn_id = str(event.get("turn_id"))
                self._started = True
        elif kind in _TURN_ENDS and (event.get("turn_id") == self._turn_id or (
                self._turn_id is None and self._started
                and not (event.get("turn") or {}).get("subagent_id"))):
            self._turn_ended = True  # ours (its creation may have come before a reconnect)
        elif kind == "agent.session.turn.item.done":
            item = event.get("item") or {}
            if item.get("type") == "message" and item.get("phase") != "commentary":
                self._reply = "".join(p.get("text", "") for p in item.get("content") or []
                                      if p.get("type") == "output_text")
        session = event.get("session")
        if not isinstance(session, Mapping) or session.get("id") != self.conversation:
            return None
        self._seen_active_at = session.get("last_active_at")
        resync = str(event.get("event_id", "")).startswith("resync-")
        if resync:
            if session.get("status") in _ACTIVE or (
                    self._last_active_at is not None
                    and session.get("last_active_at") != self._last_active_at):
                self._started = True
        elif session.get("status") in _ACTIVE:
            self._started = True
        final = self._final(session, resync)
        if final is not None:
            return final
        return self._waiting(session, fresh=resync) if session.get("required_actions") else None

    async def _began_unseen(self, resync: Mapping[str, Any]) -> bool:
        """Whether the awaited turn began and ended while no stream was read (a reconnect
        found the session idle): its items say so, where the snapshot cannot (its
        ``last_active_at`` has a resolution of seconds). The newest item is an assistant
        message answering the newest user message, which is the one sent (compared by
        text, as `sent` does), in a turn other than the one followed before."""
        session = resync.get("session") or {}
        if self._serving or self._started or session.get("status") != "idle":
            return False
        page = await self.client.list_items(self.conversation, limit=20, order="desc")
        items = [i for i in page.get("data", []) if isinstance(i, Mapping)]
        if not items or items[0].get("type") != "message" or items[0].get("role") != (
                "assistant"):
            return False  # the turn has not answered (yet): its events are still to come
        user = next((i for i in items if i.get("type") == "message"
                     and i.get("role") == "user"), None)
        if user is None or _text(user) != self._message or (
                self._previous_turn is not None and user.get("turn_id") == self._previous_turn):
            return False
        self._started, self._turn_id = True, user.get("turn_id") or self._turn_id
        self._reply = _text(items[0])
        return True

    def _final(self, session: Mapping[str, Any], resync: bool) -> Step | None:
        """The end of the turn (or of serving), when the session shows it."""
        status = session.get("status")
        if status not in ("idle", "failed") or session.get("required_actions"):
            return None
        if status == "failed":
            return Step("failed", error=f"session failed: {session.get('error')}",
                        detail={"id": session.get("id"), "error": session.get("error")})
        if self._serving:  # the reply its stream showed, if any (none was sent by us)
            return None if self.connection.options.watch else Step("completed",
                                                                   reply=self._reply)
        if not self._over and (self._turn_ended or (resync and self._started)):
            return Step("completed", reply=self._reply)
        return None

    async def _with_reply(self, step: Step) -> Step:
        """A turn's end with its reply (read from the history when the stream missed it)."""
        if step.final and not self._serving:
            self._over = True
        if step.status == "completed" and step.reply is None and not self._serving:
            return Step("completed", reply=await self._last_reply())
        return step

    def _waiting(self, session: Mapping[str, Any], *, fresh: bool) -> Step:
        return Step("requires_action", payload={
            "id": self.conversation, "object": "agent.session",
            "required_actions": list(session.get("required_actions") or [])}, fresh=fresh)

    async def _last_reply(self) -> str:
        """The final message of the turn, read from the history (the stream missed it)."""
        page = await self.client.list_items(self.conversation, limit=20, order="desc")
        for item in page.get("data", []):
            if item.get("type") == "message" and item.get("role") == "assistant":
                return _text(item)
        return ""


def _text(item: Mapping[str, Any]) -> str:
    """The text of a message item (its text parts, joined)."""
    return "".join(str(p.get("text", "")) for p in item.get("content") or []
                   if isinstance(p, Mapping))
