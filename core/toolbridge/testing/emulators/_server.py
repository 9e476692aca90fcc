"""Running an emulator: fault injection and journaling around any ASGI app, on loopback."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from ...errors import UsageError
from ._faults import FailRule, Faults, StreamFaults
from ._journal import Journal, JournalEntry

__all__ = ["EmulatorServer", "RunningEmulator", "instrument", "run_app", "sse_frames"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ErrorBody = Callable[[int, str], Any]

JOURNAL_PATH = "/_emulator/journal"


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def instrument(app: ASGIApp, journal: Journal, faults: Faults, error_body: ErrorBody) -> ASGIApp:
    """Wrap ``app`` with the journal, ``latency_ms`` and ``fail_requests``.

    ``error_body(status, message)`` gives the dialect's real error shape for injected failures.
    A rule with ``after_processing`` lets ``app`` act on the request, then answers the
    failure instead of the reply ``app`` starts (the journal entry says ``dropped``).
    """
    counter = 0
    lock = threading.Lock()
    rules = {rule.nth: rule for rule in faults.fail_requests
             if rule.method is None and rule.matching is None}
    selective = [rule for rule in faults.fail_requests
                 if rule.method is not None or rule.matching is not None]
    matched = [0] * len(selective)

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        nonlocal counter
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        if scope["path"] == JOURNAL_PATH:
            await _send_json(send, 200, [e.to_dict() for e in journal.entries()])
            return
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        raw = b"".join(chunks)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        query = scope.get("query_string", b"").decode("latin-1")
        entry = journal.open(scope["method"], scope["path"], query, headers, _decode(raw))
        with lock:
            counter += 1
            nth = counter
            rule = rules.get(nth)
            for i, chosen in enumerate(selective):
                if _selects(chosen, scope["method"], scope["path"], raw):
                    matched[i] += 1
                    if matched[i] == chosen.nth and rule is None:
                        rule = chosen
        if faults.latency_ms:
            await asyncio.sleep(faults.latency_ms / 1000)
        if rule is not None and not rule.after_processing:
            await _fail(send, entry, rule, error_body, nth)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # waits for disconnect
            replayed = True
            return {"type": "http.request", "body": raw, "more_body": False}

        if rule is None:
            await app(scope, replay, _recording(send, entry))
            return
        with suppress(_ReplyDropped):
            await app(scope, replay, _dropping(send, entry, rule, error_body, nth))

    return wrapped


def _selects(rule: FailRule, method: str, path: str, raw: bytes) -> bool:
    """Whether ``rule`` counts this request (its ``method`` and ``matching``)."""
    if rule.method is not None and rule.method.upper() != method.upper():
        return False
    if rule.matching is None:
        return True
    return rule.matching in path or rule.matching in raw.decode("utf-8", "replace")


class _ReplyDropped(Exception):
    """Raised into an app whose reply an ``after_processing`` rule replaced."""


async def _fail(send: Send, entry: JournalEntry, rule: Any, error_body: ErrorBody,
                nth: int) -> None:
    extra = {"retry-after": f"{rule.retry_after:g}"} if rule.retry_after is not None else {}
    when = "after processing it" if rule.after_processing else "before processing it"
    body = error_body(rule.status, f"injected failure of request {nth} ({when})")
    entry.status, entry.response = rule.status, body
    await _send_json(send, rule.status, body, extra)


def _dropping(send: Send, entry: JournalEntry, rule: Any, error_body: ErrorBody,
              nth: int) -> Send:
    """A ``send`` that answers the failure when the app starts its reply, and stops the app."""

    async def drop(message: Message) -> None:
        if message["type"] == "http.response.start":
            entry.dropped = int(message["status"])
            if rule.hold:
                await asyncio.sleep(rule.hold)
            await _fail(send, entry, rule, error_body, nth)
            raise _ReplyDropped(f"reply {message['status']} of request {nth} dropped")

    return drop


def _recording(send: Send, entry: JournalEntry) -> Send:
    parts: list[bytes] = []
    streaming = False

    async def record(message: Message) -> None:
        nonlocal streaming
        if message["type"] == "http.response.start":
            entry.status = message["status"]
            streaming = any(k.lower() == b"content-type" and v.startswith(b"text/event-stream")
                            for k, v in message.get("headers", []))
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            if streaming and body:
                entry.events.append(body.decode("utf-8", "replace"))
            elif not streaming:
                parts.append(body)
                if not message.get("more_body"):
                    entry.response = _decode(b"".join(parts))
        await send(message)

    return record


async def _send_json(send: Send, status: int, body: Any, headers: dict[str, str] | None = None
                     ) -> None:
    raw = json.dumps(body).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    head += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": raw})


class StreamDropped(Exception):
    """Raised inside a stream body to cut the connection without ending the stream."""


async def sse_frames(
    events: AsyncIterator[tuple[str | None, Any]], faults: StreamFaults, *,
    done: bytes | None = None
) -> AsyncIterator[bytes]:
    """SSE frames for ``(event_name, data)`` pairs, applying stream faults.

    ``drop_stream_after=N`` cuts the connection after N events (the client sees a broken
    stream, not a clean end); ``duplicate_events=N`` sends every Nth event twice. ``done`` is a
    final frame (e.g. ``b"data: [DONE]\\n\\n"``) sent when the events end normally.
    """
    sent = 0
    async for name, data in events:
        frame = (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
        copies = 2 if faults.duplicate_events and (sent + 1) % faults.duplicate_events == 0 else 1
        for _ in range(copies):
            yield frame.encode()
        sent += 1
        if faults.drop_stream_after is not None and sent >= faults.drop_stream_after:
            raise StreamDropped(f"stream dropped after {sent} events (fault injection)")
    if done:
        yield done


@dataclass
class RunningEmulator:
    """An emulator serving on loopback."""

    base_url: str
    """``http://127.0.0.1:<port>``; point a client or SDK's base URL here."""
    journal: Journal
    state: Any
    """The dialect's emulator object, for inspecting sessions, runs, tools."""

    def url(self, path: str = "") -> str:
        return self.base_url + path


class _HideInjectedDrops(logging.Filter):
    """uvicorn logs a stream cut on purpose as an ASGI crash; it is a fault we injected."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1],
                                                   (StreamDropped, _ReplyDropped)))


_DROP_FILTER = _HideInjectedDrops()


@functools.cache
def _prompt_server_class() -> type[Any]:
    """`uvicorn.Server`, stopping as soon as it is told to (uvicorn is imported on first use).

    uvicorn, made for long-lived servers, notices ``should_exit`` at its next 0.1 s tick and
    then pauses another 0.1 s before draining connections: 0.15 s per stop, paid by every
    emulator a test suite starts (hundreds). This one wakes on `exit` and drains by polling
    every few milliseconds, with the same steps and the same graceful timeout.
    """
    import uvicorn

    class PromptServer(uvicorn.Server):
        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self._wake: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

        def exit(self) -> None:
            """Stop serving (from any thread)."""
            self.should_exit = True
            if self._wake is not None:
                loop, event = self._wake
                with suppress(RuntimeError):  # the loop has already ended
                    loop.call_soon_threadsafe(event.set)

        async def main_loop(self) -> None:
            self._wake = (asyncio.get_running_loop(), asyncio.Event())
            while not await self.on_tick(0):  # tick 0: refreshes the Date header, as each 1 s
                with suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake[1].wait(), 1.0)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            for server in self.servers:
                server.close()
            for sock in sockets or []:
                sock.close()
            state = self.server_state
            for connection in list(state.connections):
                connection.shutdown()
            loop = asyncio.get_running_loop()
            grace = self.config.timeout_graceful_shutdown
            deadline = None if grace is None else loop.time() + grace
            while (state.connections or state.tasks) and (deadline is None
                                                          or loop.time() < deadline):
                await asyncio.sleep(0.005)
            for task in state.tasks:
                task.cancel()
            for server in self.servers:
                await server.wait_closed()
            await self.lifespan.shutdown()

    return PromptServer


class EmulatorServer:
    """Serves an ASGI app with uvicorn in a background thread; over TLS with ``tls``
    (``(certificate file, key file)``, PEM)."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0,
                 tls: tuple[str, str] | None = None) -> None:
        import uvicorn

        error_log = logging.getLogger("uvicorn.error")
        if _DROP_FILTER not in error_log.filters:
            error_log.addFilter(_DROP_FILTER)

        # IPPROTO_TCP named, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only
        # on connections whose socket says TCP. With it on, a small SSE frame written while
        # the previous one is unacknowledged waits for the client's delayed ACK (40 ms).
        if not 0 <= port <= 65535:
            raise UsageError(f"port: {port} is not a TCP port (0 to 65535; 0 picks a free one)")
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.host, self.port = self._sock.getsockname()[:2]
        self.scheme = "https" if tls else "http"
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=1, ssl_certfile=tls and tls[0],
                                ssl_keyfile=tls and tls[1])
        self._server = _prompt_server_class()(config)
        self._thread = threading.Thread(target=self._run, name=f"emulator:{self.port}", daemon=True)

    def _run(self) -> None:
        self._server.run(sockets=[self._sock])

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def start(self) -> None:
        self._thread.start()
        for _ in range(500):
            if self._server.started:
                return
            if not self._thread.is_alive():
                break
            threading.Event().wait(0.01)
        raise RuntimeError("emulator server did not start")

    def stop(self) -> None:
        self._server.exit()
        self._thread.join(timeout=5)
        self._sock.close()


@contextmanager
def run_app(app: ASGIApp, state: Any, journal: Journal, host: str = "127.0.0.1", port: int = 0,
            tls: tuple[str, str] | None = None) -> Iterator[RunningEmulator]:
    """Run ``app`` on loopback for the duration of the block (over TLS with ``tls``); yields
    its `RunningEmulator` (``state``: the emulator object it shows)."""
    server = EmulatorServer(app, host, port, tls)
    server.start()
    try:
        yield RunningEmulator(server.base_url, journal, state)
    finally:
        server.stop()
