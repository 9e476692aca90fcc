"""API calls described once, sent by a sync `Sender` or an async `AsyncSender`.

A client describes each API method as a `Call` (method, path, body, query, headers, how its
answer is read, how it is retried) and each operation of several requests (polling, paging, a
stream read to its end) as a *flow*: a generator that yields `Call`, `Pause` and `Drain` steps
and is sent their outcomes, as httpx's ``Auth.auth_flow`` yields requests. `Sender` runs calls
and flows on an ``httpx.Client``, `AsyncSender` on an ``httpx.AsyncClient``: a client's sync
and async forms are thin methods over the same specs, so they cannot drift apart. Where the
calls go and how they are signed is the client's `Endpoint`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ._retries import RetryPolicy, asend_with_retries, send_with_retries

if TYPE_CHECKING:
    import httpx

__all__ = ["AsyncSender", "Call", "Drain", "Endpoint", "Flow", "Pause", "Reader", "Sender",
           "aread_events", "read_events"]

T = TypeVar("T")
E = TypeVar("E")
E_co = TypeVar("E_co", covariant=True)


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request of an API method, and how its answer becomes the method's result."""

    method: str
    path: str
    """Joined to the endpoint's base URL (the endpoint decides; it may take a whole URL)."""
    read: Callable[[httpx.Response], T]
    """The result of an answer; raises a `toolbridge.BackendError` for an error answer."""
    body: Any = None
    """The JSON body, or ``None`` for none."""
    params: Mapping[str, Any] | None = None
    headers: Mapping[str, str] | None = None
    stream: bool = False
    """An event stream: sent with ``stream=True``, its answer read by a `Reader`."""
    idempotent: bool = True
    """``False``: never re-sent once it may have reached the server (see `send_with_retries`)."""
    retry: RetryPolicy | None = None
    """The retry policy, when not the endpoint's."""
    what: str = ""
    """Names the request in a transport error (default: its method and path)."""
    resend: tuple[float, ...] = ()
    """Waits before sending it again while `resend_if` holds for the answer: a dialect's own
    retry on top of the policy's (e.g. a race the API documents)."""
    resend_if: Callable[[httpx.Response], bool] | None = None


@dataclass(frozen=True, slots=True)
class Pause:
    """A flow step: wait ``seconds`` (``time.sleep`` or ``asyncio.sleep``)."""

    seconds: float


class Reader(Protocol[E_co]):
    """Reads one event stream's SSE lines into events (one `Reader` per stream)."""

    @property
    def finished(self) -> bool:
        """The stream's end was read (``[DONE]``): no more lines are read."""

    def feed(self, line: str) -> E_co | None:
        """The event that ``line`` completes, or ``None``."""

    def ended(self, broke: Exception | None) -> None:
        """The lines ran out before `finished` (``broke``: the transport error that cut them);
        may raise (it is called outside the ``except`` that caught ``broke``)."""


@dataclass(frozen=True, slots=True)
class Drain(Generic[E]):
    """A flow step: open the stream of ``call``, give each event to ``take`` until it returns
    ``True`` or the stream ends, and close it."""

    call: Call[Any]
    reader: Reader[E]
    take: Callable[[E], bool]


Step = Call[Any] | Pause | Drain[Any]
Flow = Generator[Step, Any, T]
"""An operation of several requests: yields steps, is sent each one's outcome, returns T."""


class Endpoint(Protocol):
    """Where a client's calls go and how they are signed (its configuration)."""

    @property
    def retry(self) -> RetryPolicy: ...

    def bearer(self) -> Any:
        """The credential of the next request, e.g. a token (sync providers only)."""

    async def abearer(self) -> Any:
        """The credential of the next request (sync or async providers)."""

    def request_for(self, call: Call[Any], token: Any,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        """The request of ``call`` signed with ``token`` (what `bearer` or `abearer` gave;
        ``http``, the client that sends it, may build it)."""


def read_events(response: httpx.Response, reader: Reader[E]) -> Generator[E, None, None]:
    """The events of an open stream's lines (sync); `Reader.ended` when they run out first."""
    import httpx

    broke: Exception | None = None
    try:
        for line in response.iter_lines():
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
        async for line in response.aiter_lines():
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
        for delay in (*call.resend, None):
            response = send_with_retries(http, request, call.retry or self.endpoint.retry,
                                         idempotent=call.idempotent, stream=call.stream,
                                         what=call.what)
            if delay is None or call.resend_if is None or not call.resend_if(response):
                return response
            response.close()
            time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

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

    def _do(self, step: Step) -> Any:
        if isinstance(step, Call):
            return self.send(step)
        if isinstance(step, Pause):
            time.sleep(step.seconds)
            return None
        events = self.events(step.call, step.reader)
        try:
            for event in events:
                if step.take(event):
                    break
        finally:
            events.close()
        return None


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
        for delay in (*call.resend, None):
            response = await asend_with_retries(
                http, request, call.retry or self.endpoint.retry, idempotent=call.idempotent,
                stream=call.stream, what=call.what)
            if delay is None or call.resend_if is None or not call.resend_if(response):
                return response
            await response.aclose()
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

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

    async def _do(self, step: Step) -> Any:
        if isinstance(step, Call):
            return await self.send(step)
        if isinstance(step, Pause):
            import asyncio

            await asyncio.sleep(step.seconds)
            return None
        events = self.events(step.call, step.reader)
        try:
            async for event in events:
                if step.take(event):
                    break
        finally:
            await events.aclose()
        return None
