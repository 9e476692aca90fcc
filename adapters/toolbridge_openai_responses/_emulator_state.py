"""The emulated Responses service's state: responses, conversations, Foundry agent versions."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

from toolbridge.testing import Script, ScriptError
from toolbridge.testing.emulators import Intake

from ._emulator_checks import (
    ApiError,
    check_create,
    check_output,
    check_tools,
    declared,
    strict_names,
)
from ._emulator_model import (
    build_events,
    new_id,
    next_output,
    response_object,
    stored_input_item,
)
from .wire import MAX_ITEMS_PER_CREATE, TERMINAL_STATUSES

__all__ = ["EmulatedService", "StoredResponse"]


@dataclass
class StoredResponse:
    """One response: its final object, the context after it, its stream, its poll state."""

    final: dict[str, Any]
    context: list[dict[str, Any]]
    events: list[dict[str, Any]]
    polls_left: int = 0
    """Background responses: reads still answered ``in_progress`` before the final state."""

    def current(self) -> dict[str, Any]:
        if self.polls_left > 0:
            return {**copy.deepcopy(self.final), "status": "in_progress", "output": [],
                    "usage": None, "completed_at": None}
        return copy.deepcopy(self.final)


@dataclass
class Conversation:
    conversation: dict[str, Any]
    items: list[dict[str, Any]] = field(default_factory=list)


_INPUT_KINDS = ("message", "function_call", "function_call_output", "mcp_approval_response",
                "reasoning")


def _input_items(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    items = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ApiError(400, f"Invalid type for 'input[{i}]': expected an object.",
                           param=f"input[{i}]", code="invalid_type")
        kind = item.get("type", "message")
        if kind not in _INPUT_KINDS:
            raise ApiError(400, f"Invalid value: '{kind}'. This emulator supports message, "
                           "function_call, function_call_output, mcp_approval_response and "
                           "reasoning input items.",
                           param=f"input[{i}].type", code="invalid_value")
        if kind == "function_call_output":
            check_output(item, f"input[{i}]")
        if kind == "mcp_approval_response" and not (
                isinstance(item.get("approval_request_id"), str)
                and isinstance(item.get("approve"), bool)):
            raise ApiError(400, f"Invalid 'input[{i}]': an mcp_approval_response needs "
                           "approval_request_id (a string) and approve (a boolean).",
                           param=f"input[{i}]", code="invalid_value")
        items.append(item)
    return items


def _check_answers(context: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    """Every output answers a call of the context, and every call of the context is answered
    (the reported 400s of openai-responses.md §8)."""
    calls = {i["call_id"] for i in context + new if i.get("type") == "function_call"}
    answered = {i["call_id"] for i in context if i.get("type") == "function_call_output"}
    for item in new:
        if item.get("type") == "function_call_output" and (
                item["call_id"] not in calls or item["call_id"] in answered):
            raise ApiError(400, "No tool call found for function call output with call_id "
                           f"{item['call_id']}.", param="input")
        if item.get("type") == "function_call_output":
            answered.add(item["call_id"])
    for call in calls - answered:
        raise ApiError(400, f"No tool output found for function call {call}.", param="input")
    asked = {i["id"] for i in context if i.get("type") == "mcp_approval_request"}
    decided = {i["approval_request_id"] for i in context
               if i.get("type") == "mcp_approval_response"}
    for item in new:
        if item.get("type") != "mcp_approval_response":
            continue
        request = item["approval_request_id"]
        if request not in asked or request in decided:  # unknown, or answered before
            raise ApiError(400, f"No pending MCP approval request found with id {request}.",
                           param="input")
        decided.add(request)


DEFAULT_DEPLOYMENTS = {"gpt-5.1": "gpt-5.1", "gpt-5.1-mini": "gpt-5.1-mini"}
"""The model deployments an emulated Foundry project starts with."""


class EmulatedService:
    """What the routes call; every method raises `ApiError` for what the service refuses."""

    def __init__(self, script: Script, background_polls: int = 1,
                 intake: Intake | None = None) -> None:
        self.script = script
        self.intake = intake or Intake()
        """What it took: user messages and function call outputs, by conversation (or, for
        a chain of responses, the first response's id)."""
        self._chains: dict[str, str] = {}
        self.background_polls = background_polls
        self.responses: dict[str, StoredResponse] = {}
        self.conversations: dict[str, Conversation] = {}
        self.agents: dict[str, list[dict[str, Any]]] = {}
        self.deployments: dict[str, str] = dict(DEFAULT_DEPLOYMENTS)
        """A Foundry project's model deployments: name -> model (tests change it)."""

    # ------------------------------------------------------------------ responses
    def create(self, body: Any, *, foundry: bool) -> StoredResponse:
        body = check_create(body, foundry=foundry)
        model, tools, instructions = body.get("model"), body.get("tools"), body.get(
            "instructions")
        if body.get("agent_reference") is not None:
            definition = self._agent(body["agent_reference"])["definition"]
            model = definition.get("model")  # the saved version's settings win (Foundry docs)
            tools, instructions = definition.get("tools", []), definition.get("instructions")
        tools = check_tools(tools)
        new = _input_items(body.get("input"))
        context, conversation = self._context(body)
        _check_answers(context, new)
        full = context + new
        status, error = "completed", None
        try:
            output = next_output(self.script, declared(tools), full, body.get("tool_choice"),
                                     strict=strict_names(tools))
        except ScriptError as exc:
            output, status = [], "failed"
            error = {"code": "server_error", "message": f"emulator script error: {exc}"}
        response_id = new_id("resp")
        final = response_object(body, response_id=response_id, model=str(model or ""),
                                tools=tools, output=output, status=status,
                                conversation=conversation.conversation["id"]
                                if conversation else None, instructions=instructions,
                                error=error)
        stored = StoredResponse(final, full + copy.deepcopy(output), build_events(final),
                                self.background_polls if body.get("background") else 0)
        if conversation is not None:
            conversation.items += [stored_input_item(i) for i in new] + copy.deepcopy(output)
        previous = body.get("previous_response_id")
        chain = (conversation.conversation["id"] if conversation is not None
                 else self._chains.get(str(previous), str(previous)) if previous
                 else response_id)
        if body.get("store", True) is not False:
            self.responses[response_id] = stored
            self._chains[response_id] = chain
        self._took(chain, new)
        return stored

    def _took(self, conversation: str, items: list[dict[str, Any]]) -> None:
        for item in items:
            if item.get("type") == "function_call_output":
                self.intake.took_results(conversation, [item["call_id"]])
            elif item.get("type", "message") == "message" and item.get("role") == "user":
                content = item.get("content")
                self.intake.took_message(conversation, content if isinstance(content, str)
                                         else "".join(str(p.get("text", "")) for p in content
                                                      or [] if isinstance(p, dict)))

    def _context(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], Conversation | None]:
        previous = body.get("previous_response_id")
        if previous:
            return list(self.response(previous, "previous_response_id").context), None
        reference = body.get("conversation")
        if reference:
            conversation_id = reference.get("id") if isinstance(reference, dict) else reference
            conversation = self.conversation(str(conversation_id))
            return list(conversation.items), conversation
        return [], None

    def response(self, response_id: str, param: str | None = None) -> StoredResponse:
        stored = self.responses.get(response_id)
        if stored is None:
            what = "Previous response" if param else "Response"
            raise ApiError(400 if param else 404, f"{what} with id '{response_id}' not found.",
                           param=param, code="previous_response_not_found" if param else None)
        return stored

    def read(self, response_id: str) -> dict[str, Any]:
        """``GET /responses/{id}``: a background response advances one step per read."""
        stored = self.response(response_id)
        current = stored.current()
        if stored.polls_left > 0:
            stored.polls_left -= 1
        return current

    def cancel(self, response_id: str) -> dict[str, Any]:
        stored = self.response(response_id)
        if not stored.final["background"]:
            raise ApiError(400, "Only responses created with background=true can be "
                           "cancelled.", param="response_id")
        if stored.polls_left > 0:
            stored.polls_left = 0
            stored.final.update(status="cancelled", output=[], usage=None, completed_at=None)
        elif stored.final["status"] in TERMINAL_STATUSES and stored.final["status"] != (
                "cancelled"):
            raise ApiError(400, "Cannot cancel a completed response.", param="response_id")
        return copy.deepcopy(stored.final)

    # ------------------------------------------------------------------ conversations
    def conversation(self, conversation_id: str) -> Conversation:
        conversation = self.conversations.get(conversation_id)
        if conversation is None:
            raise ApiError(404, f"Conversation with id '{conversation_id}' not found.",
                           param="conversation", code="not_found")
        return conversation

    def create_conversation(self, body: Any) -> dict[str, Any]:
        body = body or {}
        if not isinstance(body, dict):
            raise ApiError(400, "We could not parse the JSON body of your request.")
        record = {"id": new_id("conv"), "object": "conversation",
                  "created_at": int(time.time()), "metadata": body.get("metadata") or {}}
        conversation = Conversation(record)
        self.conversations[str(record["id"])] = conversation
        self.add_items(str(record["id"]), {"items": body.get("items") or []})
        return copy.deepcopy(record)

    def delete_conversation(self, conversation_id: str) -> dict[str, Any]:
        self.conversation(conversation_id)
        del self.conversations[conversation_id]
        return {"id": conversation_id, "object": "conversation.deleted", "deleted": True}

    def list_deployments(self) -> dict[str, Any]:
        """``GET {project}/deployments``: azure-ai-projects' ``ModelDeployment`` shape."""
        return {"value": [{"type": "ModelDeployment", "name": name, "modelName": model,
                           "modelVersion": "1", "modelPublisher": "OpenAI",
                           "capabilities": {"chat_completion": "true"},
                           "sku": {"name": "GlobalStandard", "capacity": 10, "family": "",
                                   "size": "", "tier": ""}}
                          for name, model in self.deployments.items()]}

    def add_items(self, conversation_id: str, body: Any) -> dict[str, Any]:
        conversation = self.conversation(conversation_id)
        items = body.get("items") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise ApiError(400, "Missing required parameter: 'items'.", param="items",
                           code="missing_required_parameter")
        if len(items) > MAX_ITEMS_PER_CREATE:
            raise ApiError(400, f"Invalid 'items': array too long. Expected an array with "
                           f"maximum length {MAX_ITEMS_PER_CREATE}, but got an array with "
                           f"length {len(items)} instead.", param="items",
                           code="array_above_max_length")
        new = _input_items(items)
        outputs = [i for i in new if i.get("type") == "function_call_output"]
        calls = {i["call_id"] for i in conversation.items + new
                 if i.get("type") == "function_call"}
        done = {i["call_id"] for i in conversation.items
                if i.get("type") == "function_call_output"}
        for item in outputs:
            if item["call_id"] not in calls or item["call_id"] in done:
                raise ApiError(400, "No tool call found for function call output with call_id "
                               f"{item['call_id']}.", param="items")
            done.add(item["call_id"])
        stored = [stored_input_item(i) for i in new]
        conversation.items += stored
        self._took(conversation_id, new)
        return _page(copy.deepcopy(stored), False)

    def list_items(self, conversation_id: str, query: Any) -> dict[str, Any]:
        items = list(self.conversation(conversation_id).items)
        if query.get("order", "desc") == "desc":
            items.reverse()
        try:
            limit = int(query.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            raise ApiError(400, "Invalid 'limit': must be between 1 and 100.", param="limit",
                           code="invalid_value")
        after = query.get("after")
        if after:
            ids = [i["id"] for i in items]
            if after not in ids:
                raise ApiError(400, f"Invalid 'after': no item '{after}'.", param="after",
                               code="invalid_value")
            items = items[ids.index(after) + 1:]
        return _page(copy.deepcopy(items[:limit]), len(items) > limit)

    # ------------------------------------------------------------------ Foundry agents
    def create_agent_version(self, name: str, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("definition"), dict):
            raise ApiError(400, "Missing required parameter: 'definition'.",
                           param="definition", code="missing_required_parameter")
        definition = body["definition"]
        if definition.get("kind") == "prompt" and not definition.get("model"):
            raise ApiError(400, "Missing required parameter: 'definition.model'.",
                           param="definition.model", code="missing_required_parameter")
        check_tools(definition.get("tools", []))
        versions = self.agents.setdefault(name, [])
        version = {"object": "agent.version", "id": f"{name}:{len(versions) + 1}",
                   "name": name, "version": str(len(versions) + 1),
                   "description": body.get("description", ""), "created_at": int(time.time()),
                   "metadata": body.get("metadata") or {}, "status": "active",
                   "definition": copy.deepcopy(definition)}
        versions.append(version)
        return copy.deepcopy(version)

    def _agent(self, reference: Any) -> dict[str, Any]:
        if not isinstance(reference, dict) or reference.get("type") != "agent_reference":
            raise ApiError(400, "Invalid 'agent_reference': expected {\"type\": "
                           "\"agent_reference\", \"name\", \"version\"?}.",
                           param="agent_reference", code="invalid_value")
        versions = self.agents.get(str(reference.get("name")), [])
        wanted = reference.get("version")
        found = [v for v in versions if wanted in (None, v["version"])]
        if not found:
            raise ApiError(404, f"Agent '{reference.get('name')}' (version {wanted or 'latest'})"
                           " not found.", param="agent_reference", code="not_found")
        return found[-1]

    def list_agent_versions(self, name: str, query: Any) -> dict[str, Any]:
        """``GET /agents/{name}/versions``: 404 for an unknown agent; ``order``, ``after``,
        ``limit`` as every list."""
        if name not in self.agents:
            raise ApiError(404, f"Agent '{name}' not found.", param="agent_name",
                           code="not_found")
        versions = list(self.agents[name])
        if query.get("order", "desc") == "desc":
            versions.reverse()
        after = query.get("after")
        if after:
            ids = [v["id"] for v in versions]
            versions = versions[ids.index(after) + 1:] if after in ids else []
        limit = max(1, min(int(query.get("limit", "20") or 20), 100))
        return _page(copy.deepcopy(versions[:limit]), len(versions) > limit)

    def agent_version(self, name: str, version: str) -> dict[str, Any]:
        return copy.deepcopy(self._agent({"type": "agent_reference", "name": name,
                                          "version": version}))


def _page(items: list[dict[str, Any]], more: bool) -> dict[str, Any]:
    return {"object": "list", "data": items, "first_id": items[0]["id"] if items else None,
            "last_id": items[-1]["id"] if items else None, "has_more": more}
