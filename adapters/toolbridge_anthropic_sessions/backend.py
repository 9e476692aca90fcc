"""The serve driver's backend for Managed Agents sessions: events in, ``user.*`` events out.

Steps arrive on the session's event stream, opened before a message is sent so no event of
its turn is missed; after a drop the stream is opened again and the turn is read back from
the events list (`_turns.step_of` reads both the same way), so what was answered meanwhile is
never asked again. A retried result the service already took is refused ``400``; `submit`
then reads the events and takes the refusal for the acceptance it hides.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import BackendError, ToolDefinition, UsageError
from toolbridge.plugin import Connection, Dialect, Step, StreamingBackend

from ._requests import DEFAULT_BASE_URL
from ._turns import since_message, step_of
from .client import AsyncSessionsClient
from .options import SessionsOptions
from .translate import pending_events, render_tools
from .wire import DIALECT

__all__ = ["SessionsBackend", "SessionsConnection"]

log = logging.getLogger("toolbridge.anthropic_sessions")

OPENING_KEY = "toolbridge_key"
"""Metadata of a session created for a message: that message's key."""


class SessionsConnection(Connection):
    """One `AsyncSessionsClient`, and the agent and environment created sessions use."""

    def __init__(self, dialect: Dialect, options: SessionsOptions,
                 tools: Sequence[ToolDefinition]) -> None:
        self.dialect = dialect
        self.options = options
        self.tools = render_tools(list(tools)).definitions
        self._owns = options.client is None
        self.client: AsyncSessionsClient = options.client or self._client(options)
        self._agent_id, self._environment_id = options.agent_id, options.environment_id
        self._setting_up = asyncio.Lock()

    @staticmethod
    def _client(options: SessionsOptions) -> AsyncSessionsClient:
        real = (options.base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL)
        if options.api_key is None and not os.environ.get("ANTHROPIC_API_KEY") and (
                real.rstrip("/") == DEFAULT_BASE_URL):
            raise UsageError(f"{DIALECT}: the real service needs ANTHROPIC_API_KEY (not set); "
                             "export it, or pass api_key=... or base_url=... (emulator)")
        extra: dict[str, Any] = {"retry": options.retry} if options.retry else {}
        return AsyncSessionsClient(base_url=options.base_url, api_key=options.api_key,
                                   timeout=options.timeout, **extra, **options.network())

    async def setup(self) -> tuple[str, str]:
        """The agent and environment of created sessions (made once, when not given)."""
        async with self._setting_up:
            if self._agent_id is None:
                agent = await self.client.create_agent("toolbridge", self.options.model,
                                                       self.tools, system=self.options.system)
                self._agent_id = str(agent["id"])
            if self._environment_id is None:
                environment = await self.client.create_environment("toolbridge")
                self._environment_id = str(environment["id"])
            return self._agent_id, self._environment_id

    def backend(self, conversation: str | None = None) -> SessionsBackend:
        return SessionsBackend(self, conversation or self.options.session_id or "")

    async def aclose(self) -> None:
        if self._owns:
            await self.client.aclose()


class SessionsBackend(StreamingBackend):
    """One session: created for the first message, or an existing one to serve."""

    lists_pending = True
    partial_submit = True
    provider = "anthropic"

    def __init__(self, connection: SessionsConnection, session_id: str) -> None:
        self.connection = connection
        self.client = connection.client
        self.dialect = connection.dialect
        self.conversation = session_id
        self._reader: asyncio.Task[None] | None = None
        """Reads the open event stream into `_inbox` (``None`` at its end: read back)."""
        self._inbox = _Inbox()
        self._turn: list[Mapping[str, Any]] | None = None
        """The awaited turn's events from the stream (``None`` until its message shows)."""
        self._message_id: str | None = None
        """The ``user.message`` event that began the awaited turn."""
        self._serving = False
        self._reported: str | None = None
        """The id of the event behind the last step `next` gave (never given twice by one
        backend; a successor gives the step it finds again, `Step.fresh`)."""
        self._has_turn = False
        """There is a turn to follow (a message posted, or a session served)."""
        self._ready: asyncio.Event | None = None
        """Made only when `next` must wait for `_has_turn` (an event costs 0.8 KB per
        conversation)."""

    # ------------------------------------------------------------------ the seam
    async def open(self) -> None:
        if not self.conversation:
            agent_id, environment_id = await self.connection.setup()
            metadata = dict(self.connection.options.metadata or {})
            if self.message_key:
                metadata[OPENING_KEY] = self.message_key[:512]
            session = await self.client.create_session(agent_id, environment_id,
                                                       metadata=metadata or None)
            self.conversation = str(session["id"])

    async def send(self, message: str) -> Step | None:
        await self.open()
        self._serving, self._turn, self._message_id = False, None, None
        self._turn_ready(False)
        if self._reader is None:  # first, so that no event of the turn is missed
            await self._try_stream()
        sent = await self.client.send_message(self.conversation, message)
        self._message_id = str((sent.get("data") or [{}])[0].get("id") or "") or None
        self._turn_ready(True)
        return None

    async def sent(self, message: str) -> bool | None:
        """Whether the session's latest user message is ``message``; then its turn is the
        one `next` follows."""
        if not self.conversation:
            return False
        turn = since_message(await self.client.all_events(self.conversation))
        if turn is None or _text(turn[0]) != message:
            return False
        self._serving, self._turn, self._message_id = False, None, str(turn[0].get("id"))
        self._inbox.put(None)  # `next` reads the turn back from the events
        self._turn_ready(True)
        return True

    async def resume(self) -> Step | None:
        if not self.conversation:
            raise UsageError(f"{DIALECT}: serving needs session_id=<the session to serve>")
        if self._message_id is None:
            self._serving = True
        self._turn_ready(True)
        return None  # `next` reads the session's events when it opens the stream

    async def next(self) -> Step:
        while not self._has_turn:
            if self._ready is None:
                self._ready = asyncio.Event()
            await self._ready.wait()
        while True:
            if self._reader is None:
                found = await self._resync()
                if found is not None:
                    return found
                if self._reader is None:  # no stream to wait on: poll the events list
                    await asyncio.sleep(self.connection.options.poll_every)
                continue
            event = await self._inbox.get()
            if event is None:  # the stream ended or dropped, or the turn is to be read back
                await self._close_stream()
                continue
            found = self._see(event)
            if found is not None:
                return found

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        events = list(body.get("events") or [])
        try:
            await self.client.send_events(self.conversation, events)
        except BackendError as exc:
            if exc.status != 400 or not await self._taken(events):
                raise
            log.info("%s: session %s had taken these answers already", DIALECT,
                     self.conversation)
        return None

    async def state(self) -> Step | None:
        if not self.conversation:
            return None
        events = await self.client.all_events(self.conversation)
        turn = self._turn_of(events)
        found = step_of(turn, self.conversation, fresh=True) if turn is not None else None
        if found is None:  # running: what waits so far (custom tools can be answered early)
            return Step("requires_action", fresh=True, payload={
                "session_id": self.conversation,
                "data": pending_events({"data": turn or []})})
        return found[1]

    def checkpoint(self) -> dict[str, Any]:
        return {"session_id": self.conversation, "message_id": self._message_id,
                "serving": self._serving}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        self.conversation = self.conversation or str(checkpoint.get("session_id") or "")
        self._message_id = checkpoint.get("message_id") or self._message_id
        self._serving = bool(checkpoint.get("serving", self._serving))

    async def aclose(self) -> None:
        await self._close_stream()

    def _turn_ready(self, ready: bool) -> None:
        self._has_turn = ready
        if self._ready is not None and ready:
            self._ready.set()
        elif self._ready is not None:
            self._ready.clear()

    # ------------------------------------------------------------------ the turn
    def _turn_of(self, events: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]] | None:
        """The followed turn's events; ``None`` while its message is unknown or not listed."""
        if self._serving:
            return since_message(events) or list(events)
        if self._message_id is None:
            return None
        return since_message(events, self._message_id)

    def _see(self, event: Mapping[str, Any]) -> Step | None:
        """Follow the awaited turn on the stream; the step an event ends on, if any (an
        event delivered twice in a row is taken once)."""
        if self._turn and self._turn[-1] == event:
            return None
        if event.get("type") == "user.message" and (
                self._serving or event.get("id") == self._message_id):
            self._turn = []
        if self._turn is None:
            return None
        self._turn.append(event)
        found = step_of(self._turn, self.conversation)
        return self._report(found)

    async def _resync(self) -> Step | None:
        """Open the stream again (where it can be), then read the turn from the events list."""
        await self._try_stream()
        events = await self.client.all_events(self.conversation)
        turn = self._turn_of(events)
        self._turn = turn
        if turn is None:
            return None
        return self._report(step_of(turn, self.conversation, fresh=True))

    def _report(self, found: tuple[str, Step] | None) -> Step | None:
        if found is None or found[0] == self._reported:
            return None
        self._reported = found[0]
        return found[1]

    async def _taken(self, events: Sequence[Mapping[str, Any]]) -> bool:
        """Whether none of the events' ids waits any more (they were taken before)."""
        waiting = {str(e.get("id")) for e in pending_events(
            {"data": await self.client.all_events(self.conversation)})}
        answered = {str(e.get("custom_tool_use_id") or e.get("tool_use_id")) for e in events}
        return not answered & waiting

    async def _try_stream(self) -> None:
        """`_open_stream`; when the service will not stream (past the client's retries), the
        turn is followed by polling the events list instead."""
        try:
            await self._open_stream()
        except BackendError as exc:
            if not self.retryable(exc):
                raise
            log.warning("%s: session %s: no event stream (%s); polling its events", DIALECT,
                        self.conversation, exc)

    async def _open_stream(self) -> None:
        """Connect the event stream and read it into a fresh inbox."""
        stream = await self.client.stream_events(self.conversation)
        inbox = self._inbox = _Inbox()

        async def read() -> None:
            try:
                async for event in stream:
                    inbox.put(event)
                    del event  # not kept while the next one is awaited
            except BackendError as exc:
                log.info("%s: session %s stream failed: %s", DIALECT, self.conversation, exc)
            finally:
                inbox.put(None)
                await stream.aclose()

        self._reader = asyncio.create_task(read())

    async def _close_stream(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None and not reader.done():
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)


class _Inbox:
    """The events read from the stream, for `next` (``None``: the stream ended); lighter
    than an ``asyncio.Queue`` (3 KB per conversation): a list, and a future only while
    `get` waits."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: list[Mapping[str, Any] | None] = []
        self._waiter: asyncio.Future[None] | None = None

    def put(self, item: Mapping[str, Any] | None) -> None:
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get(self) -> Mapping[str, Any] | None:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._items.pop(0)


def _text(event: Mapping[str, Any]) -> str:
    return "".join(str(b.get("text", "")) for b in event.get("content") or []
                   if isinstance(b, Mapping) and b.get("type") == "text")
