"""The emulated Interactions service's state: stored interactions, chained by
``previous_interaction_id``, each with its scripted model's state (a create continuing an
interaction continues a copy of it, so a create sent twice branches as the real one does)."""

from __future__ import annotations

import base64
import copy
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolbridge.testing import Script, ScriptError
from toolbridge.testing.emulators import Intake, ModelCall, ScriptedModel

from .wire import MAX_TOOLS, NAME_PATTERN

__all__ = ["ApiError", "EmulatedService", "StoredInteraction"]

_CREATE_KEYS = frozenset({
    "model", "agent", "agent_config", "input", "tools", "previous_interaction_id",
    "system_instruction", "generation_config", "store", "background", "stream",
    "response_format", "response_mime_type", "response_modalities", "safety_settings",
    "service_tier", "labels", "webhook_config", "cached_content", "continuation_token",
    "environment"})
"""``CreateModelInteraction`` / ``CreateAgentInteraction`` fields (google-genai 3.6.1)."""
_NO_ARGUMENT_TEXT = ("gemini-interactions sends a function_call's arguments as a JSON object, "
                     "never as text, so argument text that is not JSON cannot be expressed")


_CODES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
          404: "NOT_FOUND", 409: "ABORTED", 429: "RESOURCE_EXHAUSTED"}
"""gRPC status names of the error answers (``error.code`` is a string in the SDK's type)."""


class ApiError(Exception):
    """An error answer: HTTP ``status`` and ``{"error": {"code", "message"}}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message

    def body(self) -> dict[str, Any]:
        code = _CODES.get(self.status, "INTERNAL" if self.status >= 500 else "UNKNOWN")
        return {"error": {"code": code, "message": self.message}}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class StoredInteraction:
    """One interaction: what ``GET`` answers, its chain and its model's state after it."""

    interaction: dict[str, Any]
    chain: str
    """The chain's first interaction id: what the journal keys the conversation by."""
    model: ScriptedModel
    pending: dict[str, str] = field(default_factory=dict)
    """Call id -> tool name of the ``function_call`` steps waiting for results."""
    events: list[dict[str, Any]] = field(default_factory=list)


def _declared(tools: Any) -> dict[str, Any]:
    """Name -> parameters of the function entries of ``tools``, checked as the service does."""
    if tools is None:
        return {}
    if not isinstance(tools, list):
        raise ApiError(400, "Invalid value at 'tools': expected a list")
    functions = [t for t in tools if isinstance(t, dict) and t.get("type") == "function"]
    if len(functions) > MAX_TOOLS:
        raise ApiError(400, f"At most {MAX_TOOLS} function declarations are allowed; got "
                       f"{len(functions)}")
    declared: dict[str, Any] = {}
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            raise ApiError(400, f"Invalid value at 'tools[{i}].type'")
        if tool["type"] != "function":
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise ApiError(400, f"Invalid function name at 'tools[{i}].name': {name!r}; it "
                           "must start with a letter or an underscore and hold only letters, "
                           "digits, underscores, dots, colons and dashes (at most 128)")
        if name in declared:
            raise ApiError(400, f"Duplicate function declaration: {name}")
        parameters = tool.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            raise ApiError(400, f"Invalid value at 'tools[{i}].parameters': expected an "
                           "object")
        declared[name] = parameters or {"type": "object"}
    return declared


def _text_of(content: Any) -> str:
    """The text of a content part or list of parts."""
    if isinstance(content, dict):
        content = [content]
    return "".join(str(p.get("text", "")) for p in content or []
                   if isinstance(p, dict) and p.get("type") == "text")


_MEDIA_KINDS = ("image", "audio", "document", "video")


def _check_result_parts(parts: list[Any], at: str) -> None:
    """A ``function_result``'s list of parts: ``text`` (``text``) or a media part (``image``,
    ``audio``, ``document``, ``video``: base64 ``data`` with its ``mime_type``, or ``uri``)."""
    for k, part in enumerate(parts):
        where = f"{at}[{k}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            if not isinstance(part.get("text"), str):
                raise ApiError(400, f"Invalid value at '{where}.text': expected a string")
            continue
        if kind == "function":  # a part of the SDK's union whose rules we do not know
            continue
        if kind not in _MEDIA_KINDS:
            raise ApiError(400, f"Invalid value at '{where}.type': expected one of text, "
                           f"function, {', '.join(_MEDIA_KINDS)}")
        if isinstance(part.get("uri"), str) and part["uri"]:
            continue
        if not isinstance(part.get("data"), str) or not isinstance(part.get("mime_type"), str):
            raise ApiError(400, f"Invalid value at '{where}': a {kind} part needs data with "
                           "its mime_type, or a uri")
        try:
            base64.b64decode(part["data"], validate=True)
        except ValueError:
            raise ApiError(400, f"Invalid value at '{where}.data': Base64 decoding "
                           "failed") from None


class EmulatedService:
    """Interactions by id, each created from its request and its previous interaction."""

    def __init__(self, script: Script, intake: Intake) -> None:
        self.script = script
        self.intake = intake
        self.interactions: dict[str, StoredInteraction] = {}
        self._lock = threading.Lock()

    def get(self, interaction_id: str) -> StoredInteraction:
        stored = self.interactions.get(interaction_id)
        if stored is None:
            raise ApiError(404, f"Interaction {interaction_id} not found")
        return stored

    def create(self, body: Any) -> StoredInteraction:
        """A create: checked, continued from its previous interaction, played, stored."""
        if not isinstance(body, dict):
            raise ApiError(400, "Invalid JSON payload received: expected an object")
        for key in body:
            if key not in _CREATE_KEYS:
                raise ApiError(400, f'Invalid JSON payload received. Unknown name "{key}": '
                               "Cannot find field.")
        if not isinstance(body.get("model") or body.get("agent"), str):
            raise ApiError(400, "model or agent is required")
        if "input" not in body:
            raise ApiError(400, "input is required")
        declared = _declared(body.get("tools"))
        with self._lock:  # one create at a time: the model's state is copied, then played
            return self._create(body, declared)

    def _create(self, body: dict[str, Any], declared: dict[str, Any]) -> StoredInteraction:
        previous_id = body.get("previous_interaction_id")
        previous = None
        if previous_id is not None:
            if not isinstance(previous_id, str):
                raise ApiError(400, "Invalid value at 'previous_interaction_id'")
            previous = self.get(previous_id)
        interaction_id = f"v1_{uuid.uuid4().hex}"
        if previous is not None:
            # The model's state after the previous interaction, shared script and all.
            model = copy.deepcopy(previous.model, {id(previous.model.script): self.script})
            chain = previous.chain
        else:
            model = ScriptedModel(self.script, {}, new_id=lambda: uuid.uuid4().hex[:8],
                                  unsupported={"broken_json": _NO_ARGUMENT_TEXT})
            chain = interaction_id
        model.declare(declared)
        message, results = self._read_input(body["input"], previous)
        error = None
        for call_id, output in results:
            model.record(output, call_id)
        if message is not None:
            model.start_turn(message)
        try:
            calls = model.next_round()
        except ScriptError as exc:
            calls, error = [], f"emulator script error: {exc}"
        steps: list[dict[str, Any]] = [_call_step(c) for c in calls]
        status = "requires_action" if calls else "completed"
        if error is not None:
            status, steps = "failed", [{"type": "model_output",
                                        "error": {"code": 13, "message": error}}]
        elif not calls:
            steps = [{"type": "model_output", "content": [{"type": "text",
                                                           "text": model.reply()}]}]
        now = _now()
        interaction: dict[str, Any] = {
            "id": interaction_id, "status": status, "model": body.get("model"),
            "created": now, "updated": now, "steps": steps,
            "usage": {"total_input_tokens": 10, "total_output_tokens": 10,
                      "total_tokens": 20}}
        if previous_id is not None:
            interaction["previous_interaction_id"] = previous_id
        if error is not None:
            interaction["errors"] = [{"code": "INTERNAL", "message": error}]
        # A call naming an id answered before in the chain (a hallucinated id) is listed,
        # but only the calls issued now wait for results.
        stored = StoredInteraction(interaction, chain, model,
                                   {c.id: c.name for c in calls if c.issued})
        stored.events = _events(interaction)
        if body.get("store", True) is not False:
            self.interactions[interaction_id] = stored
        if message is not None:
            self.intake.took_message(chain, message)
        if results:
            self.intake.took_results(chain, [call_id for call_id, _ in results])
        return stored

    def _read_input(self, value: Any, previous: StoredInteraction | None
                    ) -> tuple[str | None, list[tuple[str, Any]]]:
        """The user message and the results of a create's ``input``, checked against the
        calls the previous interaction waits for (all of them answered at once)."""
        waiting = dict(previous.pending) if previous is not None else {}
        if isinstance(value, str):
            steps: list[Any] = [{"type": "user_input", "content": [{"type": "text",
                                                                   "text": value}]}]
        elif isinstance(value, dict):
            steps = [{"type": "user_input", "content": [value]}]
        elif isinstance(value, list):
            steps = value
        else:
            raise ApiError(400, "Invalid value at 'input'")
        message: str | None = None
        results: list[tuple[str, Any]] = []
        for i, step in enumerate(steps):
            if not isinstance(step, dict) or not isinstance(step.get("type"), str):
                raise ApiError(400, f"Invalid value at 'input[{i}].type'")
            kind = step["type"]
            if kind == "function_result":
                call_id = step.get("call_id")
                if not isinstance(call_id, str) or "result" not in step:
                    raise ApiError(400, f"input[{i}]: function_result needs call_id and result")
                if call_id not in waiting:
                    raise ApiError(400, f"input[{i}]: function_result for call_id {call_id!r}, "
                                   "which the previous interaction does not wait for")
                del waiting[call_id]
                output = step["result"]
                if isinstance(output, list):
                    _check_result_parts(output, f"input[{i}].result")
                results.append((call_id, _text_of(output) if isinstance(output, list)
                                else output))
            elif kind == "user_input":
                message = (message or "") + _text_of(step.get("content"))
            elif kind in ("text", "image", "audio", "document", "video"):
                message = (message or "") + _text_of(step)
            else:
                raise ApiError(400, f"input[{i}]: a {kind} step cannot be input")
        if waiting and (results or message is not None):
            raise ApiError(400, "The previous interaction waits for function results for "
                           f"call_id {', '.join(sorted(waiting))}: send every one in this "
                           "create")
        if message is None and not results:
            raise ApiError(400, "input holds neither content nor function results")
        return message, results


def _call_step(call: ModelCall) -> dict[str, Any]:
    return {"type": "function_call", "id": call.id, "name": call.name,
            "arguments": dict(call.arguments)}


def _events(interaction: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The interaction as the events its stream carries (each with its ``event_id``)."""
    head = {k: interaction[k] for k in ("id", "model", "created", "updated")}
    events: list[dict[str, Any]] = [
        {"event_type": "interaction.created",
         "interaction": {**head, "status": "in_progress"}}]
    for index, step in enumerate(interaction["steps"]):
        if step["type"] == "model_output" and step.get("content"):
            text = _text_of(step["content"])
            middle = len(text) // 2
            events.append({"event_type": "step.start", "index": index,
                           "step": {"type": "model_output"}})
            events += [{"event_type": "step.delta", "index": index,
                        "delta": {"type": "text", "text": piece}}
                       for piece in (text[:middle], text[middle:]) if piece]
        else:
            events.append({"event_type": "step.start", "index": index, "step": step})
        events.append({"event_type": "step.stop", "index": index})
    events.append({"event_type": "interaction.status_update", "interaction_id": head["id"],
                   "status": interaction["status"]})
    events.append({"event_type": "interaction.completed", "interaction": dict(interaction)})
    for n, event in enumerate(events, 1):
        event["event_id"] = f"{head['id']}:{n}"
    return events
