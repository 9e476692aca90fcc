"""One HTTP/1.1 connection of `exclusive_transport`: h11's state machine over a `_network`
stream, one request at a time, and a response body that keeps no chunk between two reads.

httpcore reads a body through a chain of suspended generators, each holding the last chunk it
handed on (h11's extracted ``bytearray`` and its ``bytes`` copy), besides a connection object,
its locks and trace contexts: an event stream held open per conversation pays for all of them
while it waits. Here the body is an iterator object whose ``__anext__`` returns the chunk it
read (nothing refers to it afterwards), the connection is h11's state and the network stream.
Errors are httpcore's (the network backend's), mapped to httpx's by the transport.
"""

from __future__ import annotations

import ssl
import time

import h11
import httpcore

from ._network import network_backend

__all__ = ["Connection", "ResponseHead"]

READ_SIZE = 64 * 1024
"""Most bytes taken from the connection's buffer per read."""
MAX_HEAD = 100 * 1024
"""Largest response head (status line and headers) accepted, as httpcore's."""

Origin = tuple[bytes, bytes, int]
"""Scheme, host and port."""


class ResponseHead:
    """What a response's head says: status, reason, headers (raw), HTTP version."""

    __slots__ = ("headers", "reason", "status", "version")

    def __init__(self, event: h11.Response) -> None:
        self.status = event.status_code
        self.reason = bytes(event.reason)
        self.version = b"HTTP/" + bytes(event.http_version)
        self.headers: list[tuple[bytes, bytes]] = list(event.headers.raw_items())


class Connection:
    """A connection to one origin, carrying one request at a time; reusable once a response
    was read to its end (`reusable`)."""

    __slots__ = ("_expires_at", "_state", "_stream", "origin")

    def __init__(self, origin: Origin, stream: httpcore.AsyncNetworkStream) -> None:
        self.origin = origin
        self._stream = stream
        self._state = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        self._expires_at: float | None = None

    @classmethod
    async def open(cls, origin: Origin, tls: ssl.SSLContext, timeout: float | None
                   ) -> Connection:
        """A new connection to ``origin`` (TLS with ``tls`` for ``https``)."""
        scheme, host, port = origin
        stream = await network_backend().connect_tcp(host.decode("ascii"), port, timeout)
        if scheme == b"https":
            try:
                stream = await stream.start_tls(tls, host.decode("ascii"), timeout)
            except BaseException:
                await stream.aclose()
                raise
        return cls(origin, stream)

    async def send_head(self, method: bytes, target: bytes,
                        headers: list[tuple[bytes, bytes]], timeout: float | None) -> None:
        """Write a request's line and headers (they say how its body is framed)."""
        self._expires_at = None
        await self._write(h11.Request(method=method, target=target, headers=headers),
                          timeout)

    async def send_body(self, part: bytes, timeout: float | None) -> None:
        """Write a part of the request's body (``b""``: the body is complete)."""
        await self._write(h11.Data(data=part) if part else h11.EndOfMessage(), timeout)

    async def _write(self, event: h11.Event, timeout: float | None) -> None:
        data = self._send(event)
        if data:
            await self._stream.write(data, timeout)

    def _send(self, event: h11.Event) -> bytes | None:
        try:
            return self._state.send(event)
        except h11.LocalProtocolError as exc:
            raise httpcore.LocalProtocolError(str(exc)) from None

    async def receive_head(self, timeout: float | None) -> ResponseHead:
        """The response's head (informational answers skipped)."""
        while True:
            event = await self.next_event(timeout)
            if isinstance(event, h11.Response):
                return ResponseHead(event)
            if not isinstance(event, h11.InformationalResponse):
                raise httpcore.RemoteProtocolError("the server sent no response")

    async def next_event(self, timeout: float | None) -> h11.Event:
        """h11's next event, reading the connection as it needs; a connection that ends
        before the message does is a `RemoteProtocolError`."""
        state = self._state
        while True:
            try:
                event = state.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpcore.RemoteProtocolError(str(exc)) from None
            if event is h11.NEED_DATA:
                data = await self._stream.read(READ_SIZE, timeout)
                if not data and state.their_state is h11.SEND_RESPONSE:
                    raise httpcore.RemoteProtocolError(
                        "the server disconnected without sending a response")
                state.receive_data(data)
            elif isinstance(event, h11.ConnectionClosed):
                raise httpcore.RemoteProtocolError("the server closed the connection")
            elif isinstance(event, h11.Event):
                return event
            else:  # PAUSED: nothing is read past a response's end
                raise httpcore.RemoteProtocolError("read past the end of the response")

    def finished(self, keepalive_expiry: float) -> bool:
        """After a response read to its end: ready for the next request (then it expires
        ``keepalive_expiry`` seconds from now), else to be closed."""
        state = self._state
        if state.our_state is not h11.DONE or state.their_state is not h11.DONE:
            return False
        try:
            state.start_next_cycle()
        except h11.LocalProtocolError:
            return False
        self._expires_at = time.monotonic() + keepalive_expiry
        return True

    def reusable(self, origin: Origin) -> bool:
        """An idle connection to ``origin`` that has not expired, nor been closed or spoken
        on by the server."""
        return (origin == self.origin and self._state.our_state is h11.IDLE
                and self._expires_at is not None and time.monotonic() < self._expires_at
                and not self._stream.get_extra_info("is_readable"))

    async def aclose(self) -> None:
        await self._stream.aclose()
