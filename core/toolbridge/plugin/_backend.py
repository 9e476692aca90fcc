"""The serve driver's seam: `Backend` (one conversation), `Connection` (a worker's link to a
backend service), and `Step` (what a backend says next).

A dialect provides these and no loop of its own: the core driver (`toolbridge.serve`) reads
steps, answers their calls through the toolbox's pipeline, submits the answers and applies the
one recovery rule. What a dialect author implements, and what the driver promises in return:

``Connection`` (from the declared serve backend's `Serves.connect`, one per worker) holds the
HTTP client and whatever set-up several conversations share (an assistant, a CES app's
tools). `Connection.backend` makes the `Backend` of one conversation: a new one, or an
existing one by id.
`Connection.discover` lists conversations waiting for answers, where the service can list
them (`can_discover`).

``Backend`` (one conversation) answers the driver through these calls, each of which may raise
(the driver then asks `retryable`):

``send(message)``
    Start a user turn. Returns the first `Step`, or ``None`` when steps arrive through `next`.
    The driver never sends a user message twice: after a failure that does not tell whether
    the message reached the service (one `retryable` says to recover from, a worker lost), it
    asks `sent`.
``sent(message)``
    After such a failure: ``True`` when the conversation's latest user message is
    ``message`` (the turn started; `resume` then continues that turn), ``False`` when it
    never arrived (the driver sends it), ``None`` when the service cannot tell (the turn
    ends ``failed``). A new conversation whose creation reply was lost is found by
    `message_key`. Read from what the service lists (session items, thread messages,
    conversation items); text is compared, so a message that repeats the previous turn's
    text counts as arrived (never sent twice).
``open()``
    Before the first `send` of a new conversation: create it empty where the service can,
    so its id is known (and recorded) before any message goes.
``resume()``
    Pick up an existing conversation (serving one that already waits): its current `Step`,
    or ``None`` when it arrives through `next`.
``next()``
    Only for a `StreamingBackend` (a capability: subclass it): wait for the next step (a
    stream with a polling fallback; reconnecting is the backend's business). The driver reads
    it concurrently with answering calls, so a step may list calls that are already in flight
    or answered; the driver skips those unless the step is `Step.fresh`.
``submit(step, body)``
    Send ``body`` (the dialect's `Dialect.write_results` of some or all of the step's calls)
    idempotently: the same body sent twice must not answer a call twice (an idempotency key
    reused across retries, or recognising an already accepted submission). Returns the next
    `Step` when the answer to the request carries it (CES ``runSession``, Responses, Chat,
    Assistants with streaming), else ``None`` (it arrives through `next`). A backend that
    recognises that its answer was accepted but the reply that carried the next step is lost
    raises `toolbridge.errors.ReplyLostError`: the conversation ends ``failed``.
``state()``
    After a failure: the conversation's current step read from the service (`Step.fresh`), or
    ``None`` when the service cannot tell (`lists_pending` false).
``retryable(error)``
    Whether the driver should recover from ``error`` (read `state`, answer what is pending
    from the store, resubmit) rather than end the conversation ``failed``. Usage errors never
    are.
``checkpoint()`` / ``restore(checkpoint)``
    A small JSON-compatible cursor (ids, a message list for a stateless backend) the driver
    persists with the answer it is about to send when `lists_pending` is false, and hands back
    to a new backend after a restart.

The core contract is `Backend` with its two submission flags: `lists_pending` (`state` lists
the pending calls and whether a submission landed; when false the driver persists each answer
before sending it and resends that same answer after a failure) and `partial_submit` (results
of one step may be submitted separately, as they finish; else all together in one body).
Capabilities are separate classes a backend or connection subclasses: `StreamingBackend`
(steps come through `next`; `Backend.streams` says whether a backend is one) and
`DiscoveringConnection` (`discover` lists waiting conversations; `Connection.can_discover`).

The driver's promises: every call of a step is answered through the toolbox (so the store
answers a call it already completed and never re-runs a started side-effecting one); results
that are ready together go in one `submit` when `partial_submit`, else a step's results go
together; `submit` is never called concurrently for one conversation; a backend is used by one
driver at a time.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..model import ToolDefinition, ToolResult

if TYPE_CHECKING:
    from ._translated import PendingCalls

__all__ = ["Backend", "Connection", "DiscoveringConnection", "Step", "StepStatus",
           "StreamingBackend", "Translations"]

StepStatus = Literal["requires_action", "completed", "failed", "expired", "cancelled",
                     "incomplete", "awaiting_approval"]
"""``requires_action``: calls are pending. The others end the turn (``completed`` with a
reply; ``incomplete``: the backend stopped short, e.g. a Responses ``incomplete`` response;
``awaiting_approval``: calls wait for a person's decision, docs/approvals.md)."""


class Translations(Protocol):
    """What the driver asks of a backend's dialect (any `Dialect` is one)."""

    @property
    def name(self) -> str: ...
    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls: ...
    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]: ...
    def render_tools(self, tools: Sequence[ToolDefinition], *, policy: Any = ...) -> Any: ...


@dataclass(frozen=True, slots=True)
class Step:
    """What a conversation's backend is waiting for, or how the current turn ended."""

    status: StepStatus
    payload: Mapping[str, Any] | None = None
    """``requires_action``: the wire payload holding the pending calls, as the dialect's
    `Dialect.read_calls` reads it (a session, a run, a ``runSession`` answer)."""
    reply: str | None = None
    """``completed``: the turn's final text."""
    error: str | None = None
    """A final status other than ``completed``: the backend's reason."""
    detail: Any = None
    """The backend object behind a final status (a run, a session), for the transcript."""
    fresh: bool = False
    """Read from the service just now (`Backend.state`, a reconnect): a call listed here that
    was already submitted was not received, and is answered (from the store) again."""
    deadline: float | None = None
    """Epoch seconds after which the backend refuses results (an Assistants run's
    ``expires_at``): a call whose tool cannot finish in time is answered with an error
    instead of being started."""
    margin: float = 0.0
    """Seconds before `deadline` by which a call must finish to be started."""

    @property
    def final(self) -> bool:
        """Whether the turn ended (no call is pending)."""
        return self.status != "requires_action"


class Backend(abc.ABC):
    """One conversation on one backend, as the serve driver sees it (see the module docs)."""

    dialect: Translations
    """The `Dialect` instance that reads this conversation's payloads and writes its answers
    (bound to the conversation where the dialect needs it, e.g. a CES session)."""
    conversation: str = ""
    """The conversation's id (session, thread, CES session), once known."""
    provider: str = ""
    """The service's ``gen_ai.provider.name`` for telemetry (``openai``, ``azure.ai.openai``,
    ``gcp.vertex_ai``, ...); empty when unknown."""
    lists_pending: bool = True
    """`state` lists the pending calls, so a lost submission is seen and answered again
    (an instance may differ from its class: Responses continued by a conversation can,
    by ``previous_response_id`` cannot)."""
    partial_submit: bool = False
    """Results of one step may be submitted separately, as they finish."""
    message_key: str = ""
    """The key of the user message `send` and `sent` are about to handle, set by the driver
    (or the Temporal workflow) before them: the same for every attempt of that message, by
    this driver or a successor (`toolbridge.serve.message_key`: from the conversation's
    handle and the turn). A backend whose service honours a client key sends it (an
    ``Idempotency-Key``); one that creates a conversation with its first message stores it
    in the conversation's metadata, so that `sent` finds a conversation whose creation
    reply was lost. Empty: none given."""

    @abc.abstractmethod
    async def send(self, message: str) -> Step | None:
        """Start a user turn with ``message``; its first step, or ``None`` (see `next`)."""

    async def open(self) -> None:
        """Create the conversation before its first message, where the service can (an empty
        thread, an empty conversation) and set `conversation`: the driver calls it before
        the first `send` of a new conversation and the Temporal workflow records the id
        first, so a successor sends into that conversation, never into a second one (a
        second empty one, after a lost reply, holds nothing). Default: nothing (the first
        `send` creates it; a backend that does so finds it by `message_key`)."""
        return None

    async def resume(self) -> Step | None:
        """The current step of an existing conversation (to serve one that already waits);
        after `sent` said ``True``, the step of the turn that message started."""
        return await self.state()

    async def sent(self, message: str) -> bool | None:
        """Whether ``message`` reached the service after a `send` whose outcome is unknown:
        ``True`` (it is the latest user message), ``False`` (send it), ``None`` (cannot
        tell; the default)."""
        return None

    @abc.abstractmethod
    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        """Submit ``body`` (answers to ``step``'s calls) idempotently; the next step, or
        ``None`` when it arrives through `next`."""

    @abc.abstractmethod
    async def state(self) -> Step | None:
        """The current step read from the service (`Step.fresh`), or ``None`` if unknowable."""

    @property
    def streams(self) -> bool:
        """Steps arrive through `next` (an event stream), not only as answers to requests:
        the backend is a `StreamingBackend`."""
        return isinstance(self, StreamingBackend)

    def retryable(self, error: BaseException) -> bool:
        """Whether to recover from ``error`` (re-read, re-answer, resubmit)."""
        from ..errors import BackendError

        if isinstance(error, BackendError):
            return error.status is None or error.status in (408, 409, 429) or error.status >= 500
        return False

    def checkpoint(self) -> dict[str, Any]:
        """A small JSON-compatible cursor to persist with each answer (see `restore`)."""
        return {}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:  # noqa: B027  (optional)
        """Continue from a `checkpoint` a previous backend of this conversation gave."""

    async def aclose(self) -> None:  # noqa: B027  (optional)
        """Release what this conversation holds (an event stream)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.dialect.name} {self.conversation or 'new'}>"


class StreamingBackend(Backend):
    """A capability of a `Backend`: its steps arrive through an event stream (`next`), so
    `send`, `resume` and `submit` may return ``None``."""

    watching: bool = False
    """Serving the conversation follows it past its idle turns until cancelled (an Agents
    session served with ``watch``): `toolbridge.serve.aanswer_pending` then has no end, and only the
    turns it sends (`aconverse`) are bounded by ``DriverSettings.turn_timeout``."""

    @abc.abstractmethod
    async def next(self) -> Step:
        """The next step: wait for it (a stream with a polling fallback; reconnecting is the
        backend's business)."""


class Connection(abc.ABC):
    """A worker's link to one backend service: the client, and set-up shared by conversations."""

    @property
    def can_discover(self) -> bool:
        """`discover` lists conversations waiting for answers: the connection is a
        `DiscoveringConnection`."""
        return isinstance(self, DiscoveringConnection)

    @abc.abstractmethod
    def backend(self, conversation: str | None = None) -> Backend:
        """The backend of conversation ``conversation`` (an existing one, to serve or resume),
        or of a new one (``None``: the options' conversation, or one created by the first
        `Backend.send`)."""

    async def aclose(self) -> None:  # noqa: B027  (optional)
        """Close the client."""

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class DiscoveringConnection(Connection):
    """A capability of a `Connection`: the service lists the conversations that wait."""

    @abc.abstractmethod
    def discover(self) -> AsyncIterator[str]:
        """Ids of conversations waiting for answers, as they appear (never ends on its own)."""
