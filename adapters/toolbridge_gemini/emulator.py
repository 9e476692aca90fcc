"""The Gemini API's ``generateContent`` on loopback, strict and scripted.

``POST {base_url}/{v1beta|v1}/models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse`` (each chunk a ``GenerateContentResponse``), the key as
``x-goog-api-key`` or ``?key=`` (what ``genai.Client(api_key=..., http_options={"base_url":
...})`` sends). Stateless like the real API: each request's ``contents`` are replayed through
the scripted model. Each round's first ``functionCall`` part carries a ``thoughtSignature``
(a MAC of the round's calls, so any emulator of this process verifies it);
in the current turn a model content sent back without it (or with another) is refused, as
Gemini 3 does. Faults: the shared and stream ones, and ``omit_call_ids``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from toolbridge.emulation import Emulator, ScriptedModel, ScriptError, sse_frames

from ._replay import REQUEST_FIELDS, ApiError, check_tools, replay, sign, tool_mode
from .options import GeminiFaults
from .wire import DIALECT

__all__ = ["GeminiEmulator"]

_NO_ARGUMENT_TEXT = ("gemini sends a call's arguments as args, a Struct (a JSON object), "
                     "never as text, so argument text that is not JSON cannot be expressed")
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
           404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def _floats(value: Any) -> Any:
    """Struct numbers as doubles printed ``2.0`` (the ``float`` number style)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return value


class GeminiEmulator(Emulator):
    """A stateless ``generateContent`` service playing a scripted model.

    ``number_style`` says how ``args`` numbers (a ``Struct``'s doubles) are printed:
    ``"proto"`` (``2``) or ``"float"`` (``2.0``).
    """

    dialect = DIALECT
    faults_type = GeminiFaults
    faults: GeminiFaults

    def __init__(self, *, script: Any = None, faults: Any = None,
                 number_style: Literal["proto", "float"] = "proto") -> None:
        super().__init__(script=script, faults=faults)
        self.number_style = number_style
        self.generated = 0

    def error_body(self, status: int, message: str) -> Any:
        return ApiError(status, message, _STATUS.get(status, "UNKNOWN")).body()

    def build_app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.routing import Route

        return Starlette(routes=[Route("/{version}/models/{target}", self._endpoint,
                                       methods=["POST"])])

    async def _endpoint(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        try:
            version = request.path_params["version"]
            model_name, _, method = request.path_params["target"].partition(":")
            if version not in ("v1", "v1beta", "v1alpha") or method not in (
                    "generateContent", "streamGenerateContent"):
                raise ApiError(404, f"The requested URL {request.url.path} was not found.",
                               "NOT_FOUND")
            key = request.headers.get("x-goog-api-key") or request.query_params.get("key")
            if not key:
                raise ApiError(403, "Method doesn't allow unregistered callers (callers "
                               "without established identity). Please use API Key or other "
                               "form of API consumer identity to call this API.",
                               "PERMISSION_DENIED")
            try:
                body = json.loads(await request.body() or b"null")
            except ValueError:
                raise ApiError(400, "Invalid JSON payload received.") from None
            response = self._generate(body, model_name)
            if method == "generateContent":
                return JSONResponse(response)
            return self._stream(response, request.query_params.get("alt") == "sse")
        except ApiError as exc:
            return JSONResponse(exc.body(), status_code=exc.code)

    def _new_id(self) -> str:
        return uuid.uuid4().hex[:8]

    def _generate(self, body: Any, model_name: str) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ApiError(400, "Invalid JSON payload received. Expected an object.")
        for key in body:
            if key not in REQUEST_FIELDS:
                raise ApiError(400, f'Invalid JSON payload received. Unknown name "{key}": '
                               "Cannot find field.")
        declared = check_tools(body.get("tools"))
        mode = tool_mode(body.get("toolConfig"))
        model = ScriptedModel(self.script, declared, new_id=self._new_id,
                              unsupported={"broken_json": _NO_ARGUMENT_TEXT})
        found = replay(model, body.get("contents"))
        if found.tail == "model":
            raise ApiError(400, "Please ensure that multiturn requests alternate between user "
                           "and model (the last content is the model's).")
        try:
            calls = [] if mode == "NONE" else model.next_round()
        except ScriptError as exc:
            raise ApiError(400, f"emulator script error: {exc}") from None
        self.generated += 1
        self._took(found, body["contents"])
        parts: list[dict[str, Any]] = []
        for call in calls:
            function: dict[str, Any] = {"name": call.name, "args": (
                _floats(call.arguments) if self.number_style == "float" else call.arguments)}
            if not self.faults.omit_call_ids:
                function = {"id": call.id, **function}
            parts.append({"functionCall": function})
        if parts:
            parts[0]["thoughtSignature"] = sign([p["functionCall"] for p in parts])
        else:
            parts.append({"text": model.reply()})
        return {
            "candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10,
                              "totalTokenCount": 20},
            "modelVersion": model_name.removeprefix("models/"),
            "responseId": uuid.uuid4().hex[:22]}

    def _took(self, found: Any, contents: list[Any]) -> None:
        """A request's new input is its tail: a user message (a new turn) or the function
        responses after the last model content. Its conversation is named by its first user
        content (``gemini:`` and a digest of it)."""
        conversation = "gemini:" + hashlib.sha256(
            found.conversation_text.encode()).hexdigest()[:16]
        if found.tail == "user":
            self.intake.took_message(conversation, found.last_text)
        elif found.tail == "results":
            self.intake.took_results(conversation, found.result_ids)

    def _stream(self, response: dict[str, Any], sse: bool) -> Any:
        from starlette.responses import JSONResponse, StreamingResponse

        chunks = list(_chunks(response))
        if not sse:  # without alt=sse the API answers one JSON array of the chunks
            return JSONResponse(chunks)

        async def events() -> AsyncIterator[tuple[None, Any]]:
            for chunk in chunks:
                yield None, chunk

        return StreamingResponse(sse_frames(events(), self.faults),
                                 media_type="text/event-stream")


def _chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The response as the chunks the API streams: a text reply in two pieces, each function
    call whole in a chunk of its own, ``finishReason`` and usage on the last."""
    candidate = response["candidates"][0]
    parts = candidate["content"]["parts"]
    pieces: list[dict[str, Any]] = []
    for part in parts:
        if "text" in part:
            text = part["text"]
            middle = len(text) // 2
            pieces.extend({"text": t} for t in (text[:middle], text[middle:]) if t)
        else:
            pieces.append(part)
    pieces = pieces or [{"text": ""}]
    head = {"modelVersion": response["modelVersion"], "responseId": response["responseId"]}
    out = []
    for i, piece in enumerate(pieces):
        chunk_candidate: dict[str, Any] = {"content": {"role": "model", "parts": [piece]},
                                           "index": 0}
        chunk: dict[str, Any] = {"candidates": [chunk_candidate], **head}
        if i == len(pieces) - 1:
            chunk_candidate["finishReason"] = candidate["finishReason"]
            chunk["usageMetadata"] = response["usageMetadata"]
        out.append(chunk)
    return out
