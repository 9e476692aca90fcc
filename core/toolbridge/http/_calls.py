"""API calls described once, and operations of several calls (flows), for `Sender` and
`AsyncSender` (`_senders`) to send.

A client describes each API method as a `Call` (method, path, body, query, headers, how its
answer is read, how it is retried) and each operation of several requests (polling, paging, a
stream read to its end) as a *flow*: a generator that yields `Call`, `Pause` and `Drain` steps
and is sent their outcomes, as httpx's ``Auth.auth_flow`` yields requests. `Sender` runs calls
and flows on an ``httpx.Client``, `AsyncSender` on an ``httpx.AsyncClient``: a client's sync
and async forms are thin methods over the same specs, so they cannot drift apart. Where the
calls go and how they are signed is the client's `Endpoint`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ._retries import RetryPolicy

if TYPE_CHECKING:
    import httpx

__all__ = ["Assembler", "Call", "Drain", "Emit", "Endpoint", "Flow", "Open", "Pause", "Reader",
           "Relay", "Step", "assembled"]

T = TypeVar("T")
E = TypeVar("E")
E_co = TypeVar("E_co", covariant=True)
E_contra = TypeVar("E_contra", contravariant=True)


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


@dataclass(frozen=True, slots=True)
class Open(Generic[E]):
    """An event-flow step (`Sender.iterate`): open the stream of ``call``; the outcome is the
    open stream, for `Relay` (the flow's streams are closed when it ends or is closed)."""

    call: Call[Any]
    reader: Reader[E]


@dataclass(frozen=True, slots=True)
class Relay:
    """An event-flow step: hand each event of an open ``stream`` (`Open`'s outcome) to the
    flow's consumer, then close it; the outcome is how many there were."""

    stream: Any


@dataclass(frozen=True, slots=True)
class Emit:
    """An event-flow step: hand ``value`` to the flow's consumer."""

    value: Any


Step = Call[Any] | Pause | Drain[Any] | Open[Any] | Relay | Emit
Flow = Generator[Step, Any, T]
"""An operation of several requests: yields steps, is sent each one's outcome, returns T (an
event flow, which `Sender.iterate` runs, hands values to its consumer as it goes)."""


class Assembler(Protocol[E_contra]):
    """Builds one answer of a stream's events (`assembled`)."""

    @property
    def finished(self) -> bool:
        """The answer is whole: its last event was fed."""

    def feed(self, event: E_contra) -> None:
        """Take the stream's next event."""


A = TypeVar("A", bound=Assembler[Any])


def assembled(call: Call[Any], reader: Callable[[], Reader[E]], assembler: Callable[[], A],
              finish: Callable[[A], T], retry: RetryPolicy, what: str,
              on_event: Callable[[E], None] | None = None) -> Flow[T]:
    """A flow streaming ``call`` into a new ``assembler()`` (each event fed to it, then given
    to ``on_event``) and returning ``finish(assembler)``; a stream that ends before the
    assembler is `finished` is sent again from the start after ``retry``'s delay, and after
    ``retry.max_attempts`` such ends a `toolbridge.BackendError` names ``what``."""
    from ..errors import BackendError

    for attempt in range(1, retry.max_attempts + 1):
        built = assembler()

        def take(event: E, built: A = built) -> bool:
            built.feed(event)
            if on_event is not None:
                on_event(event)
            return False

        yield Drain(call, reader(), take)
        if built.finished:
            return finish(built)
        yield Pause(retry.delay(attempt, None))
    raise BackendError(f"{what}: the stream broke off {retry.max_attempts} times before it "
                       "finished")


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
