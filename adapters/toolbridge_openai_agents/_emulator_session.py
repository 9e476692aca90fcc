"""One emulated Agents API session: status, turns, items, required actions, subscribers."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from toolbridge.testing import Script, ScriptError
from toolbridge.testing.emulators import ScriptedModel

from ._emulator_checks import ApiError, unknown_call

__all__ = ["EmuSession"]

_EVENT_IDS = itertools.count(1)
APPROVAL = "mcp_approval_request"
APPROVALS = {"agent.session.input.mcp_approval_request_result": APPROVAL,
             "agent.session.input.computer_use_approval_request_result":
             "computer_use_approval_request"}
"""Each approval result event, and the required action it answers."""


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _now() -> int:
    return int(time.time())


class EmuSession:
    """State of one session; every method runs on the emulator's event loop."""

    def __init__(self, body: Mapping[str, Any], tools: list[dict[str, Any]], script: Script,
                 on_publish: Callable[[EmuSession, dict[str, Any]], None]) -> None:
        spec = dict(body.get("agent") or {})
        self.id = new_id("sess")
        self.created_at = self.last_active_at = _now()
        self.environment = dict(body["environment"])
        self.metadata = dict(body.get("metadata") or {})
        self.agent: dict[str, Any] = {
            "id": body.get("agent_id") or new_id("agent"), "name": spec.get("name"),
            "model": spec.get("model", "gpt-5"), "instructions": spec.get("instructions"),
            "multi_agent": {"enabled": False, "max_concurrent_subagents": None},
            "reasoning": {"effort": None, "summary": None}, "service_tier": "auto",
            "text": {"format": {"type": "text"}, "verbosity": "medium"}, "tools": tools,
        }
        self.status = "idle"
        self.error: str | None = None
        self.required_actions: list[dict[str, Any]] = []
        self.items: list[dict[str, Any]] = []
        self.turns: dict[str, dict[str, Any]] = {}
        self.turn_id: str | None = None
        self.raced: set[str] = set()
        self.waiting: set[str] = set()
        """Ids of the calls the session registered as pending (a listed action may not be)."""
        self.subscribers: list[asyncio.Queue[dict[str, Any] | None]] = []
        self.model = ScriptedModel(script, self._declared(), new_id=lambda: new_id("call"),
                                   approvals=True)
        self._publish = on_publish

    def _declared(self) -> dict[str, Mapping[str, Any]]:
        return {t["name"]: t.get("parameters") or {} for t in self.agent["tools"]
                if t.get("type") == "function"}

    def set_tools(self, tools: list[dict[str, Any]]) -> None:
        self.agent["tools"] = tools
        self.model.declare(self._declared())

    # ------------------------------------------------------------------ views
    def snapshot(self) -> dict[str, Any]:
        """The ``AgentSession`` object."""
        return {
            "id": self.id, "object": "agent.session", "agent": self.agent,
            "created_at": self.created_at, "last_active_at": self.last_active_at,
            "environment": self.environment, "error": self.error, "metadata": self.metadata,
            "required_actions": [dict(a) for a in self.required_actions],
            "status": self.status, "usage": None, "vault_ids": [],
        }

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "event_id": f"evt_{next(_EVENT_IDS):06d}", **fields}
        self._publish(self, event)
        for queue in self.subscribers:
            queue.put_nowait(event)
        return event

    def _session_event(self, status: str) -> None:
        self.status = status
        self.last_active_at = _now()
        self.emit(f"agent.session.{status}", session=self.snapshot())

    def _turn_event(self, status: str, kind: str | None = None) -> None:
        assert self.turn_id is not None
        turn = self.turns[self.turn_id]
        turn["status"] = status
        if status in ("completed", "failed", "cancelled"):
            turn["completed_at"] = _now()
        extra = {"usage": None} if kind in ("completed", "failed", "cancelled") else {}
        self.emit(f"agent.session.turn.{kind or status}", session_id=self.id,
                  turn_id=self.turn_id, turn=dict(turn), **extra)

    def _add_item(self, item: dict[str, Any], *, done: bool = False) -> None:
        self.items.append(item)
        index = len([i for i in self.items if i.get("turn_id") == self.turn_id]) - 1
        self.emit("agent.session.turn.item.added", session_id=self.id, turn_id=self.turn_id,
                  output_index=index, item=item)
        if done:
            self.emit("agent.session.turn.item.done", session_id=self.id,
                      turn_id=self.turn_id, output_index=index, item=item)

    # ------------------------------------------------------------------ turns
    def start_turn(self, messages: list[Mapping[str, Any]]) -> None:
        """A user message: open a turn and play the script's first round."""
        if self.status in ("in_progress", "requires_action"):
            raise ApiError(400, f"Session '{self.id}' already has an active turn; wait for it "
                           "to finish or cancel it.", param="events", code="session_busy")
        if self.status == "failed":
            raise ApiError(400, f"Session '{self.id}' has failed and accepts no input.",
                           param="events", code="session_failed")
        self.turn_id = turn_id = new_id("turn")
        self.turns[turn_id] = {
            "id": turn_id, "object": "agent.session.turn", "agent_id": self.agent["id"],
            "session_id": self.id, "status": "queued", "created_at": _now(),
            "started_at": _now(), "completed_at": None, "error": None, "subagent_id": None,
            "usage": None,
        }
        self._turn_event("queued", "created")
        self._session_event("in_progress")
        self._turn_event("in_progress")
        texts = []
        for message in messages:
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "input_text", "text": content}]
            texts += [p.get("text", "") for p in content or [] if isinstance(p, Mapping)
                      and p.get("type") == "input_text"]
            self._add_item({"type": "message", "id": new_id("msg"), "role": "user",
                            "content": content, "status": "completed", "turn_id": turn_id})
        self.model.start_turn("\n".join(texts))
        self.advance()

    def advance(self) -> None:
        """Play the next scripted round, or finish the turn with its reply."""
        try:
            calls = self.model.next_round()
        except ScriptError as exc:
            self.fail(f"script error: {exc}")
            return
        if not calls:
            self._finish()
            return
        for call in calls:
            if call.approval is not None:  # an MCP tool call the session asks approval for
                self.required_actions.append({
                    "type": "mcp_approval_request", "request_id": call.id,
                    "turn_id": self.turn_id, "request": {
                        "type": "mcp_tool_call", "server_label": call.approval.server,
                        "name": call.name, "arguments": dict(call.arguments),
                        "message": call.approval.message}})
                self.waiting.add(call.id)
                continue
            # Object arguments; broken JSON is the model's text where the object belongs.
            arguments = call.raw_arguments if call.raw_arguments is not None else dict(
                call.arguments)
            action = {"type": "function_call", "turn_id": self.turn_id, "call_id": call.id,
                      "name": call.name, "arguments": arguments}
            self._add_item({"type": "function_call", "id": new_id("fc"),
                            "status": "in_progress", **{k: v for k, v in action.items()
                                                        if k != "type"}})
            self.required_actions.append(action)
            if call.issued:  # a hallucinated id is listed, but never registered as pending
                self.waiting.add(call.id)
        self.turns[self.turn_id or ""]["status"] = "waiting"
        self._session_event("requires_action")
        if not self.waiting:  # only hallucinated ids: nothing to wait for
            self._resume()

    def _resume(self) -> None:
        """Every registered call of the round has its result: drop the listed calls that
        never were pending (their items end ``incomplete``) and play the next round."""
        listed = {a["call_id"] for a in self.required_actions if a.get("type") == "function_call"}
        self.required_actions = [a for a in self.required_actions
                                 if a.get("type") != "function_call"
                                 and a.get("type") not in APPROVALS.values()]
        for item in self.items:
            if (item.get("type") == "function_call" and item.get("turn_id") == self.turn_id
                    and item["call_id"] in listed and item["status"] == "in_progress"):
                item["status"] = "incomplete"
        self.turns[self.turn_id or ""]["status"] = "in_progress"
        self._session_event("in_progress")
        self.advance()

    def _finish(self) -> None:
        item = {"type": "message", "id": new_id("msg"), "role": "assistant",
                "phase": "final_answer", "status": "completed", "turn_id": self.turn_id,
                "content": [{"type": "output_text", "text": self.model.reply()}]}
        self._add_item(item, done=True)
        self._turn_event("completed")
        self._session_event("idle")

    def fail(self, message: str) -> None:
        """Fail the turn and the session (e.g. a script error), reporting it on the stream."""
        self.error = message
        self.required_actions = []
        self.waiting.clear()
        if self.turn_id is not None:
            self.turns[self.turn_id]["error"] = {"code": "server_error", "message": message}
            self._turn_event("failed")
        self.emit("error", session_id=self.id, error={"type": "server_error",
                                                      "message": message, "code": None,
                                                      "param": None})
        self._session_event("failed")

    def cancel(self) -> None:
        if self.status not in ("in_progress", "requires_action"):
            raise ApiError(400, "No active turn to cancel.", param="events", code="no_active_turn")
        self.required_actions = []
        self.waiting.clear()
        self._turn_event("cancelled")
        self._session_event("idle")

    # ------------------------------------------------------------------ results
    def pending(self, turn_id: str, call_id: str, param: str, race: bool) -> dict[str, Any]:
        """The pending action for the ids, or the real 400 (also for the injected race)."""
        for action in self.required_actions:
            if action.get("type") == "function_call" and action["call_id"] == call_id \
                    and action["turn_id"] == turn_id and call_id in self.waiting:
                if race and call_id not in self.raced:
                    self.raced.add(call_id)
                    raise unknown_call(call_id, param)
                return action
        raise unknown_call(call_id, param)

    def accept_result(self, event: Mapping[str, Any]) -> None:
        """Record a checked result; continue the turn when its round is complete."""
        call_id = event["call_id"]
        self.waiting.discard(call_id)
        self.required_actions = [a for a in self.required_actions
                                 if not (a.get("type") == "function_call"
                                         and a["call_id"] == call_id)]
        success = event["success"]
        output = event.get("output") if success else None
        error = None if success else (event.get("error") or "")
        self.model.record(output if success else error, call_id)
        for item in self.items:
            if item.get("type") == "function_call" and item["call_id"] == call_id:
                item["status"] = "completed"
        self._add_item({"type": "function_call_output", "id": new_id("fco"),
                        "call_id": call_id, "turn_id": event["turn_id"], "output": output,
                        "error": error, "status": "completed" if success else "failed"})
        self._answered()

    def _answered(self) -> None:
        """A pending action was answered: the next round once none waits; while only
        approval requests wait, the session says so again (its required actions changed)."""
        if not self.waiting:
            self._resume()
        elif not any(a.get("type") == "function_call" and a["call_id"] in self.waiting
                     for a in self.required_actions):
            self._session_event("requires_action")

    def accept_approval(self, event: Mapping[str, Any], param: str) -> None:
        """An ``..._approval_request_result`` for a pending request of its kind: the model
        gets the MCP tool's scripted output, or is told it was denied; the real 400 when no
        such request is pending."""
        request_id = event.get("request_id")
        kind = APPROVALS[str(event.get("type"))]
        if not any(a.get("type") == kind and a["request_id"] == request_id
                   for a in self.required_actions) or request_id not in self.waiting:
            raise ApiError(400, f"No pending approval request matches '{request_id}'.",
                           param=param, code="invalid_request_error")
        response = event.get("response")
        response = response if isinstance(response, Mapping) else {}
        decision = "deny" if response.get("action") == "cancel" else response.get("decision")
        if decision not in ("approve", "deny"):
            raise ApiError(400, "Invalid 'response': expected a decision 'approve' or 'deny' "
                           "(or a browser authentication's 'cancel').",
                           param=f"{param}.response", code="invalid_value")
        self.waiting.discard(request_id)
        self.required_actions = [a for a in self.required_actions
                                 if not (a.get("type") == kind
                                         and a["request_id"] == request_id)]
        self.model.decide(str(request_id), decision == "approve")
        self._answered()
