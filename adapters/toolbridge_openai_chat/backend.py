"""The serve driver's seam for Chat Completions: `ChatConnection`, `ChatBackend`.

There is no hosted conversation: the backend holds the message list, and its checkpoint is
that list, persisted with every answer before it is sent (the service cannot tell what is
pending), so a restarted driver continues the conversation and resends the same answer. A
resend whose first copy reached the server runs the model again (tokens, no tool: every
call is keyed by conversation, the message's position and id, and answered from the store).
"""

from __future__ import annotations

import copy
import os
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, UsageError
from toolbridge.plugin import Backend, Connection, PendingCalls, Step

from . import OpenAIChatDialect, translate
from .options import ChatServeOptions
from .wire import DIALECT

__all__ = ["ChatBackend", "ChatConnection", "ConversationDialect"]


class ConversationDialect(OpenAIChatDialect):
    """``openai-chat`` reading the payloads of one conversation: its calls are keyed in the
    store by ``(conversation, position, tool_call_id)``."""

    def __init__(self, conversation: str) -> None:
        self.conversation = conversation

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload, self.conversation)


class ChatConnection(Connection):
    """One client and the rendered tools, shared by a worker's conversations."""

    def __init__(self, options: ChatServeOptions, tools: Sequence[ToolDefinition]) -> None:
        from .client import AsyncChatClient

        self.options = options
        self.definitions = translate.render_tools(tools).definitions
        key = options.api_key.get_secret_value() if options.api_key else None
        if key is None and not options.base_url and not os.environ.get("OPENAI_API_KEY") and (
                not getattr(options, "azure_endpoint", None)) and not getattr(
                    options, "project_endpoint", None):
            raise UsageError(f"{DIALECT}: the real service needs OPENAI_API_KEY (not set); "
                             "export it, or pass api_key=... or base_url=... (an emulator)")
        azure: dict[str, Any] = {
            "azure_endpoint": options.azure_endpoint, "deployment": options.deployment,
            "api_version": options.api_version} if options.azure_endpoint else {
                "base_url": options.base_url}
        self.client = AsyncChatClient(api_key=key, retry=options.retry,
                                      timeout=options.timeout, **azure, **options.network())

    def backend(self, conversation: str | None = None) -> Backend:
        name = conversation or self.options.conversation or f"chat-{uuid.uuid4().hex[:16]}"
        return ChatBackend(self, name)

    async def aclose(self) -> None:
        await self.client.aclose()


class ChatBackend(Backend):
    """One conversation: the message list, sent whole with every request."""

    lists_pending = False

    def __init__(self, connection: ChatConnection, conversation: str) -> None:
        self.connection = connection
        self.conversation = conversation
        self.dialect = ConversationDialect(conversation)
        options = connection.options
        self.provider = "azure.ai.openai" if options.azure_endpoint else "openai"
        self.messages: list[dict[str, Any]] = (
            [{"role": "system", "content": options.instructions}] if options.instructions
            else [])

    async def _complete(self, messages: list[dict[str, Any]]) -> Step:
        options = self.connection.options
        body: dict[str, Any] = {"messages": messages}
        if options.model or not options.deployment:
            body["model"] = options.model or options.deployment
        if self.connection.definitions:
            body["tools"] = self.connection.definitions
        client = self.connection.client
        completion = await (client.stream_completion(**body) if options.stream
                            else client.create(**body))
        message, _, _ = translate.assistant_message_of(completion)
        self.messages = [*messages, dict(message)]  # kept only once the model answered
        choice = completion["choices"][0]
        reason = choice.get("finish_reason")
        if message.get("tool_calls"):
            return Step("requires_action", payload={"messages": copy.deepcopy(self.messages)})
        if reason in ("stop", None):
            return Step("completed", reply=str(message.get("content") or ""),
                        detail=completion)
        return Step("incomplete" if reason == "length" else "failed",
                    error=f"the completion ended with finish_reason {reason!r}",
                    detail=completion)

    async def send(self, message: str) -> Step | None:
        return await self._complete([*self.messages, {"role": "user", "content": message}])

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        # The list ends with the assistant message that asked: it changes only once a
        # completion came back, so a resend after a failure (or a restart) appends the same.
        return await self._complete([*self.messages, *body["messages"]])

    async def state(self) -> Step | None:
        return None

    async def sent(self, message: str) -> bool | None:
        """Never: the service keeps nothing, and the message list grows only when a
        completion comes back, so sending again is the same request."""
        return False

    async def resume(self) -> Step | None:
        """A conversation restored with its last assistant message still waiting."""
        if self.messages and self.messages[-1].get("role") == "assistant" and self.messages[
                -1].get("tool_calls"):
            return Step("requires_action", payload={"messages": copy.deepcopy(self.messages)},
                        fresh=True)
        return None

    def checkpoint(self) -> dict[str, Any]:
        return {"conversation": self.conversation, "messages": self.messages}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        messages = checkpoint.get("messages")
        if isinstance(messages, list):
            self.messages = [dict(m) for m in messages]
