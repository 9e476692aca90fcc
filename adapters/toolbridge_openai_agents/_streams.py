"""Open Agents API event streams (sync and async): SSE decoded, de-duplicated by event_id."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from types import TracebackType
from typing import Any

import httpx

from ._client_common import DONE, EventDeduper, SSEParser

__all__ = ["AsyncEventStream", "EventStream"]

_BROKEN = (httpx.TransportError, httpx.StreamError)


class EventStream:
    """An open event stream (sync). Iterate for de-duplicated events; ``dropped`` tells why
    it ended."""

    def __init__(self, response: httpx.Response, deduper: EventDeduper) -> None:
        self.response = response
        self.deduper = deduper
        self.dropped = False
        self._events = self._read()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._events

    def _read(self) -> Generator[dict[str, Any], None, None]:
        parser = SSEParser()
        try:
            for line in self.response.iter_lines():
                event = parser.feed(line)
                if event is DONE:
                    return
                if isinstance(event, dict) and self.deduper.accept(event):
                    yield event
        except _BROKEN:
            self.dropped = True

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
        self.dropped = False
        self._events = self._read()

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events

    async def _read(self) -> AsyncGenerator[dict[str, Any], None]:
        parser = SSEParser()
        try:
            async for line in self.response.aiter_lines():
                event = parser.feed(line)
                if event is DONE:
                    return
                if isinstance(event, dict) and self.deduper.accept(event):
                    yield event
        except _BROKEN:
            self.dropped = True

    async def aclose(self) -> None:
        await self._events.aclose()
        await self.response.aclose()

    async def __aenter__(self) -> AsyncEventStream:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()
