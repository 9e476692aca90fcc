"""The serve driver's seam for ``generateContent``: `GeminiConnection`, `GeminiBackend`.

There is no hosted conversation: the backend holds the ``contents`` list, and its checkpoint
is that list, persisted with every answer before it is sent, so a restarted driver continues
the conversation and resends the same answer. The model's contents are kept exactly as they
came, their ``thoughtSignature`` included (Gemini refuses a current turn without it). A
resend whose first copy reached the API runs the model again (tokens, no tool: every call is
keyed by conversation, the content's position and id, and answered from the store).
"""

from __future__ import annotations

import copy
import os
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, UsageError
from toolbridge.plugin import Backend, Connection, PendingCalls, Step

from . import GeminiDialect, translate
from .declarations import render_tools, tools_field
from .options import GeminiServeOptions
from .wire import DIALECT

__all__ = ["ConversationDialect", "GeminiBackend", "GeminiConnection"]

_INCOMPLETE = frozenset({"MAX_TOKENS"})


class ConversationDialect(GeminiDialect):
    """``gemini`` reading the payloads of one conversation: its calls are keyed in the store
    by ``(conversation, position, id)``."""

    def __init__(self, conversation: str) -> None:
        self.conversation = conversation

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload, self.conversation)


class GeminiConnection(Connection):
    """One client and the rendered declarations, shared by a worker's conversations."""

    def __init__(self, options: GeminiServeOptions, tools: Sequence[ToolDefinition]) -> None:
        from .client import AsyncGeminiClient

        self.options = options
        self.tools = tools_field(render_tools(tools).definitions)
        key = options.api_key.get_secret_value() if options.api_key else None
        if key is None and not options.base_url and not (
                os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")):
            raise UsageError(f"{DIALECT}: the real service needs GEMINI_API_KEY (not set); "
                             "export it, or pass api_key=... or base_url=... (an emulator)")
        self.client = AsyncGeminiClient(
            base_url=options.base_url, api_key=key, api_version=options.api_version,
            retry=options.retry, timeout=options.timeout, **options.network())

    def backend(self, conversation: str | None = None) -> Backend:
        name = conversation or self.options.conversation or f"gemini-{uuid.uuid4().hex[:16]}"
        return GeminiBackend(self, name)

    async def aclose(self) -> None:
        await self.client.aclose()


class GeminiBackend(Backend):
    """One conversation: the ``contents`` list, sent whole with every request."""

    lists_pending = False

    def __init__(self, connection: GeminiConnection, conversation: str) -> None:
        self.connection = connection
        self.conversation = conversation
        self.dialect = ConversationDialect(conversation)
        self.provider = "gcp.gemini"
        self.contents: list[dict[str, Any]] = []

    async def _generate(self, contents: list[dict[str, Any]]) -> Step:
        options = self.connection.options
        body: dict[str, Any] = {"contents": contents}
        if self.connection.tools:
            body["tools"] = self.connection.tools
        if options.instructions:
            body["systemInstruction"] = {"parts": [{"text": options.instructions}]}
        client = self.connection.client
        response = await (client.stream_response(options.model, **body) if options.stream
                          else client.generate(options.model, **body))
        content, _, _ = translate.model_content_of(response)
        candidate = response["candidates"][0]
        reason = candidate.get("finishReason")
        if not content.get("parts"):
            return Step("failed", error=f"the response has no content (finishReason "
                        f"{reason!r})", detail=response)
        self.contents = [*contents, copy.deepcopy(dict(content))]  # kept once the model answered
        if any("functionCall" in part for part in content["parts"]):
            return Step("requires_action", payload={"contents": copy.deepcopy(self.contents)})
        text = "".join(p.get("text", "") for p in content["parts"] if not p.get("thought"))
        if reason in ("STOP", None):
            return Step("completed", reply=text, detail=response)
        return Step("incomplete" if reason in _INCOMPLETE else "failed",
                    error=f"the response ended with finishReason {reason!r}", detail=response)

    async def send(self, message: str) -> Step | None:
        return await self._generate([*self.contents,
                                     {"role": "user", "parts": [{"text": message}]}])

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        # The list ends with the model content that asked: it changes only once a response
        # came back, so a resend after a failure (or a restart) appends the same.
        return await self._generate([*self.contents, *body["contents"]])

    async def state(self) -> Step | None:
        return None

    async def sent(self, message: str) -> bool | None:
        """Never: the API keeps nothing, and the contents grow only when a response comes
        back, so sending again is the same request."""
        return False

    async def resume(self) -> Step | None:
        """A conversation restored with its last model content still waiting."""
        last = self.contents[-1] if self.contents else None
        if last is not None and last.get("role") == "model" and any(
                "functionCall" in p for p in last.get("parts", ())):
            return Step("requires_action", payload={"contents": copy.deepcopy(self.contents)},
                        fresh=True)
        return None

    def checkpoint(self) -> dict[str, Any]:
        return {"conversation": self.conversation, "contents": self.contents}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        contents = checkpoint.get("contents")
        if isinstance(contents, list):
            self.contents = [dict(c) for c in contents]
