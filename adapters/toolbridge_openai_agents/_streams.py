"""Open Agents API event streams (sync and async): SSE decoded, de-duplicated by event_id."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import TracebackType
from typing import Any

import httpx

from toolbridge.http import Emit, Flow, Open, Pause, Relay, aread_events, read_events

from ._client_common import DONE, EventDeduper, Requests, SSEParser, resync_event

__all__ = ["AsyncEventStream", "EventStream", "SessionEventReader", "follow"]


class SessionEventReader:
    """A `toolbridge.http.Reader` of session events: decoded, repeats dropped; ``dropped``
    when the stream broke off."""

    __slots__ = ("deduper", "dropped", "finished", "parser")

    def __init__(self, deduper: EventDeduper) -> None:
        self.parser = SSEParser()
        self.deduper = deduper
        self.finished = False
        self.dropped = False

    def feed(self, line: str) -> dict[str, Any] | None:
        event = self.parser.feed(line)
        if event is DONE:
            self.finished = True
            return None
        return event if isinstance(event, dict) and self.deduper.accept(event) else None

    def ended(self, broke: Exception | None) -> None:
        self.dropped = broke is not None


class EventStream:
    """An open event stream (sync). Iterate for de-duplicated events; ``dropped`` tells why
    it ended."""

    def __init__(self, response: httpx.Response, deduper: EventDeduper) -> None:
        self.response = response
        self.deduper = deduper
        self._reader = SessionEventReader(deduper)
        self._events = read_events(response, self._reader)

    @property
    def dropped(self) -> bool:
        return self._reader.dropped

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._events

    def close(self) -> None:
        self._events.close()
        self.response.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncEventStream:
    """An open event stream (async); see `EventStream`."""

    def __init__(self, response: httpx.Response, deduper: EventDeduper) -> None:
        self.response = response
        self.deduper = deduper
        self._reader = SessionEventReader(deduper)
        self._events = aread_events(response, self._reader)

    @property
    def dropped(self) -> bool:
        return self._reader.dropped

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events

    async def aclose(self) -> None:
        await self._events.aclose()
        await self.response.aclose()

    async def __aenter__(self) -> AsyncEventStream:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


def follow(calls: Requests, session_id: str) -> Flow[None]:
    """``follow_session``'s events: after each (re)connect, a session snapshot shaped like its
    lifecycle event (``event_id`` ``resync-N``), then live events; reconnects when a stream
    ends (waiting the retry policy's backoff while reconnects bring nothing new)."""
    deduper = EventDeduper()
    count = quiet = 0
    while True:
        stream = yield Open(calls._stream_events(session_id), SessionEventReader(deduper))
        count += 1
        session = yield calls._retrieve_session(session_id)
        yield Emit(resync_event(session, count))
        received = yield Relay(stream)
        quiet = quiet + 1 if received == 0 else 0
        if quiet:
            yield Pause(calls.config.retry.delay(quiet, None))
