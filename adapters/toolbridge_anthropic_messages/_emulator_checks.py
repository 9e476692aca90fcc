"""What the emulated Messages API refuses, as the API does: the request's tools and its
message sequence (every ``tool_use`` answered by a ``tool_result`` in the next message)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from toolbridge.testing import ScriptError
from toolbridge.testing.emulators import ScriptedModel

from .tools import strict_load
from .wire import NAME_PATTERN, STRICT_OPTIONAL_PARAMETERS, STRICT_TOOLS, STRICT_UNION_PARAMETERS

__all__ = ["ApiError", "check_tools", "replay", "strict_schema_problem", "text_of"]

_STRICT_KEYS = frozenset({"type", "enum", "const", "anyOf", "allOf", "title", "description",
                          "properties", "required", "additionalProperties", "items",
                          "minItems", "format", "$ref", "$defs", "definitions"})
_KINDS = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
          529: "overloaded_error"}


class ApiError(Exception):
    """An error answer: ``{"type": "error", "error": {"type", "message"}}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def body(self) -> dict[str, Any]:
        return error_body(self.status, self.message)


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = _KINDS.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def text_of(content: Any) -> str:
    """The text of a content string or block list (non-text blocks contribute nothing)."""
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content
                       if isinstance(b, Mapping) and b.get("type") == "text")
    return content if isinstance(content, str) else ""


def strict_schema_problem(schema: Any) -> str | None:
    """Why strict mode refuses ``schema`` (outside the supported subset), or None."""
    stack: list[tuple[str, Any]] = [("", schema)]
    while stack:
        where, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        for key in node:
            if key not in _STRICT_KEYS:
                return f"{where or '/'}: '{key}' is not supported in strict mode"
        if node.get("type") == "object" and node.get("additionalProperties") is not False:
            return f"{where or '/'}: objects must set additionalProperties to false"
        if node.get("minItems") not in (None, 0, 1):
            return f"{where or '/'}: minItems values other than 0 or 1 are not supported"
        for key in ("properties", "$defs", "definitions"):
            if isinstance(node.get(key), Mapping):
                stack.extend((f"{where}/{key}/{k}", v) for k, v in node[key].items())
        for key in ("anyOf", "allOf"):
            stack.extend((f"{where}/{key}/{i}", v) for i, v in enumerate(node.get(key) or ()))
        stack.append((f"{where}/items", node.get("items")))
    return None


def check_tools(tools: Any) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The custom tools' schemas by name and the strict ones' names; `ApiError` as the API
    refuses a bad list (server tools are taken as they are)."""
    if tools is None:
        return {}, []
    if not isinstance(tools, list):
        raise ApiError(400, "tools: Input should be a valid list")
    declared: dict[str, dict[str, Any]] = {}
    strict: list[str] = []
    loads = [0, 0]
    for i, tool in enumerate(tools):
        at = f"tools.{i}"
        if not isinstance(tool, Mapping):
            raise ApiError(400, f"{at}: Input should be a valid dictionary or object")
        if tool.get("type", "custom") != "custom":
            continue  # a server tool
        name = tool.get("name")
        if not isinstance(name, str):
            raise ApiError(400, f"{at}.custom.name: Field required")
        if not NAME_PATTERN.match(name):
            raise ApiError(400, f"{at}.custom.name: String should match pattern "
                           f"'{NAME_PATTERN.pattern}'")
        if name in declared:
            raise ApiError(400, "tools: Tool names must be unique.")
        schema = tool.get("input_schema")
        if not isinstance(schema, Mapping):
            raise ApiError(400, f"{at}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            raise ApiError(400, f"{at}.custom.input_schema.type: Input should be 'object'")
        if tool.get("strict") is True:
            problem = strict_schema_problem(schema)
            if problem:
                raise ApiError(400, f"{at}.custom.input_schema: Invalid schema for strict "
                               f"mode: {problem}")
            strict.append(name)
            optional, unions = strict_load(schema)
            loads = [loads[0] + optional, loads[1] + unions]
        declared[name] = dict(schema)
    if len(strict) > STRICT_TOOLS:
        raise ApiError(400, f"Too many strict tools ({len(strict)}). The maximum number of "
                       f"strict tools per request is {STRICT_TOOLS}.")
    if loads[0] > STRICT_OPTIONAL_PARAMETERS or loads[1] > STRICT_UNION_PARAMETERS:
        raise ApiError(400, "The compiled grammar is too large, which would cause performance "
                       "issues. Simplify your tool schemas or reduce the number of strict "
                       "tools.")
    return declared, strict


def _results_of(i: int, content: Any, waiting: list[str]) -> list[tuple[str, Any]]:
    """The ``tool_result`` blocks of user message ``i`` answering ``waiting``."""
    if not isinstance(content, list):
        return []
    found: list[tuple[str, Any]] = []
    other = False
    for j, block in enumerate(content):
        if not isinstance(block, Mapping) or "type" not in block:
            raise ApiError(400, f"messages.{i}.content.{j}.type: Field required")
        if block["type"] != "tool_result":
            other = True
            continue
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str):
            raise ApiError(400, f"messages.{i}.content.{j}.tool_result.tool_use_id: Field "
                           "required")
        if call_id not in waiting:
            raise ApiError(400, f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                           f"`tool_result` blocks: {call_id}. Each `tool_result` block must "
                           "have a corresponding `tool_use` block in the previous message.")
        if other:
            raise ApiError(400, f"messages.{i}.content.{j}: `tool_result` blocks must come "
                           "first in the user message content, before any other block.")
        _check_result_content(block.get("content"), f"messages.{i}.content.{j}.tool_result")
        if any(found_id == call_id for found_id, _ in found):
            raise ApiError(400, f"messages.{i}.content.{j}: each `tool_use` must have a single "
                           f"result. Found multiple `tool_result` blocks with id: {call_id}")
        found.append((call_id, block))
    return found


_RESULT_BLOCKS = ("text", "image", "search_result", "document", "tool_reference",
                  "browser_state")
"""The block types a ``tool_result``'s content takes (``ToolResultBlockParam``)."""
_DOCUMENT_SOURCES = {"base64": ("application/pdf",), "text": ("text/plain",), "url": (),
                     "content": (), "file": ()}
"""A ``document`` block's source types, and the media types those that name one take."""


def _check_result_content(content: Any, at: str) -> None:
    """A ``tool_result``'s content as the API checks it: a string or a list of the block
    types it takes; a document's source of a known type with its media type."""
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise ApiError(400, f"{at}.content: Input should be a valid string or list")
    for k, block in enumerate(content):
        where = f"{at}.content.{k}"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind not in _RESULT_BLOCKS:
            raise ApiError(400, f"{where}: Input tag {kind!r} found using 'type' does not "
                           "match any of the expected tags: " + ", ".join(
                               repr(t) for t in _RESULT_BLOCKS))
        if kind != "document":
            continue
        source = block.get("source")
        media = _DOCUMENT_SOURCES.get(str(source.get("type"))) if isinstance(
            source, Mapping) else None
        if media is None:
            raise ApiError(400, f"{where}.document.source: Input tag does not match any of "
                           "the expected tags: " + ", ".join(map(repr, _DOCUMENT_SOURCES)))
        if media and source.get("media_type") not in media:
            raise ApiError(400, f"{where}.document.source.media_type: Input should be "
                           f"{media[0]!r}")


def _unanswered(i: int, ids: list[str]) -> ApiError:
    return ApiError(400, f"messages.{i}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(ids)}. Each `tool_use` block must "
                    "have a corresponding `tool_result` block in the next message.")


def replay(model: ScriptedModel, messages: Any) -> None:
    """Check the message sequence as the API does, and replay it through ``model``."""
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages: Field required" if messages is None else
                       "messages: List should have at least 1 item after validation")
    waiting: list[str] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            raise ApiError(400, f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = message.get("content")
        if not isinstance(content, (str, list)):
            raise ApiError(400, f"messages.{i}.content: Field required")
        role = message["role"]
        if role == "assistant":
            if waiting:
                raise _unanswered(i, waiting)
            if i == 0:
                raise ApiError(400, "messages: first message must use the \"user\" role")
            ids = [str(b.get("id")) for b in content if isinstance(content, list)
                   and isinstance(b, Mapping) and b.get("type") == "tool_use"] if isinstance(
                       content, list) else []
            if ids:
                waiting = list(dict.fromkeys(ids))
                model.replay_ids(ids)
                with contextlib.suppress(ScriptError):  # replaying: checked when it was made
                    model.next_round()
            continue
        results = _results_of(i, content, waiting)
        missing = [w for w in waiting if w not in {call_id for call_id, _ in results}]
        if missing:
            raise _unanswered(i - 1, missing)
        for call_id, block in results:
            inner = block.get("content", "")
            model.record(text_of(inner) if isinstance(inner, list) else inner, call_id)
        if not results:
            model.start_turn(text_of(content))
        waiting = []
    if waiting:
        raise _unanswered(len(messages) - 1, waiting)
