"""The emulated model's side of a Responses request: replay the context, decide the output.

Stateless by design: the context (previous response chain, conversation items, or the input
of a stateless replay) is replayed through a fresh `ScriptedModel`, so every continuation mode
gives the same next step. Items and responses are built in the shapes of the SDK's models.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
import uuid
from collections.abc import Iterable
from typing import Any

from toolbridge.testing import Script, ScriptError
from toolbridge.testing.emulators import ModelCall, ScriptedModel

__all__ = ["build_events", "message_item", "new_id", "next_output", "response_object",
           "stored_input_item", "text_of"]


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def text_of(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def message_item(text: str) -> dict[str, Any]:
    return {"type": "message", "id": new_id("msg"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def stored_input_item(item: dict[str, Any]) -> dict[str, Any]:
    """An input item as a conversation stores it (ids and ``status`` added)."""
    kind = item.get("type", "message")
    if kind == "message":
        content = item.get("content")
        parts = ([{"type": "input_text", "text": content}] if isinstance(content, str)
                 else copy.deepcopy(content))
        return {"type": "message", "id": item.get("id") or new_id("msg"),
                "role": item.get("role", "user"), "status": "completed", "content": parts}
    stored = copy.deepcopy(item)
    stored.setdefault("id", new_id("fco" if kind == "function_call_output" else "item"))
    stored.setdefault("status", "completed")
    return stored


def next_output(script: Script, tools: dict[str, dict[str, Any]], context: Iterable[Any],
                tool_choice: Any, *, strict: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The output items of the next model step after ``context``; `ScriptError` if the
    script asks for something the declared tools reject."""
    model = ScriptedModel(script, tools, strict=strict,  # strict: null for absent properties
                          new_id=lambda: new_id("call"), approvals=True)
    in_round = False
    items = list(context)
    for index, item in enumerate(items):
        kind = item.get("type", "message")
        if kind in _ROUND_ITEMS:
            if not in_round:
                model.replay_ids(_round_ids(items, index))
                with contextlib.suppress(ScriptError):  # replaying: checked when it was made
                    model.next_round()
            in_round = True
            continue
        in_round = False
        if kind == "function_call_output":
            model.record(item.get("output"))
        elif kind == "mcp_approval_response":
            model.decide(str(item.get("approval_request_id")), item.get("approve") is True,
                         str(item.get("reason") or ""))
        elif kind == "message" and item.get("role") == "user":
            model.start_turn(text_of(item))
    calls = [] if tool_choice == "none" else model.next_round()
    if not calls:
        return [message_item(model.reply())]
    return [_approval_request(call) if call.approval is not None else {
        "type": "function_call", "id": new_id("fc"), "call_id": call.id, "name": call.name,
        "arguments": call.raw_arguments if call.raw_arguments is not None
        else json.dumps(call.arguments), "status": "completed"} for call in calls]


_ROUND_ITEMS = ("function_call", "mcp_approval_request")
"""The output items a scripted round is made of."""


def _approval_request(call: ModelCall) -> dict[str, Any]:
    """An MCP tool call the service asks approval for, as the ``mcp_approval_request`` item."""
    assert call.approval is not None
    return {"type": "mcp_approval_request", "id": call.id, "server_label": call.approval.server,
            "name": call.name, "arguments": json.dumps(call.arguments)}


def _round_ids(items: list[Any], start: int) -> list[str]:
    """The call ids of the round of ``function_call`` items starting at ``items[start]``."""
    ids: list[str] = []
    for item in items[start:]:
        kind = item.get("type", "message")
        if kind not in _ROUND_ITEMS:
            break
        ids.append(str(item.get("call_id") if kind == "function_call" else item.get("id")))
    return ids


def response_object(body: dict[str, Any], *, response_id: str, model: str, tools: Any,
                    output: list[dict[str, Any]], status: str, conversation: str | None,
                    instructions: Any, error: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``Response`` as the service returns it (fields the SDK model declares)."""
    now = int(time.time())
    return {
        "id": response_id, "object": "response", "created_at": now, "status": status,
        "background": bool(body.get("background")),
        "completed_at": now if status == "completed" else None, "error": error,
        "incomplete_details": None, "instructions": instructions,
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": body.get("max_tool_calls"), "metadata": body.get("metadata") or {},
        "model": model, "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "conversation": {"id": conversation} if conversation else None,
        "temperature": body.get("temperature", 1.0), "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"), "tools": copy.deepcopy(tools),
        "top_p": body.get("top_p", 1.0), "truncation": body.get("truncation", "disabled"),
        "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0,
                                                               "cache_write_tokens": 0},
                  "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 20} if status == "completed" else None,
    }


def build_events(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The stream of a response, ``sequence_number`` from 0, ending with its terminal event."""
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    start = {**copy.deepcopy(final), "output": [], "usage": None, "completed_at": None,
             "status": "queued" if final["background"] else "in_progress"}
    emit("response.created", response=start)
    if final["background"]:
        emit("response.queued", response=start)
    emit("response.in_progress", response={**start, "status": "in_progress"})
    for index, item in enumerate(final["output"]):
        if item["type"] == "function_call":
            emit("response.output_item.added", output_index=index,
                 item={**item, "arguments": "", "status": "in_progress"})
            emit("response.function_call_arguments.delta", output_index=index,
                 item_id=item["id"], delta=item["arguments"])
            emit("response.function_call_arguments.done", output_index=index,
                 item_id=item["id"], arguments=item["arguments"])
        elif item["type"] == "mcp_approval_request":  # added whole, then done
            emit("response.output_item.added", output_index=index, item=copy.deepcopy(item))
        else:
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            emit("response.output_item.added", output_index=index,
                 item={**item, "status": "in_progress", "content": []})
            emit("response.content_part.added", output_index=index, item_id=item["id"],
                 content_index=0, part=part)
            emit("response.output_text.delta", output_index=index, item_id=item["id"],
                 content_index=0, delta=text, logprobs=[])
            emit("response.output_text.done", output_index=index, item_id=item["id"],
                 content_index=0, text=text, logprobs=[])
            emit("response.content_part.done", output_index=index, item_id=item["id"],
                 content_index=0, part={**part, "text": text})
        emit("response.output_item.done", output_index=index, item=copy.deepcopy(item))
    terminal = {"completed": "response.completed", "failed": "response.failed",
                "cancelled": "response.cancelled", "incomplete": "response.incomplete"}
    emit(terminal[final["status"]], response=copy.deepcopy(final))
    return events
