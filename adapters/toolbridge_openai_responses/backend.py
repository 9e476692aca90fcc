"""The serve driver's seam for Responses: `ResponsesServeOptions`, `ResponsesConnection`,
`ResponsesBackend` (one conversation). No loop here: `toolbridge.serve` drives it.

A conversation lives in a Responses **Conversation** by default: after a failure `state`
lists its items, so calls still pending are seen (and answered from the store) and an answer
that landed is not sent twice. With ``use_conversation=False`` turns continue by
``previous_response_id``; the service cannot list what is pending then, so the driver
persists each answer before sending it and resends that same answer after a failure (a
resend whose first copy landed starts a second response: the model runs again, no call does).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, UsageError, get_dialect
from toolbridge.plugin import Backend, Connection, Step, StepStatus

from .options import ResponsesServeOptions
from .wire import ACTIVE_STATUSES, DIALECT

__all__ = ["ResponsesBackend", "ResponsesConnection"]


class ResponsesConnection(Connection):
    """One client and the rendered tools, shared by a worker's conversations."""

    def __init__(self, options: ResponsesServeOptions, tools: Sequence[ToolDefinition]) -> None:
        from .client import AsyncResponsesClient

        self.options = options
        self.definitions = get_dialect(DIALECT).render_tools(tools).definitions
        self.fields = options.request_fields(self.definitions)
        credential: Any = options.credential
        self._owned_credential = None
        if credential is None and options.azure_credential:
            from azure.identity.aio import DefaultAzureCredential

            credential = self._owned_credential = DefaultAzureCredential()
        agent: Any = None
        if options.agent:
            agent = (options.agent, options.agent_version) if options.agent_version else (
                options.agent)
        key = options.api_key.get_secret_value() if options.api_key else None
        if key is None and not options.base_url and not os.environ.get("OPENAI_API_KEY") and (
                not getattr(options, "azure_endpoint", None)) and not getattr(
                    options, "project_endpoint", None):
            raise UsageError(f"{DIALECT}: the real service needs OPENAI_API_KEY (not set); "
                             "export it, or pass api_key=... or base_url=... (an emulator)")
        endpoint = {"project_endpoint": options.project_endpoint} if options.project_endpoint \
            else {"azure_endpoint": options.azure_endpoint} if options.azure_endpoint \
            else {"base_url": options.base_url}
        self.client = AsyncResponsesClient(api_key=key, credential=credential, agent=agent,
                                           poll_interval=options.poll_interval,
                                           retry=options.retry, timeout=options.timeout,
                                           **endpoint, **options.network())
        self._agent_lock = asyncio.Lock()
        self._agent_saved = False

    def backend(self, conversation: str | None = None) -> Backend:
        return ResponsesBackend(self, conversation or self.options.conversation,
                                self.options.response_id)

    async def save_agent(self) -> None:
        """``create_agent``: save the tools as a new agent version, once per connection.

        Conversations that start together wait for one save; a save that failed is tried
        again by the next conversation (only a saved version counts as saved)."""
        async with self._agent_lock:
            if self._agent_saved:
                return
            definition = self.options.agent_definition(self.definitions)
            version = await self.client.create_agent_version(str(self.options.agent),
                                                             definition=definition)
            self.client.config.agent = {"type": "agent_reference", "name": version["name"],
                                        "version": version["version"]}
            self._agent_saved = True

    async def aclose(self) -> None:
        await self.client.aclose()
        if self._owned_credential is not None:
            await self._owned_credential.close()


class ResponsesBackend(Backend):
    """One conversation: in a Responses conversation, or a ``previous_response_id`` chain."""

    def __init__(self, connection: ResponsesConnection, conversation_id: str | None,
                 response_id: str | None) -> None:
        self.dialect = get_dialect(DIALECT)
        self.connection = connection
        self.client = connection.client
        options = connection.options
        self.conversation_id = conversation_id
        self.last_response_id = response_id
        self.lists_pending = bool(conversation_id) or (
            options.use_conversation and response_id is None)
        self.conversation = conversation_id or response_id or ""
        self.provider = ("azure.ai.openai" if options.azure_endpoint or options.project_endpoint
                         else "openai")

    # ------------------------------------------------------------------ requests
    def _fields(self) -> dict[str, Any]:
        options = self.connection.options
        fields = dict(self.connection.fields)  # the per-request configuration
        if options.background:
            fields["background"] = True
        return fields

    async def _respond(self, **fields: Any) -> Step:
        options = self.connection.options
        if options.stream:
            response = await self.client.stream_response(**fields)
        else:
            response = await self.client.create(**fields)
        if response.get("status") in ACTIVE_STATUSES:
            response = await self.client.poll(response["id"])
        return self._step(response)

    def _step(self, response: Mapping[str, Any], *, fresh: bool = False) -> Step:
        self.last_response_id = str(response.get("id") or self.last_response_id or "")
        if not self.conversation:
            self.conversation = self.last_response_id
        status = response.get("status")
        output = [i for i in response.get("output") or [] if isinstance(i, Mapping)]
        if status == "completed":
            pending = self.dialect.read_calls(response)
            if pending.calls or pending.unhandled:
                # A response echoes the request's tools (ours; with a real toolbox the largest
                # part of it): the step, held while the handlers run, keeps the rest.
                return Step("requires_action", fresh=fresh, payload={
                    k: v for k, v in response.items() if k != "tools"})
            return Step("completed", reply=_text(output), detail=dict(response), fresh=fresh)
        error = response.get("error") or response.get("incomplete_details") or {}
        reason = (error.get("message") or error.get("reason") if isinstance(error, Mapping)
                  else None) or f"the response is {status}"
        final: StepStatus = ("incomplete" if status == "incomplete" else "cancelled"
                             if status == "cancelled" else "failed")
        return Step(final, error=str(reason), detail=dict(response), fresh=fresh)

    # ------------------------------------------------------------------ Backend
    async def open(self) -> None:
        """Continued by a conversation: an empty one (a second one, after a lost reply,
        holds nothing)."""
        if self.lists_pending and not self.conversation_id:
            created = await self.client.create_conversation()
            self.conversation_id = self.conversation = str(created["id"])

    async def send(self, message: str) -> Step | None:
        options = self.connection.options
        if options.agent and options.create_agent:
            await self.connection.save_agent()
        await self.open()
        fields = self._fields()
        if self.conversation_id:
            fields["conversation"] = self.conversation_id
        elif self.last_response_id:
            fields["previous_response_id"] = self.last_response_id
        return await self._respond(input=message, **fields)

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        return await self._respond(**self._fields(), **body)

    async def resume(self) -> Step | None:
        if self.conversation_id:
            return await self.state()
        if self.last_response_id:
            return self._step(await self.client.poll(self.last_response_id), fresh=True)
        raise UsageError(f"{DIALECT}: serving needs conversation=... or response_id=...")

    async def sent(self, message: str) -> bool | None:
        """Whether the conversation's latest user message is ``message`` (its items, newest
        first); then `resume` reads the turn's step. A ``previous_response_id`` chain lists
        nothing: ``None``."""
        if not self.conversation_id:
            return False if self.lists_pending else None
        page = await self.client.list_items(self.conversation_id, limit=20, order="desc")
        for item in page.get("data", []):
            if item.get("type") == "message" and item.get("role") == "user":
                content = item.get("content")
                return (content if isinstance(content, str) else "".join(
                    str(p.get("text", "")) for p in content or []
                    if isinstance(p, Mapping))) == message
        return False

    async def state(self, *, wait: float = 30.0) -> Step | None:
        """The conversation's items: calls without an output are pending; a reply ends it.

        While the last item is an input the model has not answered yet (a response still
        running), the items are read again, for up to ``wait`` seconds.
        """
        if not self.conversation_id:
            return None
        deadline = time.monotonic() + wait
        while True:
            items = await self.client.all_items(self.conversation_id)
            answered = {i.get("call_id") for i in items if i.get("type") == (
                "function_call_output")}
            pending = [i for i in items if i.get("type") == "function_call"
                       and i.get("call_id") not in answered] + _asked(items)
            if pending:
                return Step("requires_action", fresh=True, payload={
                    "id": self.last_response_id or self.conversation_id, "object": "response",
                    "status": "completed", "output": pending,
                    "conversation": {"id": self.conversation_id}})
            last = items[-1] if items else None
            if last is not None and last.get("type") == "message" and last.get(
                    "role") == "assistant":
                return Step("completed", reply=_text([last]), fresh=True)
            if time.monotonic() > deadline:
                return None
            await asyncio.sleep(self.connection.options.poll_interval)

    def retryable(self, error: BaseException) -> bool:
        """Also the 400s that a request which already landed gets when it is sent again
        (its first reply lost): an answer ("No tool call found for function call output"),
        a user message while that one's calls wait ("No tool output found for function
        call"). The conversation's items then tell what is pending (`state`, `sent`)."""
        if super().retryable(error):
            return True
        return bool(self.conversation_id) and getattr(error, "status", None) == 400 and (
            "No tool call found for function call output" in str(error)
            or "No tool output found for function call" in str(error))

    def checkpoint(self) -> dict[str, Any]:
        return {"conversation_id": self.conversation_id,
                "last_response_id": self.last_response_id}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        self.conversation_id = checkpoint.get("conversation_id") or self.conversation_id
        self.last_response_id = checkpoint.get("last_response_id") or self.last_response_id
        self.conversation = self.conversation_id or self.last_response_id or self.conversation


def _text(output: Sequence[Mapping[str, Any]]) -> str:
    """The text of the assistant messages of ``output``."""
    return "".join(part.get("text", "") for item in output if item.get("type") == "message"
                   for part in item.get("content") or [] if isinstance(part, Mapping)
                   and part.get("type") == "output_text")


def _asked(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ``mcp_approval_request`` items since the last reply that no
    ``mcp_approval_response`` answers (an earlier one left unanswered is moot: the model
    went on without the tool)."""
    replies = [n for n, i in enumerate(items) if i.get("type") == "message"
               and i.get("role") == "assistant"]
    recent = items[replies[-1] + 1:] if replies else items
    decided = {i.get("approval_request_id") for i in recent
               if i.get("type") == "mcp_approval_response"}
    return [i for i in recent if i.get("type") == "mcp_approval_request"
            and i.get("id") not in decided]
