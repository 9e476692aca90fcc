"""The serve backend's event stream of one session: read line by line, reopened after a drop."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from toolbridge import UsageError, WireFormatError

from ._async_client import AsyncAgentsClient
from ._client_common import DONE, EventDeduper, SSEParser, resync_event
from ._streams import AsyncEventStream
from .translate import DIALECT

__all__ = ["DEDUPE", "SessionEvents"]

DEDUPE = 256
"""Event ids remembered per session to drop repeats (a repeat comes right after the event,
or with a reconnect's overlap: a long-lived session must not keep the SDK's 1,024)."""

log = logging.getLogger("toolbridge.openai_agents")


class SessionEvents:
    """The open event stream, kept across turns, its events de-duplicated; read line by line
    (so no decoded event stays referenced between two reads)."""

    __slots__ = ("_chunks", "_client", "_connects", "_deduper", "_lines", "_parser", "_pending",
                 "_quiet", "_stream", "connecting", "ends_with_turn")

    def __init__(self, client: AsyncAgentsClient) -> None:
        self._client = client
        self._stream: AsyncEventStream | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._pending = bytearray()
        """Bytes read but not yet a whole line."""
        self._lines: list[str] = []
        self._parser = SSEParser()
        self._deduper = EventDeduper(DEDUPE)
        self._connects = 0
        self._quiet = 0
        self.connecting = False
        """`reconnect` is opening a stream (it will see what is sent meanwhile)."""
        self.ends_with_turn = False
        """The open stream is a create stream: it ends with the session's first turn, so a
        later turn's events never come on it."""

    @property
    def attached(self) -> bool:
        """A stream is open and being read (else the next read reconnects)."""
        return self._chunks is not None

    @property
    def streaming(self) -> bool:
        """A stream is open, or being opened."""
        return self._stream is not None or self.connecting

    async def open(self, session_id: str) -> AsyncEventStream:
        """A new stream of the session (`attach` it to read it)."""
        return await self._client.stream_events(session_id, deduper=self._deduper)

    def attach(self, stream: AsyncEventStream, *, ends_with_turn: bool = False) -> None:
        """Read ``stream`` from now on (a create stream ``ends_with_turn``)."""
        # Raw chunks, split here: fewer layers of generators suspended per open stream.
        self._stream, self._chunks = stream, stream.response.aiter_raw()
        self._pending, self._lines, self._parser = bytearray(), [], SSEParser()
        self.ends_with_turn = ends_with_turn

    async def detach(self, only: AsyncIterator[bytes] | None = None) -> None:
        """Close the open stream (``only`` when it is still the one read)."""
        if only is not None and self._chunks is not only:
            return
        stream, self._stream, self._chunks = self._stream, None, None
        self.ends_with_turn = False
        if stream is not None:
            await stream.aclose()

    async def _line(self) -> str | None:
        """The stream's next line, or ``None`` when it ended (then it is closed) or was
        replaced meanwhile (a later turn's stream: the caller reads that one next)."""
        while not self._lines:
            chunks = self._chunks
            if chunks is None:
                return None
            try:
                chunk = await chunks.__anext__()
            except (StopAsyncIteration, httpx.TransportError, httpx.StreamError):
                await self.detach(only=chunks)
                return None
            if self._chunks is not chunks:  # read from a stream replaced meanwhile
                return None
            self._pending += chunk
            *whole, rest = self._pending.split(b"\n")
            self._pending = bytearray(rest)
            self._lines = [line.rstrip(b"\r").decode("utf-8", "replace") for line in whole]
        return self._lines.pop(0)

    async def created(self) -> tuple[str, Any]:
        """The session id (and ``last_active_at``) from the first events of a create stream."""
        while True:
            event = await self.event("")
            if event is None:
                if not self.attached:
                    raise UsageError(f"{DIALECT}: the create stream ended before naming the "
                                     "session")
                continue
            session = event.get("session")
            if isinstance(session, Mapping) and isinstance(session.get("id"), str):
                return str(session["id"]), session.get("last_active_at")
            if isinstance(event.get("session_id"), str):
                return str(event["session_id"]), None

    async def event(self, session_id: str) -> dict[str, Any] | None:
        """The next event of the open stream, or ``None`` (a frame that is no event, a
        duplicate, or the stream's end: then it is closed and the next call reconnects)."""
        line = await self._line()
        if line is None:
            return None
        try:
            event = self._parser.feed(line)
        except WireFormatError as exc:  # a garbled frame: read the session again
            log.warning("%s: session %s: %s; reconnecting", DIALECT, session_id, exc)
            await self.detach()
            return None
        if event is DONE:
            await self.detach()
            return None
        if isinstance(event, dict) and self._deduper.accept(event):
            self._quiet = 0
            return event
        return None

    async def reconnect(self, session_id: str) -> dict[str, Any]:
        """Open the stream again, then read the session: its snapshot, shaped like its
        lifecycle event (``event_id`` ``resync-N``), is the event to handle first."""
        self.connecting = True  # from now on: a message sent meanwhile is seen by this stream
        try:
            if self._quiet:
                await asyncio.sleep(self._client.config.retry.delay(self._quiet, None))
            self._quiet += 1  # reset by the first event the new stream brings
            stream = await self.open(session_id)
            try:
                session = await self._client.retrieve_session(session_id)
            except BaseException:
                await stream.aclose()
                raise
        finally:
            self.connecting = False
        self.attach(stream)
        self._connects += 1
        return resync_event(session, self._connects)
