"""`ScriptedBackend`: the Backend seam's in-memory double, playing an emulator script.

It speaks a tiny wire of its own (`MemoryDialect`: ``{"calls": [...]}`` in,
``{"results": [...]}`` out), is strict like a real service (a result for a call that is not
pending, or answered twice, is refused) and injects faults at the seam: an operation that fails
before it acts, or acts and then loses its reply. Unit tests of the driver, and of code built on
it, use it; adapter tests use real HTTP against the emulators instead.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import BackendError, ReplyLostError, WireFormatError
from ..model import ToolCall, ToolDefinition, ToolResult
from ..plugin import (
    Backend,
    Connection,
    Dialect,
    PendingCalls,
    RenderedTools,
    Step,
    StreamingBackend,
    read_arguments,
)
from ..runtime import output_text
from .emulators import ScriptedModel
from .emulators._script import Script

__all__ = ["MemoryDialect", "ScriptedBackend", "ScriptedConnection", "SeamFault"]

Operation = Literal["send", "submit", "state", "next"]


class MemoryDialect(Dialect):
    """The double's wire: calls ``{"conversation", "turn", "calls": [{"id", "name",
    "arguments"}]}`` (arguments an object or its JSON text), results ``{"results": [...]}``."""

    name = "memory"

    def render_tools(self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
                     ) -> RenderedTools:
        return RenderedTools([{"name": t.name, "parameters": t.parameters} for t in tools])

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        calls = payload.get("calls")
        if not isinstance(calls, list):
            raise WireFormatError(self.name, "calls", "missing or not a list", payload)
        out = []
        for item in calls:
            arguments = read_arguments(item.get("arguments"))
            out.append(ToolCall(id=item["id"], name=item["name"], arguments=arguments.values,
                                raw_arguments=arguments.raw, argument_error=arguments.error,
                                dialect=self.name, conversation=str(payload["conversation"]),
                                turn=str(payload["turn"])))
        return PendingCalls(tuple(out), tuple(payload.get("unhandled", ())))

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return {"results": [
            {"id": r.call.id, "turn": r.call.turn, "success": True,
             "output": output_text(r.output)} if r.success else
            {"id": r.call.id, "turn": r.call.turn, "success": False, "error": r.error}
            for r in results]}


@dataclass(frozen=True)
class SeamFault:
    """Fail the ``nth`` (1-based) call of ``operation``: before it acts (``lose_reply``
    false: nothing happened), or after it acted, its reply lost (``lose_reply`` true)."""

    operation: Operation
    nth: int
    status: int = 500
    lose_reply: bool = False


@dataclass
class _Service:
    """What the fake service holds for one conversation."""

    model: ScriptedModel
    turn: int = 0
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    accepted: dict[str, Any] = field(default_factory=dict)
    """Call id -> the result the service accepted (each at most once)."""
    reply: str | None = None
    """The last turn's reply, once it ended."""
    messages: list[str] = field(default_factory=list)
    """The user messages the service took, in order."""


class ScriptedBackend(Backend):
    """One conversation with a scripted model, in memory.

    ``streams``, ``lists_pending`` and ``partial_submit`` choose which kind of backend it
    plays (an Agents-like stream, a CES-like one that lists nothing, ...): with ``streams``
    it is a `toolbridge.plugin.StreamingBackend`. ``faults`` fail chosen operations.
    ``accepted`` shows every result the service took.
    """

    dialect = MemoryDialect()

    def __new__(cls, *args: Any, streams: bool = False, **options: Any) -> ScriptedBackend:
        chosen = _StreamingScriptedBackend if streams else cls
        return super().__new__(chosen)

    def __init__(self, script: Script | Mapping[str, Any] | None = None, *,
                 tools: Sequence[ToolDefinition] = (), conversation: str = "conv-1",
                 streams: bool = False, lists_pending: bool = True,
                 partial_submit: bool = False, faults: Sequence[SeamFault] = ()) -> None:
        model = ScriptedModel(Script.load(script),
                              {t.name: t.parameters for t in tools} or None)
        self.service = _Service(model)
        self.conversation = conversation
        self.lists_pending, self.partial_submit = lists_pending, partial_submit
        self.faults = list(faults)
        self.counts: dict[str, int] = {}
        self.calls_issued: list[str] = []
        self._events: asyncio.Queue[Step] = asyncio.Queue()
        self._ids: Iterator[int] = itertools.count(1)
        self.closed = False

    @property
    def accepted(self) -> dict[str, Any]:
        return self.service.accepted

    # ------------------------------------------------------------------ faults
    def _fault(self, operation: Operation) -> SeamFault | None:
        self.counts[operation] = count = self.counts.get(operation, 0) + 1
        for fault in self.faults:
            if fault.operation == operation and fault.nth == count:
                if not fault.lose_reply:
                    raise BackendError(f"memory: injected failure of {operation} #{count}",
                                       status=fault.status)
                return fault
        return None

    @staticmethod
    def _lost(fault: SeamFault | None, operation: str) -> None:
        if fault is not None:
            raise BackendError(f"memory: {operation} was processed, its reply lost "
                               "(injected)", status=fault.status)

    # ------------------------------------------------------------------ the service
    def _now(self) -> Step:
        """The conversation's state: its pending calls, or how the last turn ended."""
        s = self.service
        if s.pending:
            return Step("requires_action", payload={
                "conversation": self.conversation, "turn": f"turn-{s.turn}",
                "calls": list(s.pending.values())})
        return Step("completed", reply=s.reply or "")

    def _advance(self) -> Step:
        s = self.service
        calls = s.model.next_round()
        if not calls:
            s.reply = s.model.reply()
            return self._now()
        for call in calls:
            call_id = f"call-{next(self._ids)}"
            self.calls_issued.append(call_id)
            s.pending[call_id] = {"id": call_id, "name": call.name,
                                  "arguments": dict(call.arguments)}
        return self._now()

    def _deliver(self, step: Step) -> Step | None:
        if self.streams:
            self._events.put_nowait(step)
            return None
        return step

    # ------------------------------------------------------------------ Backend
    async def send(self, message: str) -> Step | None:
        fault = self._fault("send")
        s = self.service
        if s.pending:
            raise BackendError("memory: a turn is waiting for results", status=400)
        s.turn += 1
        s.reply = None
        s.messages.append(message)
        s.model.start_turn(message)
        step = self._advance()
        self._lost(fault, "send")
        return self._deliver(step)

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        fault = self._fault("submit")
        s = self.service
        results = body["results"]
        for result in results:
            if result["id"] in s.accepted:
                if not self.lists_pending:
                    raise ReplyLostError(f"memory: call {result['id']} was already "
                                         "answered; the reply to that answer is lost")
                raise BackendError(f"memory: call {result['id']} was already answered",
                                   status=400)
            if result["id"] not in s.pending:
                raise BackendError(f"memory: call {result['id']} is not pending", status=400)
        if not self.partial_submit and {r["id"] for r in results} != set(s.pending):
            raise BackendError("memory: submit every pending call's result at once",
                               status=400)
        for result in results:
            del s.pending[result["id"]]
            s.accepted[result["id"]] = result.get("output", result.get("error"))
            s.model.record(s.accepted[result["id"]])
        next_step = self._advance() if not s.pending else None
        self._lost(fault, "submit")
        if next_step is None:
            return None if self.streams else self._now()
        return self._deliver(next_step)

    async def state(self) -> Step | None:
        self._fault("state")
        if not self.lists_pending:
            return None
        now = self._now()
        return Step(now.status, now.payload, now.reply, fresh=True)

    async def sent(self, message: str) -> bool | None:
        if not self.lists_pending:
            return None
        self._fault("state")
        return bool(self.service.messages) and self.service.messages[-1] == message

    async def resume(self) -> Step | None:
        if self.streams:
            now = self._now()
            self._events.put_nowait(Step(now.status, now.payload, now.reply, fresh=True))
            return None
        return await self.state()

    def checkpoint(self) -> dict[str, Any]:
        return {"turn": self.service.turn}

    async def aclose(self) -> None:
        self.closed = True


class _StreamingScriptedBackend(ScriptedBackend, StreamingBackend):
    """A `ScriptedBackend` made with ``streams=True``: steps arrive through `next`."""

    async def next(self) -> Step:
        self._fault("next")
        return await self._events.get()


class ScriptedConnection(Connection):
    """Hands out the `ScriptedBackend`s it was given, or makes new ones from ``script``
    (``options`` go to each: ``tools`` the scripted model may call, the backend's flags)."""

    def __init__(self, backends: Mapping[str, ScriptedBackend] | None = None, *,
                 script: Script | Mapping[str, Any] | None = None, **options: Any) -> None:
        self.backends = dict(backends or {})
        self.script = script
        self.options = options

    def backend(self, conversation: str | None = None) -> Backend:
        key = conversation or f"conv-{len(self.backends) + 1}"
        if key not in self.backends:
            self.backends[key] = ScriptedBackend(self.script, conversation=key, **self.options)
        return self.backends[key]
