"""Chat Completions on loopback, strict and scripted: OpenAI and Azure URL forms.

``POST {base_url}/v1/chat/completions`` (and the bare root, and Azure's v1 form
``/openai/v1/chat/completions``) with ``Authorization: Bearer``; Azure deployments
``POST {base_url}/openai/deployments/{deployment}/chat/completions?api-version=...`` with
``api-key`` or a bearer token (what ``AzureOpenAI`` sends). Stateless like the real service:
each request's ``messages`` are replayed through the scripted model. ``stream: true`` answers
``chat.completion.chunk`` SSE ending with ``data: [DONE]``. Faults: the shared ones and
``reuse_call_ids`` (ids ``call_0``, ``call_1``, ... in every message, as some servers do).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from toolbridge.testing import ScriptError
from toolbridge.testing.emulators import (
    Emulator,
    ScriptedModel,
    sse_frames,
    strict_schema_problem,
    wrong_type,
)
from toolbridge.testing.emulators import OpenAIApiError as ApiError
from toolbridge.testing.emulators import missing_parameter as missing

from .options import ChatFaults
from .wire import DIALECT, MAX_TOOLS

__all__ = ["ChatEmulator"]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_KEYS = frozenset({
    "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "messages", "metadata", "modalities", "model",
    "moderation", "n", "parallel_tool_calls", "prediction", "presence_penalty",
    "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "reasoning_effort",
    "response_format", "safety_identifier", "seed", "service_tier", "stop", "store", "stream",
    "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user",
    "verbosity", "web_search_options"})
"""``CompletionCreateParams`` keys (openai 3.57.0), plus ``stream``."""


def _check_tools(tools: Any) -> dict[str, dict[str, Any]]:
    if tools is None:
        return {}
    if not isinstance(tools, list):
        raise ApiError(400, "Invalid type for 'tools': expected an array.", param="tools",
                       code="invalid_type")
    if len(tools) > MAX_TOOLS:
        raise ApiError(400, f"Invalid 'tools': array too long. Expected an array with maximum "
                       f"length {MAX_TOOLS}, but got an array with length {len(tools)} "
                       "instead.", param="tools", code="array_above_max_length")
    declared: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(tools):
        at = f"tools[{i}]"
        if not isinstance(tool, dict) or tool.get("type") not in ("function", "custom"):
            raise missing(f"{at}.type")
        if tool["type"] == "custom":
            continue
        function = tool.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise missing(f"{at}.function.name")
        if not _NAME.match(function["name"]):
            raise ApiError(400, f"Invalid '{at}.function.name': string does not match pattern. "
                           "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                           param=f"{at}.function.name", code="invalid_value")
        parameters = function.get("parameters") or {}
        problem = strict_schema_problem(parameters) if function.get("strict") is True else None
        if problem:
            raise ApiError(400, f"Invalid schema for function '{function['name']}': {problem}",
                           param=f"{at}.function.parameters",
                           code="invalid_function_parameters")
        declared[function["name"]] = parameters
    return declared


_NO_CALL_STATE = ("Chat Completions keeps no calls on the server: an id used again is a new "
                  "call at a new position (the reuse_call_ids fault plays servers that do it)")


def _strict_names(tools: Any) -> list[str]:
    """Names of the (already checked) functions declared ``strict: true``."""
    return [t["function"]["name"] for t in tools or () if t.get("type") == "function"
            and t["function"].get("strict") is True]


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _check_tool_content(content: Any, at: str) -> None:
    """A tool message's content: a string or an array of text parts (the only part type a
    tool message takes); else the 400."""
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise wrong_type(at, "a string or an array", content)
    for p, part in enumerate(content):
        if not isinstance(part, dict):
            raise wrong_type(f"{at}[{p}]", "an object", part)
        if part.get("type") != "text":
            raise ApiError(400, f"Invalid value: {part.get('type')!r}. Supported values are: "
                           "'text'.", param=f"{at}[{p}].type", code="invalid_value")
        if not isinstance(part.get("text"), str):
            raise wrong_type(f"{at}[{p}].text", "a string", part.get("text"))


def _replay(model: ScriptedModel, messages: Any) -> None:
    """Check the message sequence as the service does, and replay it through ``model``."""
    if not isinstance(messages, list) or not messages:
        raise missing("messages")
    waiting: list[str] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in (
                "system", "developer", "user", "assistant", "tool"):
            raise ApiError(400, f"Invalid value for 'messages[{i}].role'.",
                           param=f"messages[{i}].role", code="invalid_value")
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or "content" not in message:
                raise missing(f"messages[{i}].tool_call_id" if not isinstance(call_id, str)
                               else f"messages[{i}].content")
            if call_id not in waiting:
                raise ApiError(400, "Invalid parameter: messages with role 'tool' must be a "
                               "response to a preceding message with 'tool_calls'.",
                               param=f"messages.[{i}].role")
            waiting.remove(call_id)
            _check_tool_content(message["content"], f"messages[{i}].content")
            model.record(_text(message["content"]) if isinstance(message["content"], list)
                         else message["content"])
            continue
        if waiting:
            raise ApiError(400, "An assistant message with 'tool_calls' must be followed by "
                           "tool messages responding to each 'tool_call_id'. The following "
                           f"tool_call_ids did not have response messages: {', '.join(waiting)}",
                           param=f"messages.[{i}].role")
        if role == "user":
            model.start_turn(_text(message.get("content")))
        elif role == "assistant" and message.get("tool_calls"):
            waiting = [str(c.get("id")) for c in message["tool_calls"] if isinstance(c, dict)]
            model.replay_ids(waiting)
            with contextlib.suppress(ScriptError):  # replaying: checked when it was made
                model.next_round()
    if waiting:
        raise ApiError(400, "An assistant message with 'tool_calls' must be followed by tool "
                       "messages responding to each 'tool_call_id'. The following "
                       f"tool_call_ids did not have response messages: {', '.join(waiting)}",
                       param="messages")


class ChatEmulator(Emulator):
    """A stateless Chat Completions server playing a scripted model."""

    dialect = DIALECT
    faults_type = ChatFaults
    faults: ChatFaults

    def __init__(self, *, script: Any = None, faults: Any = None) -> None:
        super().__init__(script=script, faults=faults)
        self.completions = 0

    def error_body(self, status: int, message: str) -> Any:
        kind = "server_error" if status >= 500 else "requests" if status == 429 else (
            "invalid_request_error")
        code = "rate_limit_exceeded" if status == 429 else None
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def build_app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.routing import Route

        paths = ["/v1/chat/completions", "/chat/completions", "/openai/v1/chat/completions"]
        routes = [Route(p, self._endpoint(azure=p.startswith("/openai")), methods=["POST"])
                  for p in paths]
        routes.append(Route("/openai/deployments/{deployment}/chat/completions",
                            self._endpoint(azure=True, deployment=True), methods=["POST"]))
        return Starlette(routes=routes)

    def _endpoint(self, *, azure: bool, deployment: bool = False) -> Any:
        from starlette.responses import JSONResponse

        async def endpoint(request: Any) -> Any:
            try:
                headers = request.headers
                if not (headers.get("authorization", "").startswith("Bearer ")
                        or (azure and headers.get("api-key"))):
                    raise ApiError(401, "You didn't provide an API key. You need to provide "
                                   "your API key in an Authorization header using Bearer auth "
                                   "(i.e. Authorization: Bearer YOUR_KEY).")
                if deployment and not request.query_params.get("api-version"):
                    return JSONResponse({"error": {"code": "404",
                                                   "message": "Resource not found"}}, 404)
                try:
                    body = json.loads(await request.body() or b"null")
                except ValueError:
                    raise ApiError(400, "We could not parse the JSON body of your request.",
                                   code="invalid_json") from None
                name = request.path_params.get("deployment")
                return self._complete(body, name)
            except ApiError as exc:
                return JSONResponse(exc.body(), status_code=exc.status)

        return endpoint

    def _took(self, messages: list[dict[str, Any]]) -> None:
        """Stateless: a request's new input is its tail, a user message (a new turn) or the
        tool messages after the last assistant message (results). Its conversation is named
        by its first user message (``chat:`` and a digest of it)."""
        first = next((m for m in messages if m["role"] == "user"), None)
        conversation = "chat:" + hashlib.sha256(json.dumps(
            first, sort_keys=True).encode()).hexdigest()[:16]
        last = messages[-1]
        if last["role"] == "user":
            self.intake.took_message(conversation, _text(last.get("content")))
            return
        tail = []
        for message in reversed(messages):
            if message["role"] != "tool":
                break
            tail.append(str(message["tool_call_id"]))
        self.intake.took_results(conversation, reversed(tail))

    def _complete(self, body: Any, deployment: str | None) -> Any:
        from starlette.responses import JSONResponse, StreamingResponse

        if not isinstance(body, dict):
            raise ApiError(400, "We could not parse the JSON body of your request.")
        for key in body:
            if key not in _KEYS:
                raise ApiError(400, f"Unrecognized request argument supplied: {key}",
                               param=key)
        model_name = body.get("model") or deployment
        if not model_name:
            raise missing("model")
        # A strict function's model spells out every property: null for the absent ones.
        model = ScriptedModel(self.script, _check_tools(body.get("tools")),
                              strict=_strict_names(body.get("tools")),
                              new_id=lambda: f"call_{uuid.uuid4().hex[:24]}",
                              unsupported={"hallucinated_id": _NO_CALL_STATE})
        _replay(model, body.get("messages"))
        try:
            calls = [] if body.get("tool_choice") == "none" else model.next_round()
        except ScriptError as exc:
            raise ApiError(400, f"emulator script error: {exc}",
                           code="emulator_script_error") from None
        self.completions += 1
        self._took(body["messages"])
        reuse = self.faults.reuse_call_ids
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None,
                                   "annotations": []}
        if calls:
            message["tool_calls"] = [
                {"id": f"call_{i}" if reuse else c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.raw_arguments
                              if c.raw_arguments is not None else json.dumps(c.arguments)}}
                for i, c in enumerate(calls)]
        else:
            message["content"] = model.reply()
        completion = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion",
            "created": int(time.time()), "model": model_name,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}
        if not body.get("stream"):
            return JSONResponse(completion)
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return StreamingResponse(sse_frames(_chunks(completion, usage), self.faults,
                                            done=b"data: [DONE]\n\n"),
                                 media_type="text/event-stream")


async def _chunks(completion: dict[str, Any], usage: bool) -> AsyncIterator[tuple[None, Any]]:
    """The completion as the chunks a server streams (first fragment per call carries id,
    type and name; the arguments follow in two pieces)."""
    head = {k: completion[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                                     "logprobs": None}]}

    message = completion["choices"][0]["message"]
    yield None, chunk({"role": "assistant", "content": None if message.get("tool_calls")
                       else ""})
    for index, call in enumerate(message.get("tool_calls", [])):
        arguments = call["function"]["arguments"]
        middle = len(arguments) // 2
        yield None, chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                           "function": {"name": call["function"]["name"],
                                                        "arguments": ""}}]})
        for piece in (arguments[:middle], arguments[middle:]):
            yield None, chunk({"tool_calls": [{"index": index,
                                               "function": {"arguments": piece}}]})
    if message.get("content"):
        yield None, chunk({"content": message["content"]})
    yield None, chunk({}, completion["choices"][0]["finish_reason"])
    if usage:
        yield None, {**head, "choices": [], "usage": completion["usage"]}
