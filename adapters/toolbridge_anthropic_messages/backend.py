"""The serve driver's seam for the Messages API: `MessagesConnection`, `MessagesBackend`.

There is no hosted conversation: the backend holds the message list, and its checkpoint is
that list, persisted with every answer before it is sent (the service cannot tell what is
pending), so a restarted driver continues the conversation and resends the same answer. A
resend whose first copy reached the server runs the model again (tokens, no tool: every call
is keyed by conversation, the message's position and id, and answered from the store).
"""

from __future__ import annotations

import copy
import os
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, UsageError
from toolbridge.plugin import Backend, Connection, PendingCalls, Step

from . import AnthropicMessagesDialect, translate
from .options import MessagesServeOptions
from .tools import render_tools
from .wire import DIALECT

__all__ = ["ConversationDialect", "MessagesBackend", "MessagesConnection", "history_block"]

_PAUSES = 8
"""Most ``pause_turn`` continuations of one request (a server tool's long turn)."""


class ConversationDialect(AnthropicMessagesDialect):
    """``anthropic-messages`` reading the payloads of one conversation: its calls are keyed
    in the store by ``(conversation, position, tool_use_id)``."""

    def __init__(self, conversation: str) -> None:
        self.conversation = conversation

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload, self.conversation)


def history_block(block: Mapping[str, Any]) -> dict[str, Any]:
    """A content block as it can be sent back: a ``tool_use`` whose streamed input did not
    parse keeps its text as ``{"INVALID_JSON": text}`` (Anthropic's advice: the API takes only
    objects); every other block as it came."""
    if block.get("type") == "tool_use" and not isinstance(block.get("input"), Mapping):
        return {**block, "input": {"INVALID_JSON": str(block.get("input"))}}
    return dict(block)


class MessagesConnection(Connection):
    """One client and the rendered tools, shared by a worker's conversations."""

    def __init__(self, options: MessagesServeOptions, tools: Sequence[ToolDefinition]) -> None:
        from .client import AsyncMessagesClient

        self.options = options
        self.definitions = render_tools(tools).definitions
        key = options.api_key.get_secret_value() if options.api_key else None
        token = options.auth_token.get_secret_value() if options.auth_token else None
        if key is None and token is None and not options.base_url and not (
                os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise UsageError(f"{DIALECT}: the real service needs ANTHROPIC_API_KEY (not set); "
                             "export it, or pass api_key=... or base_url=... (an emulator)")
        self.client = AsyncMessagesClient(
            api_key=key, auth_token=token, base_url=options.base_url, retry=options.retry,
            timeout=options.timeout, betas=options.betas, **options.network())

    def backend(self, conversation: str | None = None) -> Backend:
        name = conversation or self.options.conversation or f"msgs-{uuid.uuid4().hex[:16]}"
        return MessagesBackend(self, name)

    async def aclose(self) -> None:
        await self.client.aclose()


class MessagesBackend(Backend):
    """One conversation: the message list, sent whole with every request."""

    lists_pending = False

    def __init__(self, connection: MessagesConnection, conversation: str) -> None:
        self.connection = connection
        self.conversation = conversation
        self.dialect = ConversationDialect(conversation)
        self.provider = "anthropic"
        self.messages: list[dict[str, Any]] = []

    async def _create(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        options = self.connection.options
        body: dict[str, Any] = {"model": options.model, "max_tokens": options.max_tokens,
                                "messages": messages}
        if options.system:
            body["system"] = options.system
        if self.connection.definitions:
            body["tools"] = self.connection.definitions
        client = self.connection.client
        return await (client.stream_message(**body) if options.stream
                      else client.create(**body))

    async def _complete(self, messages: list[dict[str, Any]]) -> Step:
        for attempt in range(1, _PAUSES + 1):
            message = await self._create(messages)
            reply, _, _ = translate.assistant_message_of(message)
            content = reply.get("content")
            blocks = content if isinstance(content, list) else []
            sent = {"role": "assistant", "content": [history_block(b) for b in blocks]}
            if message.get("stop_reason") != "pause_turn" or attempt == _PAUSES:
                break
            messages = [*messages, sent]  # a long server-tool turn: send it back to go on
        self.messages = [*messages, sent]  # kept only once the model answered
        reason = message.get("stop_reason")
        if any(isinstance(b, Mapping) and b.get("type") == "tool_use" for b in blocks):
            return Step("requires_action", payload={"messages": [
                *copy.deepcopy(messages), {"role": "assistant", "content": list(blocks)}]})
        text = "".join(str(b.get("text", "")) for b in blocks
                       if isinstance(b, Mapping) and b.get("type") == "text")
        if reason in ("end_turn", "stop_sequence", None):
            return Step("completed", reply=text, detail=message)
        return Step("incomplete" if reason in ("max_tokens", "pause_turn") else "failed",
                    error=f"the message ended with stop_reason {reason!r}", detail=message)

    async def send(self, message: str) -> Step | None:
        return await self._complete([*self.messages, {"role": "user", "content": message}])

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        # The list ends with the assistant message that asked: it changes only once a message
        # came back, so a resend after a failure (or a restart) appends the same answer.
        return await self._complete([*self.messages, *body["messages"]])

    async def state(self) -> Step | None:
        return None

    async def sent(self, message: str) -> bool | None:
        """Never: the service keeps nothing, and the message list grows only when a message
        comes back, so sending again is the same request."""
        return False

    async def resume(self) -> Step | None:
        """A conversation restored with its last assistant message still waiting."""
        last = self.messages[-1] if self.messages else {}
        if last.get("role") == "assistant" and any(
                isinstance(b, Mapping) and b.get("type") == "tool_use"
                for b in last.get("content") or ()):
            return Step("requires_action", payload={"messages": copy.deepcopy(self.messages)},
                        fresh=True)
        return None

    def checkpoint(self) -> dict[str, Any]:
        return {"conversation": self.conversation, "messages": self.messages}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        messages = checkpoint.get("messages")
        if isinstance(messages, list):
            self.messages = [dict(m) for m in messages]
