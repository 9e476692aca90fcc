"""What the workflow and its activities exchange: plain dataclasses of JSON values.

Temporal stores each of these in the workflow's history, so they hold ids, wire payloads and
results, never a secret: workers take credentials from their own environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CallRequest", "Carried", "ConversationInput", "ConversationRequest", "FleetSettings",
    "Outcome", "Progress", "StepData",
]


@dataclass
class FleetSettings:
    """How the workflow schedules its activities (the driver's `DriverSettings`, for a fleet)."""

    heartbeat_timeout: float = 30.0
    """Seconds without a heartbeat after which an activity's worker counts as lost (and the
    activity runs again elsewhere): recovery after a kill waits this long."""
    task_timeout: float = 10.0
    """Seconds a workflow task may take on a worker before Temporal gives it to another
    (Temporal's default, at most 120): a worker lost while holding one delays its
    conversation this long. Set when the conversation starts; its continued runs keep it."""
    call_timeout: float = 300.0
    """Start-to-close seconds of a call whose tool (and toolbox) has no timeout."""
    call_grace: float = 30.0
    """Seconds added to a tool's timeout for the store's claim and record around the run."""
    wait_timeout: float = 3600.0
    """Start-to-close seconds of one conversation activity (a send, a submit, a wait)."""
    max_rounds: int = 32
    """Rounds of calls one turn may ask for; past it the turn ends ``incomplete``."""
    max_recoveries: int = 6
    """Recoveries in a row (reset by progress) before the conversation ends ``failed``."""
    recovery_backoff: float = 0.2
    """Seconds before the first recovery; doubled for each next one."""
    recovery_max_delay: float = 5.0
    """Longest wait before a recovery."""
    max_history: int = 2000
    """History events after which the workflow continues as new (between steps)."""


@dataclass
class StepData:
    """A `toolbridge.plugin.Step` as a conversation activity reports it, with the
    conversation's cursor after it (`Backend.checkpoint`) and the backend's flags."""

    status: str
    payload: dict[str, Any] | None = None
    reply: str | None = None
    error: str | None = None
    fresh: bool = False
    calls: list[dict[str, Any]] = field(default_factory=list)
    """The step's calls to run (`ToolCall` as JSON), in order."""
    ready: list[dict[str, Any]] = field(default_factory=list)
    """Results decided without running (`ToolResult` as JSON): calls too late to start."""
    timeouts: dict[str, float] = field(default_factory=dict)
    """Per call id: the start-to-close seconds of its activity."""
    retries: dict[str, list[float]] = field(default_factory=dict)
    """Per call id with a `ToolRetry`: ``[max_attempts, backoff, max_delay]``."""
    conversation: str = ""
    cursor: dict[str, Any] = field(default_factory=dict)
    token: str = ""
    """Names the backend a worker keeps for the next activity (see `_backends`)."""
    partial_submit: bool = False
    lists_pending: bool = True
    waiting: list[dict[str, Any]] = field(default_factory=list)
    """``awaiting_approval`` on the backend's own approval items: the requests that wait
    (``call_id`` — the request id —, ``tool``, ``expires_at``, ...)."""


@dataclass
class ConversationRequest:
    """One conversation activity: ``send`` a message, ``resume`` serving, ``submit`` results,
    or read the ``state`` after a failure."""

    action: str
    dialect: str
    options: dict[str, Any]
    conversation: str | None
    cursor: dict[str, Any]
    token: str = ""
    message: str | None = None
    step: StepData | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    submitted: list[list[str]] = field(default_factory=list)
    """``[turn, id]`` of calls already answered (a streamed step listing only those is
    skipped unless read fresh)."""
    message_key: str = ""
    """``send``/``deliver``: the message's key (`toolbridge.serve.message_key` of the
    workflow id and the turn), the same for the successor of a lost worker."""
    decisions: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    """Per request id of the backend's approval items: the decision the workflow was
    signalled (`toolbridge.store.Decision`'s fields; ``None``: taken elsewhere)."""


@dataclass
class CallRequest:
    """One tool call activity."""

    dialect: str
    call: dict[str, Any]
    context: dict[str, Any] = field(default_factory=dict)
    decision: dict[str, Any] | None = None
    """A decision on the call's approval request, from the workflow's ``approval`` signal:
    stored (once) before the call is answered."""


@dataclass
class Carried:
    """What a workflow run hands to the next when it continues as new."""

    turn: int = 0
    step: StepData | None = None
    started: bool = False
    calls: int = 0
    rounds: int = 0
    replies: list[str] = field(default_factory=list)
    submitted: list[list[str]] = field(default_factory=list)
    counted: list[list[str]] = field(default_factory=list)
    """The latest calls counted in ``calls`` (turn, id): a call answered again after a lost
    worker or a failed submission is not counted twice."""
    runs: int = 1
    conversation: str = ""
    cursor: dict[str, Any] = field(default_factory=dict)
    token: str = ""


@dataclass
class ConversationInput:
    """The workflow's input: which conversation, what to say, how to schedule."""

    dialect: str
    options: dict[str, Any] = field(default_factory=dict)
    conversation: str | None = None
    messages: list[str] = field(default_factory=list)
    """User messages to send, one turn each; empty: answer what the conversation waits for."""
    settings: FleetSettings = field(default_factory=FleetSettings)
    context: dict[str, Any] = field(default_factory=dict)
    """Given to every handler (`ToolContext.extra`); JSON values."""
    carried: Carried | None = None


@dataclass
class Progress:
    """The ``progress`` query's answer."""

    status: str
    conversation: str
    turn: int
    turns: int
    calls: int
    rounds: int
    runs: int
    cancelling: bool


@dataclass
class Outcome:
    """The workflow's result: how the conversation ended."""

    status: str
    """``completed``, ``cancelled``, or the final status of the turn that did not complete."""
    conversation: str
    replies: list[str]
    calls: int
    """Calls answered (each once, however many times it was answered again after a lost
    worker or a failed submission)."""
    error: str | None = None
