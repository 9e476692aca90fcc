"""The emulator's reading of a ``generateContent`` request: checked as the Gemini API checks
it, and replayed through the scripted model (the API keeps no conversation)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import json
import os
from dataclasses import dataclass, field
from typing import Any

from toolbridge import WireFormatError
from toolbridge.testing import ScriptError
from toolbridge.testing.emulators import ScriptedModel

from .tools_import import _parameters
from .wire import MAX_TOOLS, NAME_PATTERN

__all__ = ["ApiError", "Replayed", "check_tools", "replay", "sign"]

REQUEST_FIELDS = frozenset({
    "contents", "tools", "toolConfig", "systemInstruction", "generationConfig",
    "safetySettings", "cachedContent", "model", "labels"})
"""``GenerateContentRequest`` fields (the REST names, as the SDK sends them)."""
_SCHEMA_TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
                           "TYPE_UNSPECIFIED"})
_MODES = frozenset({"MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"})
SIGNATURE_DOC = "https://ai.google.dev/gemini-api/docs/thought-signatures"


class ApiError(Exception):
    """A refused request: Google's status code, message and status name."""

    def __init__(self, code: int, message: str, status: str = "INVALID_ARGUMENT") -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "status": self.status}}


def _unknown(name: str, where: str) -> ApiError:
    return ApiError(400, f'Invalid JSON payload received. Unknown name "{name}" at '
                    f"'{where}': Cannot find field.")


def _check_schema(node: Any, at: str) -> None:
    if not isinstance(node, dict):
        raise ApiError(400, f"* GenerateContentRequest.{at}: must be a Schema object")
    kind = node.get("type")
    if kind is not None and (not isinstance(kind, str) or kind.upper() not in _SCHEMA_TYPES):
        raise ApiError(400, f"Invalid value at '{at}.type' ({kind!r})")
    if isinstance(kind, str) and kind.upper() == "OBJECT" and not node.get("properties") and (
            not isinstance(node.get("additionalProperties"), dict)):
        raise ApiError(400, f"* GenerateContentRequest.{at}.properties: should be non-empty "
                       "for OBJECT type")
    for key, value in node.items():
        if key in ("properties",) and isinstance(value, dict):
            for name, sub in value.items():
                _check_schema(sub, f"{at}.properties[{name}].value")
        elif key in ("items",):
            _check_schema(value, f"{at}.items")
        elif key == "anyOf" and isinstance(value, list):
            for i, sub in enumerate(value):
                _check_schema(sub, f"{at}.any_of[{i}]")
        elif key not in ("type", "format", "title", "description", "nullable", "enum",
                         "maxItems", "minItems", "required", "minProperties", "maxProperties",
                         "minLength", "maxLength", "pattern", "example", "propertyOrdering",
                         "default", "minimum", "maximum", "additionalProperties"):
            raise _unknown(key, at)


def check_tools(tools: Any) -> dict[str, dict[str, Any]]:
    """The declared functions (name → JSON Schema of the arguments) of a request's ``tools``;
    `ApiError` for what the API refuses."""
    if tools is None:
        return {}
    if not isinstance(tools, list):
        raise ApiError(400, "Invalid value at 'tools': expected a list of Tool")
    declared: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise ApiError(400, f"Invalid value at 'tools[{i}]': expected a Tool object")
        functions = tool.get("functionDeclarations") or []
        if not isinstance(functions, list):
            raise ApiError(400, f"Invalid value at 'tools[{i}].function_declarations': "
                           "expected a list")
        for j, function in enumerate(functions):
            at = f"tools[{i}].function_declarations[{j}]"
            name = function.get("name") if isinstance(function, dict) else None
            if not isinstance(name, str) or not name:
                raise ApiError(400, f"* GenerateContentRequest.{at}.name: Name cannot be empty.")
            if not NAME_PATTERN.match(name):
                raise ApiError(400, f"* GenerateContentRequest.{at}.name: Invalid function "
                               "name. Must start with a letter or an underscore. Must be a-z, "
                               "A-Z, 0-9, or contain underscores, dots, colons and dashes, "
                               "with a maximum length of 64.")
            if "parameters" in function and "parametersJsonSchema" in function:
                raise ApiError(400, f"* GenerateContentRequest.{at}: parameters and "
                               "parameters_json_schema are mutually exclusive")
            if function.get("parameters") is not None:
                _check_schema(function["parameters"], f"{at}.parameters")
            try:
                declared[name] = _parameters(function, at, function)
            except WireFormatError as exc:
                raise ApiError(400, f"* GenerateContentRequest.{at}: {exc}") from None
    if len(declared) > MAX_TOOLS:
        raise ApiError(400, f"* GenerateContentRequest.tools: at most {MAX_TOOLS} function "
                       f"declarations, got {len(declared)}")
    return declared


def tool_mode(config: Any) -> tuple[str, frozenset[str] | None]:
    """``toolConfig.functionCallingConfig``: the ``mode`` (``AUTO`` when absent) and the
    ``allowedFunctionNames`` (None: any declared function)."""
    calling = (config if isinstance(config, dict) else {}).get("functionCallingConfig")
    calling = calling if isinstance(calling, dict) else {}
    mode = str(calling.get("mode") or "AUTO").upper()
    if mode not in _MODES:
        raise ApiError(400, f"Invalid value at 'tool_config.function_calling_config.mode' "
                       f"({calling.get('mode')!r})")
    allowed = calling.get("allowedFunctionNames")
    if allowed is None:
        return mode, None
    if not isinstance(allowed, list) or not all(isinstance(n, str) for n in allowed):
        raise ApiError(400, "Invalid value at 'tool_config.function_calling_config."
                       "allowed_function_names': expected a list of strings")
    if mode not in ("ANY", "VALIDATED"):
        raise ApiError(400, "* GenerateContentRequest.tool_config.function_calling_config."
                       "allowed_function_names: only allowed when mode is ANY or VALIDATED")
    return mode, frozenset(allowed)


def signature_bytes(text: Any) -> bytes | None:
    """A ``thoughtSignature`` decoded (proto JSON bytes: standard or URL-safe base64)."""
    if not isinstance(text, str):
        return None
    try:
        standard = text.replace("-", "+").replace("_", "/")
        return base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


_SIGNING_KEY = os.urandom(32)
"""The key of this process's signatures: any emulator in it verifies another's (a restarted
driver may meet a new emulator), as any Gemini server verifies Google's."""


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)  # a Struct number: 2 and 2.0 are the same double
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _digest(nonce: bytes, calls: list[Any]) -> bytes:
    text = json.dumps([[c.get("id") or "", c.get("name"), _plain(c.get("args") or {})]
                       for c in calls], sort_keys=True)
    return hmac.new(_SIGNING_KEY, nonce + text.encode(), hashlib.sha256).digest()[:20]


def sign(calls: list[dict[str, Any]]) -> str:
    """The ``thoughtSignature`` of a round of ``functionCall`` objects: a nonce and a MAC of
    the calls, so a signature moved to other calls, altered or forged does not verify."""
    nonce = os.urandom(12)
    return base64.b64encode(nonce + _digest(nonce, calls)).decode()


def _verified(signature: bytes | None, calls: list[Any]) -> bool:
    if signature is None or len(signature) != 32:
        return False
    return hmac.compare_digest(signature[12:], _digest(signature[:12], calls))


@dataclass
class Replayed:
    """What replaying a request's ``contents`` found."""

    conversation_text: str = ""
    """The first user text (names the conversation in the journal)."""
    tail: str = "user"
    """``user`` (a new message), ``results`` (function responses) or ``model``."""
    last_text: str = ""
    result_ids: list[str] = field(default_factory=list)


def _text(parts: list[Any]) -> str:
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict)
                   and isinstance(p.get("text"), str) and not p.get("thought"))


def replay(model: ScriptedModel, contents: Any) -> Replayed:
    """Check ``contents`` as the API does and replay it through ``model``.

    Each ``model`` turn with function calls must be followed by a turn with exactly one
    ``functionResponse`` per call (name set, id matching when the call had one); in the
    current turn (since the last user text) each such model turn must carry, on its first
    ``functionCall`` part, the ``thoughtSignature`` issued with it (`sign`).
    """
    if not isinstance(contents, list) or not contents:
        raise ApiError(400, "* GenerateContentRequest.contents: contents is not specified")
    found = Replayed()
    waiting: list[tuple[str | None, str]] = []
    model_turns: list[tuple[int, list[Any]]] = []
    for i, content in enumerate(contents):
        at = f"contents[{i}]"
        if not isinstance(content, dict):
            raise ApiError(400, f"Invalid value at '{at}': expected a Content object")
        role = content.get("role") or "user"
        parts = content.get("parts")
        if role not in ("user", "model", "function") or not isinstance(parts, list) or not parts:
            raise ApiError(400, f"* GenerateContentRequest.{at}.parts: contents.parts must "
                           "not be empty." if role in ("user", "model", "function") else
                           f"Please use a valid role: user, model. ({at}.role: {role!r})")
        for j, part in enumerate(parts):
            _check_part(part, f"{at}.parts[{j}]")
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        if waiting:
            _answer(model, waiting, responses, at)
            found.tail, found.result_ids = "results", [r.get("id") or r["name"]
                                                       for r in responses]
            waiting = []
            continue
        if responses:
            raise ApiError(400, f"* GenerateContentRequest.{at}: a function response turn "
                           "must come immediately after a function call turn.")
        if role == "model":
            calls = [p for p in parts if "functionCall" in p]
            found.tail = "model"
            if calls:
                model_turns.append((i, parts))
                waiting = [(c["functionCall"].get("id"), str(c["functionCall"].get("name")))
                           for c in calls]
                model.replay_ids([cid or "" for cid, _ in waiting])
                with contextlib.suppress(ScriptError):  # replaying: checked when it was made
                    model.next_round()
            continue
        text = _text(parts)
        model.start_turn(text)
        model_turns = []
        found.conversation_text = found.conversation_text or json.dumps(content,
                                                                        sort_keys=True)
        found.tail, found.last_text = "user", text
    if waiting:
        raise ApiError(400, "Please ensure that function call turn comes immediately after a "
                       "user turn or after a function response turn.")
    for i, parts in model_turns:
        _check_signature(parts, f"contents[{i}]")
    return found


def _check_part(part: Any, at: str) -> None:
    """A ``Part`` as the API reads it: an object; a ``functionCall`` with a name, an optional
    string id and object ``args``; a ``functionResponse`` with an optional string id."""
    if not isinstance(part, dict):
        raise ApiError(400, f"Invalid value at '{at}': expected a Part object")
    for key in ("functionCall", "functionResponse"):
        if key not in part:
            continue
        value = part[key]
        where = f"{at}.{key}"
        if not isinstance(value, dict):
            raise ApiError(400, f"Invalid value at '{where}': expected an object")
        if value.get("id") is not None and not isinstance(value["id"], str):
            raise ApiError(400, f"Invalid value at '{where}.id': expected a string")
        if value.get("name") is not None and not isinstance(value["name"], str):
            raise ApiError(400, f"Invalid value at '{where}.name': expected a string")
        if key == "functionCall":
            if not value.get("name"):
                raise ApiError(400, f"* GenerateContentRequest.{where}.name: Name cannot be "
                               "empty.")
            if value.get("args") is not None and not isinstance(value["args"], dict):
                raise ApiError(400, f"Invalid value at '{where}.args': expected an object")
        else:
            _check_response_parts(value.get("parts"), f"{where}.parts")


_MEDIA = {"inlineData": ("mimeType", "data"), "fileData": ("mimeType", "fileUri")}
"""A ``FunctionResponsePart``'s kinds, and the string fields each needs."""


def _check_response_parts(parts: Any, at: str) -> None:
    """A ``functionResponse``'s ``parts``: absent, or a list of ``FunctionResponsePart``
    objects, each one ``inlineData`` (``mimeType``, base64 ``data``) or ``fileData``
    (``mimeType``, ``fileUri``)."""
    if parts is None:
        return
    if not isinstance(parts, list):
        raise ApiError(400, f"Invalid value at '{at}': expected a list")
    for k, part in enumerate(parts):
        where = f"{at}[{k}]"
        kinds = [kind for kind in _MEDIA if isinstance(part, dict) and kind in part]
        if len(kinds) != 1:
            raise ApiError(400, f"Invalid value at '{where}': a FunctionResponsePart holds "
                           "one of inlineData, fileData")
        media = part[kinds[0]]
        for name in _MEDIA[kinds[0]]:
            if not isinstance(media, dict) or not isinstance(media.get(name), str) or not (
                    media.get(name)):
                raise ApiError(400, f"* GenerateContentRequest.{where}.{kinds[0]}.{name}: "
                               "required field is not set.")
        if kinds[0] == "inlineData":
            try:
                base64.b64decode(media["data"], validate=True)
            except ValueError:
                raise ApiError(400, f"Invalid value at '{where}.inlineData.data' (TYPE_BYTES), "
                               "Base64 decoding failed") from None


def _check_signature(parts: list[Any], at: str) -> None:
    index, first = next((j, p) for j, p in enumerate(parts)
                        if isinstance(p, dict) and "functionCall" in p)
    issued = signature_bytes(first.get("thoughtSignature"))
    if "thoughtSignature" not in first:
        name = first["functionCall"].get("name")
        raise ApiError(400, "Function call is missing a thought_signature in functionCall "
                       f"parts. This is required for tools to work correctly. Additional "
                       f"data, function call `default_api:{name}`, position {index + 1} "
                       f"({at}.parts[{index}]). Please refer to {SIGNATURE_DOC} for more "
                       "details.")
    calls = [p["functionCall"] for p in parts if isinstance(p, dict) and "functionCall" in p]
    if not _verified(issued, calls):
        raise ApiError(400, f"Corrupted thought signature ({at}.parts[{index}]"
                       ".thought_signature).")


def _answer(model: ScriptedModel, waiting: list[tuple[str | None, str]],
            responses: list[dict[str, Any]], at: str) -> None:
    if len(responses) != len(waiting):
        raise ApiError(400, "Please ensure that the number of function response parts is "
                       "equal to the number of function call parts of the function call "
                       f"turn ({at}: {len(responses)} responses for {len(waiting)} calls).")
    open_calls = list(waiting)
    for j, response in enumerate(responses):
        where = f"{at}.parts[{j}].function_response"
        name = response.get("name")
        if not isinstance(name, str) or not name:
            raise ApiError(400, f"* GenerateContentRequest.{where}.name: Name cannot be empty.")
        if not isinstance(response.get("response"), dict):
            raise ApiError(400, f"* GenerateContentRequest.{where}.response: must be a JSON "
                           "object")
        call_id = response.get("id")
        match = next((c for c in open_calls if c == (call_id, name)), None) if call_id else (
            next((c for c in open_calls if c[1] == name), None))
        if match is None:
            raise ApiError(400, f"* GenerateContentRequest.{where}: no function call "
                           f"{name!r}{f' with id {call_id!r}' if call_id else ''} in the "
                           "previous turn is waiting for this response.")
        open_calls.remove(match)
        payload = response["response"]
        output = payload.get("output", payload.get("error", payload)) if set(payload) <= {
            "output", "error"} and payload else payload
        model.record(output if isinstance(output, str) else json.dumps(output),
                     call_id or None)

