"""`Sender` and `AsyncSender`: the calls and flows of `_calls` sent on httpx, sync or async."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING, Any, TypeVar

from ._calls import Call, Drain, Emit, Endpoint, Flow, Open, Pause, Reader, Relay, Step
from ._lines import aiter_lines, iter_lines
from ._retries import asend_with_retries, send_with_retries

if TYPE_CHECKING:
    import httpx

__all__ = ["AsyncSender", "Sender", "aread_events", "read_events"]

T = TypeVar("T")
E = TypeVar("E")


def read_events(response: httpx.Response, reader: Reader[E]) -> Generator[E, None, None]:
    """The events of an open stream's lines (sync); `Reader.ended` when they run out first."""
    import httpx

    broke: Exception | None = None
    try:
        for line in iter_lines(response):
            event = reader.feed(line)
            if event is not None:
                yield event
            if reader.finished:
                return
    except (httpx.TransportError, httpx.StreamError) as exc:
        broke = exc
    reader.ended(broke)


async def aread_events(response: httpx.Response, reader: Reader[E]
                       ) -> AsyncGenerator[E, None]:
    """Async form of `read_events`."""
    import httpx

    broke: Exception | None = None
    try:
        async for line in aiter_lines(response):
            event = reader.feed(line)
            if event is not None:
                yield event
            if reader.finished:
                return
    except (httpx.TransportError, httpx.StreamError) as exc:
        broke = exc
    reader.ended(broke)


class Sender:
    """Sends calls and runs flows on an ``httpx.Client`` (``streams``: the one for event
    streams, default ``http``)."""

    def __init__(self, endpoint: Endpoint, http: httpx.Client,
                 streams: httpx.Client | None = None) -> None:
        self.endpoint = endpoint
        self.http = http
        self.streams = streams or http

    def request(self, call: Call[Any]) -> httpx.Request:
        """The request ``call`` sends (signed now)."""
        http = self.streams if call.stream else self.http
        return self.endpoint.request_for(call, self.endpoint.bearer(), http)

    def response(self, call: Call[Any], request: httpx.Request | None = None
                 ) -> httpx.Response:
        """The last answer to ``call`` after the retries (streamed when ``call.stream``);
        ``request``: its request, when built already."""
        if request is None:
            request = self.request(call)
        http = self.streams if call.stream else self.http
        policy = call.retry or self.endpoint.retry
        for delay in call.resend:
            response = send_with_retries(http, request, policy, idempotent=call.idempotent,
                                         stream=call.stream, what=call.what)
            if call.resend_if is None or not call.resend_if(response):
                return response
            response.close()
            time.sleep(delay)
        return send_with_retries(http, request, policy, idempotent=call.idempotent,
                                 stream=call.stream, what=call.what)

    def send(self, call: Call[T]) -> T:
        """``call``'s result."""
        return call.read(self.response(call))

    def open(self, call: Call[Any], request: httpx.Request | None = None) -> httpx.Response:
        """The open answer of a stream call (``call.read`` raises for an error answer)."""
        response = self.response(call, request)
        if not response.is_success:
            try:
                response.read()
            finally:
                response.close()
            call.read(response)
        return response

    def events(self, call: Call[Any], reader: Reader[E], request: httpx.Request | None = None
               ) -> Generator[E, None, None]:
        """The events of a stream call, read by ``reader`` (opened on the first ``next``)."""
        response = self.open(call, request)
        try:
            yield from read_events(response, reader)
        finally:
            response.close()

    def run(self, flow: Flow[T]) -> T:
        """Run ``flow`` to its result."""
        outcome: Any = None
        try:
            while True:
                try:
                    step = flow.send(outcome)
                except StopIteration as done:
                    result: T = done.value
                    return result
                outcome = self._do(step)
        finally:
            flow.close()

    def iterate(self, flow: Flow[None]) -> Generator[Any, None, None]:
        """The values an event flow hands on (`Emit`, `Relay`), as it runs."""
        opened: list[tuple[httpx.Response, Generator[Any, None, None]]] = []
        outcome: Any = None
        try:
            while True:
                try:
                    step = flow.send(outcome)
                except StopIteration:
                    return
                if isinstance(step, Emit):
                    yield step.value
                    outcome = None
                elif isinstance(step, Open):
                    response = self.open(step.call)
                    outcome = (response, read_events(response, step.reader))
                    opened.append(outcome)
                elif isinstance(step, Relay):
                    outcome = 0
                    for outcome, event in enumerate(step.stream[1], 1):  # noqa: B007
                        yield event
                    opened.remove(step.stream)
                    _close(*step.stream)
                else:
                    outcome = self._do(step)
        finally:
            for stream in opened:
                _close(*stream)
            flow.close()

    def _do(self, step: Step) -> Any:
        if isinstance(step, Call):
            return self.send(step)
        if isinstance(step, Pause):
            time.sleep(step.seconds)
            return None
        if not isinstance(step, Drain):
            raise TypeError(f"{type(step).__name__} is a step of event flows (iterate)")
        events = self.events(step.call, step.reader)
        try:
            for event in events:
                if step.take(event):
                    break
        finally:
            events.close()
        return None


def _close(response: httpx.Response, events: Generator[Any, None, None]) -> None:
    events.close()
    response.close()


async def _aclose(response: httpx.Response, events: AsyncGenerator[Any, None]) -> None:
    await events.aclose()
    await response.aclose()


class AsyncSender:
    """Async form of `Sender`, on an ``httpx.AsyncClient``."""

    def __init__(self, endpoint: Endpoint, http: httpx.AsyncClient,
                 streams: httpx.AsyncClient | None = None) -> None:
        self.endpoint = endpoint
        self.http = http
        self.streams = streams or http

    async def request(self, call: Call[Any]) -> httpx.Request:
        http = self.streams if call.stream else self.http
        return self.endpoint.request_for(call, await self.endpoint.abearer(), http)

    async def response(self, call: Call[Any], request: httpx.Request | None = None
                       ) -> httpx.Response:
        import asyncio  # loaded by the running loop already; not by importing this module

        if request is None:
            request = await self.request(call)
        http = self.streams if call.stream else self.http
        policy = call.retry or self.endpoint.retry
        for delay in call.resend:
            response = await asend_with_retries(http, request, policy, idempotent=call.idempotent,
                                                stream=call.stream, what=call.what)
            if call.resend_if is None or not call.resend_if(response):
                return response
            await response.aclose()
            await asyncio.sleep(delay)
        return await asend_with_retries(http, request, policy, idempotent=call.idempotent,
                                        stream=call.stream, what=call.what)

    async def send(self, call: Call[T]) -> T:
        return call.read(await self.response(call))

    async def open(self, call: Call[Any], request: httpx.Request | None = None
                   ) -> httpx.Response:
        response = await self.response(call, request)
        if not response.is_success:
            try:
                await response.aread()
            finally:
                await response.aclose()
            call.read(response)
        return response

    async def events(self, call: Call[Any], reader: Reader[E],
                     request: httpx.Request | None = None) -> AsyncGenerator[E, None]:
        response = await self.open(call, request)
        try:
            async for event in aread_events(response, reader):
                yield event
        finally:
            await response.aclose()

    async def run(self, flow: Flow[T]) -> T:
        outcome: Any = None
        try:
            while True:
                try:
                    step = flow.send(outcome)
                except StopIteration as done:
                    result: T = done.value
                    return result
                outcome = await self._do(step)
        finally:
            flow.close()

    async def iterate(self, flow: Flow[None]) -> AsyncGenerator[Any, None]:
        opened: list[tuple[httpx.Response, AsyncGenerator[Any, None]]] = []
        outcome: Any = None
        try:
            while True:
                try:
                    step = flow.send(outcome)
                except StopIteration:
                    return
                if isinstance(step, Emit):
                    yield step.value
                    outcome = None
                elif isinstance(step, Open):
                    response = await self.open(step.call)
                    outcome = (response, aread_events(response, step.reader))
                    opened.append(outcome)
                elif isinstance(step, Relay):
                    outcome = count = 0
                    async for event in step.stream[1]:
                        count += 1
                        yield event
                    outcome = count
                    opened.remove(step.stream)
                    await _aclose(*step.stream)
                else:
                    outcome = await self._do(step)
        finally:
            for stream in opened:
                await _aclose(*stream)
            flow.close()

    async def _do(self, step: Step) -> Any:
        if isinstance(step, Call):
            return await self.send(step)
        if isinstance(step, Pause):
            import asyncio

            await asyncio.sleep(step.seconds)
            return None
        if not isinstance(step, Drain):
            raise TypeError(f"{type(step).__name__} is a step of event flows (iterate)")
        events = self.events(step.call, step.reader)
        try:
            async for event in events:
                if step.take(event):
                    break
        finally:
            await events.aclose()
        return None
