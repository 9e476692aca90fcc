"""The emulated echo service: a tiny JSON API of its own, on loopback, playing a script.

Routes (``Authorization: Bearer ...`` required unless ``require_key=false``)::

    POST /v1/conversations                   {"tools": [...], "metadata": {...}} -> state
    GET  /v1/conversations?status=waiting    {"data": [state, ...]}
    GET  /v1/conversations/{id}              state
    POST /v1/conversations/{id}/messages     {"text": "..."} -> state (a user turn)
    GET  /v1/conversations/{id}/calls        {"conversation": id, "calls": [...]} (pending)
    POST /v1/conversations/{id}/answers      {"answers": [...]} -> state

A state is ``{"conversation", "status" ("idle", "waiting" or "failed"), "calls", "reply",
"error", "messages", "metadata"}``: while ``waiting`` it is the dialect's payload. Answers
carry an ``Idempotency-Key``: a key seen before gets its first reply again, not a second
answer. An answer for a call that is not pending is refused (400), as real services do.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from toolbridge.testing import ScriptError
from toolbridge.testing.emulators import Emulator, ModelCall, ScriptedModel

from .options import DIALECT

__all__ = ["EchoEmulator"]

_UNSUPPORTED = {"broken_json": "the echo wire carries arguments as a JSON object"}


class ApiError(Exception):
    """An error answer: HTTP ``status`` and the echo service's ``{"error": {...}}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Conversation:
    """One conversation held by the emulator."""

    id: str
    model: ScriptedModel
    metadata: dict[str, str]
    status: str = "idle"
    pending: list[ModelCall] = field(default_factory=list)
    messages: list[dict[str, str]] = field(default_factory=list)
    reply: str | None = None
    error: str | None = None
    replies: dict[str, Any] = field(default_factory=dict)
    """Idempotency key -> the state answered to it."""

    def state(self) -> dict[str, Any]:
        return {"conversation": self.id, "status": self.status, "calls": self.calls(),
                "reply": self.reply, "error": self.error, "messages": list(self.messages),
                "metadata": dict(self.metadata)}

    def calls(self) -> list[dict[str, Any]]:
        return [{"id": c.id, "tool": c.name, "args": c.arguments} for c in self.pending]

    def play(self) -> None:
        """Put the next round on the wire, or end the turn with its reply."""
        try:
            self.pending = self.model.next_round()
        except ScriptError as exc:
            self.pending, self.status, self.error = [], "failed", f"script error: {exc}"
            return
        if self.pending:
            self.status = "waiting"
            return
        self.status, self.reply = "idle", self.model.reply()
        self.messages.append({"role": "assistant", "text": self.reply})


def _tools(value: Any) -> dict[str, Any]:
    if not isinstance(value, list):
        raise ApiError(400, "'tools' must be a list")
    declared: dict[str, Any] = {}
    for i, tool in enumerate(value):
        if not isinstance(tool, dict) or not isinstance(tool.get("tool"), str):
            raise ApiError(400, f"'tools[{i}].tool' must be a string")
        declared[tool["tool"]] = tool.get("schema") or {"type": "object"}
    return declared


def _answers(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ApiError(400, "'answers' must be a list")
    for i, answer in enumerate(value):
        if not isinstance(answer, dict) or not isinstance(answer.get("id"), str):
            raise ApiError(400, f"'answers[{i}].id' must be a string")
        if not isinstance(answer.get("ok"), bool):
            raise ApiError(400, f"'answers[{i}].ok' must be true or false")
    return value


class EchoEmulator(Emulator):
    """The echo service. ``conversations`` maps id to `Conversation`."""

    dialect = DIALECT

    def __init__(self, *, script: Any = None, faults: Any = None,
                 require_key: bool = True) -> None:
        super().__init__(script=script, faults=faults)
        self.require_key = require_key
        self.conversations: dict[str, Conversation] = {}

    def build_app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.routing import Route

        def route(path: str, handler: Any, method: str) -> Route:
            return Route("/v1/conversations" + path, self._endpoint(handler), methods=[method])

        return Starlette(routes=[
            route("", self._create, "POST"), route("", self._list, "GET"),
            route("/{id}", self._state, "GET"), route("/{id}/messages", self._message, "POST"),
            route("/{id}/calls", self._calls, "GET"), route("/{id}/answers", self._answer, "POST"),
        ])

    def _endpoint(self, handler: Any) -> Any:
        from starlette.responses import JSONResponse

        async def endpoint(request: Any) -> Any:
            try:
                if self.require_key and not request.headers.get(
                        "authorization", "").startswith("Bearer "):
                    raise ApiError(401, "missing bearer key (Authorization: Bearer ...)")
                raw = await request.body()
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    raise ApiError(400, "the body is not JSON") from None
                if not isinstance(body, dict):
                    raise ApiError(400, "the body must be a JSON object")
                return JSONResponse(handler(request, body))
            except ApiError as exc:
                return JSONResponse(self.error_body(exc.status, str(exc)), exc.status)

        return endpoint

    def _conversation(self, request: Any) -> Conversation:
        found = self.conversations.get(request.path_params["id"])
        if found is None:
            raise ApiError(404, f"no conversation {request.path_params['id']!r}")
        return found

    def _create(self, request: Any, body: dict[str, Any]) -> Any:
        metadata = body.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise ApiError(400, "'metadata' must be an object")
        model = ScriptedModel(self.script, _tools(body.get("tools", [])),
                              unsupported=_UNSUPPORTED)
        conversation = Conversation(f"conv_{uuid.uuid4().hex[:16]}", model,
                                    {str(k): str(v) for k, v in metadata.items()})
        self.conversations[conversation.id] = conversation
        return conversation.state()

    def _list(self, request: Any, body: dict[str, Any]) -> Any:
        wanted = request.query_params.get("status")
        return {"data": [c.state() for c in self.conversations.values()
                         if wanted in (None, c.status)]}

    def _state(self, request: Any, body: dict[str, Any]) -> Any:
        return self._conversation(request).state()

    def _calls(self, request: Any, body: dict[str, Any]) -> Any:
        conversation = self._conversation(request)
        return {"conversation": conversation.id, "calls": conversation.calls()}

    def _message(self, request: Any, body: dict[str, Any]) -> Any:
        conversation = self._conversation(request)
        text = body.get("text")
        if not isinstance(text, str) or not text:
            raise ApiError(400, "'text' must be a non-empty string")
        if conversation.status == "waiting":
            raise ApiError(409, "the conversation waits for answers to its calls")
        conversation.messages.append({"role": "user", "text": text})
        self.intake.took_message(conversation.id, text)
        conversation.reply = conversation.error = None
        conversation.model.start_turn(text)
        conversation.play()
        return conversation.state()

    def _answer(self, request: Any, body: dict[str, Any]) -> Any:
        conversation = self._conversation(request)
        key = request.headers.get("idempotency-key")
        if key is not None and key in conversation.replies:
            return conversation.replies[key]
        answers = _answers(body.get("answers"))
        pending = {c.id for c in conversation.pending}
        unknown = [a["id"] for a in answers if a["id"] not in pending]
        if unknown:
            raise ApiError(400, f"no pending call {unknown[0]!r}")
        for answer in answers:
            value = answer.get("value") if answer["ok"] else {"error": answer.get("error")}
            conversation.model.record(value, answer["id"])
        self.intake.took_results(conversation.id, [a["id"] for a in answers])
        answered = {a["id"] for a in answers}
        conversation.pending = [c for c in conversation.pending if c.id not in answered]
        if not conversation.pending:
            conversation.play()
        state = conversation.state()
        if key is not None:
            conversation.replies[key] = state
        return state
