"""The serve driver's backend for Assistants runs (OpenAI and Azure OpenAI).

Each user message is a new run on the conversation's thread; a run in ``requires_action``
is a step, answered in one ``submit_tool_outputs`` body. Runs are followed by streaming
(the create and submit requests' own SSE), or by polling. A submission refused because an
earlier attempt already landed is recognised by re-reading the run, and the run's state
read again is what recovery starts from (the run lists its pending calls).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from toolbridge import BackendError, ToolChoice, ToolDefinition, UsageError
from toolbridge.plugin import Backend, Connection, Dialect, Step

from .client import (
    AsyncAssistantsClient,
    RunExpiredError,
    StreamEvent,
    StreamInterruptedError,
    expired_error,
)
from .options import CLIENT_FIELDS, AssistantsOptions
from .wire import ACTIVE_STATUSES, DIALECT

__all__ = ["AssistantsBackend", "AssistantsConnection", "api_root", "credentials_from_env"]

log = logging.getLogger("toolbridge.openai_assistants")

_ACTIVE_RUN = re.compile(r"already has an active run (\S+?)\.?$")
_KEPT = ("id", "object", "thread_id", "assistant_id", "status", "required_action",
         "expires_at", "last_error", "incomplete_details")
"""The fields of a run a step keeps (not its tools and instructions)."""


_AZURE = ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION")


def api_root(base_url: str) -> str:
    """The OpenAI-form API root of a service or emulator root URL (``/v1`` added once)."""
    root = base_url.rstrip("/")
    return root if root.endswith("/v1") else root + "/v1"


def credentials_from_env() -> dict[str, Any]:
    """Client options for the real service: Azure when ``$AZURE_OPENAI_ENDPOINT`` is set,
    else OpenAI with ``$OPENAI_API_KEY``; `UsageError` names what is missing."""
    env = os.environ
    if env.get("AZURE_OPENAI_ENDPOINT"):
        missing = [name for name in _AZURE if not env.get(name)]
        if missing:
            raise UsageError(f"{DIALECT}: Azure OpenAI needs {', '.join(missing)} (not set)")
        return {"azure_endpoint": env["AZURE_OPENAI_ENDPOINT"],
                "api_key": env["AZURE_OPENAI_API_KEY"], "api_version": env["OPENAI_API_VERSION"]}
    if env.get("OPENAI_API_KEY"):
        return {"api_key": env["OPENAI_API_KEY"]}
    raise UsageError(f"{DIALECT}: the real service needs OPENAI_API_KEY (OpenAI), or "
                     f"{', '.join(_AZURE)} (Azure OpenAI); none is set")


def _client(options: AssistantsOptions) -> AsyncAssistantsClient:
    given = {k: getattr(options, k) for k in CLIENT_FIELDS if getattr(options, k) is not None}
    if options.base_url:
        given["base_url"] = api_root(options.base_url)
    elif options.azure_endpoint is None and options.project_endpoint is None and (
            options.api_key is None):
        given.update(credentials_from_env())
    return AsyncAssistantsClient(**given, **options.network())


def _tool_choice(choice: ToolChoice | str | None) -> ToolChoice | None:
    if choice is None or isinstance(choice, ToolChoice):
        return choice
    if choice in ("auto", "none", "required"):
        return ToolChoice(mode=choice)
    return ToolChoice.named(choice)


class AssistantsConnection(Connection):
    """One client, and one assistant (created on first use) for new conversations."""

    def __init__(self, dialect: Dialect, options: AssistantsOptions,
                 tools: Sequence[ToolDefinition]) -> None:
        self.dialect = dialect
        self.options = options
        self.tools = list(tools)
        self._owns = options.client is None
        self.client: AsyncAssistantsClient = options.client or _client(options)
        self._assistant = options.assistant_id
        self._creating = asyncio.Lock()
        run_fields = dict(options.run_options or {})
        choice = _tool_choice(options.tool_choice)
        if choice is not None:
            run_fields["tool_choice"] = dialect.render_tool_choice(choice)
        self.run_fields = run_fields

    async def assistant_id(self) -> str:
        """The assistant new runs use (created once, with the toolbox's tools)."""
        async with self._creating:
            if self._assistant is None:
                definitions = self.dialect.render_tools(self.tools).definitions
                created = await self.client.create_assistant(
                    model=self.options.model, tools=definitions,
                    instructions=self.options.instructions)
                self._assistant = str(created["id"])
            return self._assistant

    def backend(self, conversation: str | None = None) -> Backend:
        thread = conversation or self.options.thread_id
        run = self.options.run_id if thread == self.options.thread_id else None
        return AssistantsBackend(self, thread, run)

    async def aclose(self) -> None:
        if self._owns:
            await self.client.aclose()


class AssistantsBackend(Backend):
    """One thread; each user message starts a run on it."""

    def __init__(self, connection: AssistantsConnection, thread_id: str | None,
                 run_id: str | None) -> None:
        self.connection = connection
        self.client = connection.client
        self.dialect = connection.dialect
        self.conversation = thread_id or ""
        self.run_id = run_id
        self.streaming = connection.options.stream
        self.provider = ("azure.ai.openai" if connection.options.azure_endpoint
                         or connection.options.project_endpoint else "openai")
        self._unstarted = False
        """`sent` found the message with no run after it: `resume` starts that run."""

    # ------------------------------------------------------------------ the seam
    async def open(self) -> None:
        """An empty thread (a second one, after a lost reply, holds nothing)."""
        if not self.conversation:
            self.conversation = str((await self.client.create_thread())["id"])

    async def send(self, message: str) -> Step | None:
        await self.open()
        await self.client.create_message(self.conversation, message)
        return await self._start_run(await self.connection.assistant_id())

    async def resume(self) -> Step | None:
        if self._unstarted:
            self._unstarted = False
            return await self._start_run(await self.connection.assistant_id())
        if not self.conversation:
            given = ("assistant_id is given, but serving also needs the thread: thread_id=..."
                     if self.connection.options.assistant_id is not None else
                     "serving needs thread_id=... and run_id=... (or thread_id=... and "
                     "assistant_id=... to create the run)")
            raise UsageError(f"{DIALECT}: {given}")
        if self.run_id is None:
            if self.connection.options.assistant_id is None:
                raise UsageError(f"{DIALECT}: give run_id=... to serve an existing run, or "
                                 "assistant_id=... to create one")
            return await self._start_run(self.connection.options.assistant_id)
        return await self.state()

    async def sent(self, message: str) -> bool | None:
        """Whether the thread's latest user message is ``message`` (its messages, newest
        first, newer than the reply of the last run this backend knows); then `resume`
        serves the run that answered it, or starts one (a run still going is served)."""
        if not self.conversation:
            return False
        answered_by: str | None = None
        for found in await self.client.list_messages(self.conversation, limit=20):
            run_id = found.get("run_id")
            if found.get("role") == "assistant" and run_id:
                if run_id == self.run_id and answered_by is None:
                    return False  # the previous turn's reply is the newest message
                answered_by = str(run_id)
            elif found.get("role") == "user":
                if _message_text(found) != message:
                    return False
                if answered_by is not None:
                    self.run_id = answered_by
                self._unstarted = answered_by is None
                return True
        return False

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        run = dict(step.payload or {})
        thread_id, run_id = str(run["thread_id"]), str(run["id"])
        try:
            if self.streaming:
                found = await self._follow(self.client.stream_submit_tool_outputs(
                    thread_id, run_id, body), run_id)
            else:
                found = await self.client.submit_tool_outputs(thread_id, run_id, body)
        except RunExpiredError as exc:
            return Step("expired", error=str(exc), detail=exc)
        except BackendError as exc:
            if exc.status != 400:
                raise
            # A retried submission whose first attempt landed, its answer lost on the way
            # back: the run has moved on. If it still waits on these calls, the 400 is real.
            fresh = await self.client.retrieve_run(thread_id, run_id)
            if fresh.get("status") == "requires_action" and fresh.get(
                    "required_action") == run.get("required_action"):
                raise
            found = fresh
        return await self._step(found)

    async def state(self) -> Step | None:
        if self.run_id is None:
            return None
        run = await self.client.retrieve_run(self.conversation, self.run_id)
        step = await self._step(run)
        return Step(step.status, step.payload, step.reply, step.error, step.detail, True,
                    step.deadline, step.margin)

    def checkpoint(self) -> dict[str, Any]:
        return {"thread_id": self.conversation, "run_id": self.run_id}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        self.conversation = str(checkpoint.get("thread_id") or self.conversation)
        self.run_id = checkpoint.get("run_id") or self.run_id

    # ------------------------------------------------------------------ runs
    async def _start_run(self, assistant_id: str) -> Step:
        fields = self.connection.run_fields
        try:
            if self.streaming:
                run = await self._follow(self.client.stream_run(
                    self.conversation, assistant_id, **fields), None)
            else:
                run = await self.client.create_run(self.conversation, assistant_id, **fields)
        except BackendError as exc:
            # A retried create whose first attempt made the run: serve that run.
            match = _ACTIVE_RUN.search(str(exc)) if exc.status == 400 else None
            if match is None:
                raise
            log.warning("%s: %s; serving that run", DIALECT, exc)
            run = await self.client.retrieve_run(self.conversation, match.group(1))
        return await self._step(run)

    async def _follow(self, events: AsyncIterator[StreamEvent], run_id: str | None
                      ) -> dict[str, Any]:
        """The last run state a stream reported; after a broken stream, the run read again."""
        last: dict[str, Any] | None = None
        try:
            async for name, data in events:
                if (name.startswith("thread.run.") and not name.startswith("thread.run.step.")
                        and isinstance(data, dict)):
                    last = data
                    self.run_id = str(data.get("id", self.run_id))
        except StreamInterruptedError as exc:
            known = last["id"] if last is not None else run_id
            if known is None:
                raise
            log.warning("%s; reading run %s instead", exc, known)
            return await self.client.retrieve_run(self.conversation, str(known))
        if last is None:
            if run_id is None:
                raise BackendError(f"{DIALECT}: the run stream carried no run event")
            return await self.client.retrieve_run(self.conversation, run_id)
        return last

    async def _step(self, run: Mapping[str, Any]) -> Step:
        """The step a run is at (polled while it works)."""
        self.run_id = str(run.get("id", self.run_id))
        if run.get("status") in ACTIVE_STATUSES:
            run = await self.client.poll_run(self.conversation, str(run["id"]))
        kept = {k: run.get(k) for k in _KEPT if k in run}
        status = run.get("status")
        if status == "requires_action":
            expires = run.get("expires_at")
            return Step("requires_action", payload=kept,
                        deadline=float(expires) if isinstance(expires, (int, float)) else None,
                        margin=self.client.expiry_margin)
        if status == "completed":
            return Step("completed", reply=await self._reply(str(run["id"])), detail=kept)
        if status == "expired":
            return Step("expired", error=str(expired_error(run)), detail=expired_error(run))
        reason = run.get("last_error") or run.get("incomplete_details")
        if status in ("failed", "cancelled", "incomplete"):
            return Step(status, error=f"run {run.get('id')} ended {status}: {reason}",
                        detail=kept)
        return Step("failed", error=f"run {run.get('id')} is {status!r}", detail=kept)

    async def _reply(self, run_id: str) -> str:
        messages = await self.client.list_messages(self.conversation, run_id=run_id)
        for message in messages:
            if message.get("role") == "assistant":
                return _message_text(message)
        return ""


def _message_text(message: Mapping[str, Any]) -> str:
    """The text of a thread message (its text parts, joined)."""
    return "".join(p.get("text", {}).get("value", "") for p in message.get("content", ())
                   if isinstance(p, Mapping) and p.get("type") == "text")
