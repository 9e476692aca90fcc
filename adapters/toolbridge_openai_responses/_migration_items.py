"""Conversation items of a migrated thread: its messages (`message_item`), its run steps'
function calls with their outputs (`step_items`), and how verification reads items back
(`held_item`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolbridge.migration import Fate

__all__ = ["held_item", "item_text", "message_item", "step_items"]


def message_item(message: Mapping[str, Any], where: str, fates: list[Fate]
          ) -> tuple[dict[str, Any] | None, str]:
    """The conversation item of one message, and its text."""
    role = "assistant" if message.get("role") == "assistant" else "user"
    parts: list[dict[str, Any]] = []
    texts: list[str] = []
    for i, part in enumerate(message.get("content") or []):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            text = part.get("text")
            value = str(text.get("value", "")) if isinstance(text, Mapping) else str(text)
            texts.append(value)
            parts.append({"type": "output_text" if role == "assistant" else "input_text",
                          "text": value, **({"annotations": []} if role == "assistant"
                                            else {})})
            if isinstance(text, Mapping) and text.get("annotations"):
                fates.append(Fate("message", f"{where}.content[{i}].annotations", "dropped",
                                  "citations need a filename lookup; the cited text stays"))
        elif kind == "refusal" and role == "assistant":
            texts.append(str(part.get("refusal", "")))
            parts.append({"type": "refusal", "refusal": str(part.get("refusal", ""))})
        elif kind in ("image_file", "image_url") and role == "user":
            spec = part.get(kind) or {}
            ref = {"file_id": spec.get("file_id")} if kind == "image_file" else {
                "image_url": spec.get("url")}
            parts.append({"type": "input_image", "detail": spec.get("detail") or "auto", **ref})
        else:
            fates.append(Fate("message", f"{where}.content[{i}]", "dropped",
                              f"{kind} in a {role} message: no item part holds it"))
    if message.get("attachments"):
        fates.append(Fate("message", f"{where}.attachments", "dropped",
                          "items have no attachments: add the files to the file_search "
                          "vector store or the code_interpreter container"))
    if not parts:
        fates.append(Fate("message", where, "dropped", "no content an item can hold"))
        return None, ""
    return {"type": "message", "role": role, "content": parts}, "".join(texts)


def held_item(item: Mapping[str, Any]) -> tuple[str, str] | None:
    """How verification sees a conversation item: a message as (role, text), a function
    call as (``function_call``, ``name arguments``), its output as (``function_call_output``,
    output); other items are not compared."""
    kind = item.get("type")
    if kind == "message":
        return str(item.get("role")), item_text(item)
    if kind == "function_call":
        return "function_call", f"{item.get('name')} {item.get('arguments')}"
    if kind == "function_call_output":
        output = item.get("output")
        return "function_call_output", output if isinstance(output, str) else json.dumps(output)
    return None


def step_items(step: Mapping[str, Any], tid: str, fates: list[Fate]
                ) -> list[tuple[dict[str, Any], tuple[str, str]]]:
    """The items of a completed ``tool_calls`` run step: a ``function_call`` and its
    ``function_call_output`` per function call, in order (with how verification sees them);
    the fate of each call (code interpreter and file search calls are dropped: their items
    need a container or results the step does not hold)."""
    where = f"{tid}.{step.get('run_id')}.{step.get('id')}"
    details = step.get("step_details") or {}
    if step.get("type") != "tool_calls":
        return []
    out: list[tuple[dict[str, Any], tuple[str, str]]] = []
    for i, call in enumerate(details.get("tool_calls") or []):
        kind = call.get("type") if isinstance(call, Mapping) else None
        subject = f"{where}.tool_calls[{i}]"
        if kind != "function":
            fates.append(Fate("tool_call", subject, "dropped",
                              f"the {kind} call: Responses items need the container / results "
                              "the run step does not hold (its answer stays in the next "
                              "assistant message)"))
            continue
        function = call.get("function") or {}
        output = function.get("output")
        if step.get("status") != "completed" or output is None:
            fates.append(Fate("tool_call", subject, "dropped",
                              f"the step is {step.get('status')}: the call has no output "
                              "(a function_call needs its output)"))
            continue
        name, arguments = str(function.get("name")), str(function.get("arguments") or "{}")
        call_id = str(call.get("id"))
        out.append(({"type": "function_call", "call_id": call_id, "name": name,
                     "arguments": arguments}, ("function_call", f"{name} {arguments}")))
        out.append(({"type": "function_call_output", "call_id": call_id,
                     "output": str(output)}, ("function_call_output", str(output))))
        fates.append(Fate("tool_call", subject, "carried",
                          f"{name}: a function_call and its function_call_output item"))
    return out


def item_text(item: Mapping[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", p.get("refusal", ""))) for p in content or []
                   if isinstance(p, Mapping))
