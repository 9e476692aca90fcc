"""The Messages API on loopback, strict and scripted: ``POST {base_url}/v1/messages``.

Authenticated by ``x-api-key`` (or a bearer token) with an ``anthropic-version`` header, as
``anthropic.Anthropic(base_url=...)`` sends them. Stateless like the real service: each
request's ``messages`` are replayed through the scripted model, and a sequence the API refuses
(a ``tool_use`` without its ``tool_result`` in the next user message, a result for no call,
results after other content) is refused with the API's 400 and error shape
``{"type": "error", "error": {"type", "message"}}``. ``stream: true`` answers the SSE events
``message_start``, ``content_block_start``/``_delta``/``_stop`` (tool input as
``input_json_delta`` pieces), ``message_delta``, ``message_stop``. Faults: the shared and the
stream ones.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from collections.abc import AsyncIterator
from typing import Any

from toolbridge.emulation import Emulator, ScriptedModel, ScriptError, StreamFaults, sse_frames

from ._emulator_checks import ApiError, check_tools, error_body, replay, text_of
from .wire import DIALECT

__all__ = ["MessagesEmulator"]

_KEYS = frozenset({
    "cache_control", "container", "diagnostics", "inference_geo", "max_tokens", "messages",
    "metadata", "model", "output_config", "service_tier", "speed", "stop_sequences", "system",
    "thinking", "tool_choice", "tools", "user_profile_id", "workspace_id", "stream",
    "temperature", "top_k", "top_p"})
"""``MessageCreateParams`` keys (anthropic 2.15), ``stream``, and the sampling parameters
older models take."""
_NO_CALL_STATE = ("the Messages API keeps no calls on the server: an id used again is a new "
                  "call in a new message")
_OBJECT_INPUT = ("a message that is not streamed carries each tool_use input as a JSON object; "
                 "stream it (input_json_delta pieces) to send broken JSON")


def _new_id() -> str:
    return "toolu_01" + secrets.token_urlsafe(18).replace("-", "a").replace("_", "b")[:22]


class MessagesEmulator(Emulator):
    """A stateless Messages API playing a scripted model."""

    dialect = DIALECT
    faults_type = StreamFaults
    faults: StreamFaults

    def __init__(self, *, script: Any = None, faults: Any = None) -> None:
        super().__init__(script=script, faults=faults)
        self.created = 0

    def error_body(self, status: int, message: str) -> Any:
        return error_body(status, message)

    def build_app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def endpoint(request: Any) -> Any:
            try:
                headers = request.headers
                if not (headers.get("x-api-key") or headers.get(
                        "authorization", "").startswith("Bearer ")):
                    raise ApiError(401, "x-api-key header is required")
                if not headers.get("anthropic-version"):
                    raise ApiError(400, "anthropic-version: header is required")
                try:
                    body = json.loads(await request.body() or b"null")
                except ValueError:
                    raise ApiError(400, "The request body is not valid JSON.") from None
                return self._create(body)
            except ApiError as exc:
                return JSONResponse(exc.body(), status_code=exc.status,
                                    headers={"request-id": f"req_{uuid.uuid4().hex[:24]}"})

        return Starlette(routes=[Route("/v1/messages", endpoint, methods=["POST"])])

    def _took(self, messages: list[dict[str, Any]]) -> None:
        """Stateless: a request's new input is its last message, a user message opening a
        turn or the results of the assistant message before it. The conversation is named by
        its first user message (``messages:`` and a digest of it)."""
        conversation = "messages:" + hashlib.sha256(json.dumps(
            messages[0], sort_keys=True).encode()).hexdigest()[:16]
        last = messages[-1]
        content = last.get("content")
        results = [b["tool_use_id"] for b in content or () if isinstance(content, list)
                   and isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            self.intake.took_results(conversation, results)
        elif last.get("role") == "user":
            self.intake.took_message(conversation, text_of(content))

    def _create(self, body: Any) -> Any:
        from starlette.responses import JSONResponse, StreamingResponse

        if not isinstance(body, dict):
            raise ApiError(400, "The request body must be a JSON object.")
        for key in body:
            if key not in _KEYS:
                raise ApiError(400, f"{key}: Extra inputs are not permitted")
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise ApiError(400, "model: Field required")
        tokens = body.get("max_tokens")
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
            raise ApiError(400, "max_tokens: Field required" if tokens is None else
                           "max_tokens: Input should be greater than or equal to 1")
        declared, _ = check_tools(body.get("tools"))
        stream = bool(body.get("stream"))
        unsupported = {"hallucinated_id": _NO_CALL_STATE}
        if not stream:
            unsupported["broken_json"] = _OBJECT_INPUT
        # A strict tool's model fills nothing in: Anthropic leaves optional properties out.
        model = ScriptedModel(self.script, declared, new_id=_new_id, unsupported=unsupported)
        replay(model, body.get("messages"))
        choice = body.get("tool_choice") or {}
        try:
            calls = [] if isinstance(choice, dict) and choice.get("type") == "none" else (
                model.next_round())
        except ScriptError as exc:
            raise ApiError(400, f"emulator script error: {exc}") from None
        if len(calls) > 1 and isinstance(choice, dict) and choice.get("disable_parallel_tool_use"):
            raise ApiError(400, f"emulator script error: the round makes {len(calls)} calls, "
                           "but tool_choice.disable_parallel_tool_use allows one per message")
        self.created += 1
        self._took(body["messages"])
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
            for c in calls] or [{"type": "text", "text": model.reply()}]
        message = {"id": f"msg_01{uuid.uuid4().hex[:22]}", "type": "message",
                   "role": "assistant", "model": body["model"], "content": content,
                   "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 10}}
        if not stream:
            return JSONResponse(message, headers={"request-id": f"req_{uuid.uuid4().hex[:24]}"})
        raw = {c.id: c.raw_arguments for c in calls if c.raw_arguments is not None}
        return StreamingResponse(sse_frames(_events(message, raw), self.faults),
                                 media_type="text/event-stream")


async def _events(message: dict[str, Any], raw: dict[str, str]
                  ) -> AsyncIterator[tuple[str, Any]]:
    """The message as the events the API streams (each block's text or input JSON in two
    pieces; ``raw`` holds a call's argument text sent verbatim)."""
    head = {**message, "content": [], "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": head}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            text = raw.get(block["id"], json.dumps(block["input"]))
            delta_type, field = "input_json_delta", "partial_json"
        else:
            start, text = {"type": "text", "text": ""}, block["text"]
            delta_type, field = "text_delta", "text"
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": start}
        middle = len(text) // 2
        for piece in (text[:middle], text[middle:]):
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": delta_type, field: piece}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"],
                                      "stop_sequence": None},
                            "usage": {"output_tokens": 10}}
    yield "message_stop", {"type": "message_stop"}
