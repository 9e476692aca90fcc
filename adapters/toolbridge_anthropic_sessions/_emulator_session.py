"""One emulated Managed Agents session: its event log, status, held calls, subscribers."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from toolbridge.testing import Script, ScriptError
from toolbridge.testing.emulators import Intake, ScriptedModel

from .wire import CONFIRMATION, CUSTOM_TOOL_RESULT, CUSTOM_TOOL_USE

__all__ = ["ApiError", "EmuSession", "new_id", "now"]

_CANNOT = ("cannot be expressed on Managed Agents sessions: a custom tool use's input is a "
           "JSON object, never text")


class ApiError(Exception):
    """An Anthropic API error answer: ``{"type": "error", "error": {"type", "message"}}``."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.kind, "message": self.message},
                "request_id": new_id("req")}


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def now() -> str:
    """An RFC 3339 timestamp, as the API writes them."""
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class EmuSession:
    """State of one session; every method runs on the emulator's event loop."""

    def __init__(self, agent: Mapping[str, Any], environment_id: str,
                 metadata: Mapping[str, str], title: Any, script: Script, intake: Intake,
                 on_publish: Callable[[EmuSession, dict[str, Any]], None]) -> None:
        self.id = new_id("sesn")
        self.created_at = self.updated_at = now()
        self.agent = {k: agent[k] for k in ("id", "description", "mcp_servers", "model",
                                            "name", "skills", "system", "tools", "type",
                                            "version", "execution_identity") if k in agent}
        self.environment_id = environment_id
        self.metadata = dict(metadata)
        self.title = title
        self.status = "idle"
        self.events: list[dict[str, Any]] = []
        self.held: dict[str, dict[str, Any]] = {}
        """Event id -> the call event the session waits on (a result or a confirmation)."""
        self.subscribers: list[asyncio.Queue[dict[str, Any] | None]] = []
        self._mcp_outputs: dict[str, Any] = {}
        declared = {t["name"]: t.get("input_schema") or {} for t in agent.get("tools", [])
                    if t.get("type") == "custom"}
        self.model = ScriptedModel(script, declared, new_id=lambda: new_id("sevt"),
                                   unsupported={"broken_json": _CANNOT}, approvals=True)
        self._intake = intake
        self._publish = on_publish

    # ------------------------------------------------------------------ views
    def snapshot(self) -> dict[str, Any]:
        """The ``session`` object."""
        return {"id": self.id, "type": "session", "agent": self.agent, "archived_at": None,
                "budget": None, "created_at": self.created_at,
                "environment_id": self.environment_id, "metadata": self.metadata,
                "outcome_evaluations": [], "resources": [],
                "stats": {"active_seconds": 0.0, "duration_seconds": 0.0},
                "status": self.status, "title": self.title, "updated_at": self.updated_at,
                "usage": {"input_tokens": 0, "output_tokens": 0}, "vault_ids": []}

    def emit(self, kind: str, *, event_id: str | None = None, **fields: Any) -> dict[str, Any]:
        """Record an event and send it to every stream."""
        event = {"id": event_id or new_id("sevt"), "type": kind, "processed_at": now(),
                 **fields}
        self.events.append(event)
        self.updated_at = event["processed_at"]
        self._publish(self, event)
        for queue in self.subscribers:
            queue.put_nowait(event)
        return event

    def _idle(self, stop: dict[str, Any]) -> None:
        self.status = "idle"
        self.emit("session.status_idle", stop_reason=stop, stop_details=None)

    def _running(self) -> None:
        self.status = "running"
        self.emit("session.status_running")

    # ------------------------------------------------------------------ turns
    def user_message(self, event: Mapping[str, Any], event_id: str) -> None:
        """A ``user.message``: recorded, then the script's next turn plays."""
        if self.status == "terminated":
            raise ApiError(400, f"Session {self.id} is terminated and accepts no events.")
        if self.held:
            raise ApiError(400, "The session is waiting on events "
                           f"{sorted(self.held)}; answer them before sending a message.")
        content = list(event.get("content") or [])
        text = "".join(str(b.get("text", "")) for b in content
                       if isinstance(b, Mapping) and b.get("type") == "text")
        self.emit("user.message", event_id=event_id, content=content)
        self._intake.took_message(self.id, text)
        self._running()
        self.model.start_turn(text)
        self.advance()

    def advance(self) -> None:
        """Play the next round: call events and a ``requires_action`` idle, or the reply."""
        try:
            calls = self.model.next_round()
        except ScriptError as exc:
            self.emit("session.error", error={"type": "unknown_error",
                                              "message": f"emulator script error: {exc}",
                                              "retry_status": {"type": "terminal"}})
            self._idle({"type": "retries_exhausted"})
            return
        if not calls:
            self.emit("agent.message", content=[{"type": "text", "text": self.model.reply()}])
            self._idle({"type": "end_turn"})
            return
        for call in calls:
            if call.approval is not None:  # an MCP tool the permission policy holds
                event = self.emit("agent.mcp_tool_use", event_id=call.id, name=call.name,
                                  input=dict(call.arguments),
                                  mcp_server_name=call.approval.server,
                                  evaluated_permission="ask")
                self._mcp_outputs[call.id] = call.approval.output
            else:
                event = self.emit(CUSTOM_TOOL_USE, event_id=call.id, name=call.name,
                                  input=dict(call.arguments))
            if call.issued:  # a reused id is listed, but its result was taken before
                self.held[call.id] = event
        self._idle({"type": "requires_action", "event_ids": list(dict.fromkeys(
            c.id for c in calls))})
        if not self.held:  # only reused ids: nothing to wait for
            self._running()
            self.advance()

    # ------------------------------------------------------------------ answers
    def check_answer(self, event: Mapping[str, Any], param: str) -> str:
        """The held event id ``event`` answers, or the API's 400."""
        kind = event["type"]
        key = "custom_tool_use_id" if kind == CUSTOM_TOOL_RESULT else "tool_use_id"
        held_id = event.get(key)
        if not isinstance(held_id, str) or not held_id:
            raise ApiError(400, f"{param}.{key}: Field required")
        held = self.held.get(held_id)
        wanted = CUSTOM_TOOL_USE if kind == CUSTOM_TOOL_RESULT else None
        if held is None or (wanted and held["type"] != wanted) or (
                not wanted and held["type"] == CUSTOM_TOOL_USE):
            raise ApiError(400, f"{param}.{key}: no event {held_id!r} of this session waits "
                           f"for a {kind} (answered already, or never asked)")
        if kind == CONFIRMATION:
            result = event.get("result")
            if result not in ("allow", "deny"):
                raise ApiError(400, f"{param}.result: Input should be 'allow' or 'deny'")
            if event.get("deny_message") is not None and result != "deny":
                raise ApiError(400, f"{param}.deny_message: only allowed when result is "
                               "'deny'")
        return held_id

    def answer(self, answers: list[tuple[Mapping[str, Any], str]]) -> None:
        """Record checked answers (event, held id); the next round once nothing is held."""
        for event, held_id in answers:
            self._record(event, held_id)
        if self.held:  # fewer than all resolved: the idle again, naming the remainder
            self._idle({"type": "requires_action", "event_ids": list(self.held)})
            return
        self._running()
        self.advance()

    def _record(self, event: Mapping[str, Any], held_id: str) -> None:
        del self.held[held_id]
        if event["type"] == CUSTOM_TOOL_RESULT:
            content = list(event.get("content") or [])
            self.emit(CUSTOM_TOOL_RESULT, custom_tool_use_id=held_id, content=content,
                      is_error=bool(event.get("is_error")))
            text = "".join(str(b.get("text", "")) for b in content
                           if isinstance(b, Mapping) and b.get("type") == "text")
            self.model.record(text, held_id)
            self._intake.took_results(self.id, [held_id])
            return
        allowed = event["result"] == "allow"
        fields = {"deny_message": event["deny_message"]} if event.get("deny_message") else {}
        self.emit(CONFIRMATION, tool_use_id=held_id, result=event["result"], **fields)
        self.model.decide(held_id, allowed, str(event.get("deny_message") or ""))
        output = self._mcp_outputs.pop(held_id, "")
        if allowed:  # the MCP server ran the tool
            text = output if isinstance(output, str) else json.dumps(output)
            self.emit("agent.mcp_tool_result", mcp_tool_use_id=held_id,
                      content=[{"type": "text", "text": text}], is_error=False)

    def interrupt(self) -> None:
        """``user.interrupt``: the held calls are dropped and the turn ends."""
        self.emit("user.interrupt")
        self.held.clear()
        self._idle({"type": "end_turn"})
