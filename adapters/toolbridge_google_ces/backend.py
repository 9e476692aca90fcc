"""The serve driver's backend for CES sessions: each ``runSession`` answer is the next step.

CES has no call that lists a session's pending calls, and ``runSession`` is not idempotent,
so this backend says so (``lists_pending`` false): the driver persists each answer before
sending it and, after a failure, resends that same answer. CES refuses a tool response it
already took ("already answered"): the first send landed and its reply, which carried the
next step, is lost for good; the backend raises `ReplyLostError` and the conversation ends
``failed`` naming it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolbridge import ToolDefinition, UsageError
from toolbridge.errors import ReplyLostError
from toolbridge.plugin import Backend, Connection, Step

from . import wire
from .client import DEFAULT_RETRY, AsyncCesClient, CesApiError, SyncReport, TokenProvider
from .options import APP_VARIABLES, DEMO_APP, CesOptions

if TYPE_CHECKING:
    from . import GoogleCesDialect

__all__ = ["CesBackend", "CesConnection"]

DIALECT = "google-ces"


def _default_credentials() -> TokenProvider | None:
    """Google's default credentials as a token provider, or None when there are none."""
    from .client import _google_default_token

    try:
        return _google_default_token()
    except UsageError:
        return None
    except Exception as exc:  # google.auth.exceptions.DefaultCredentialsError
        if type(exc).__name__ == "DefaultCredentialsError":
            return None
        raise


class CesConnection(Connection):
    """One client; the toolbox's client functions synced once per app."""

    def __init__(self, dialect: GoogleCesDialect, options: CesOptions,
                 tools: Sequence[ToolDefinition]) -> None:
        self.dialect = dialect
        self.options = options
        self.tools = list(tools)
        self.app = options.app or (wire.app_of(options.session) if options.session else None)
        if self.app is None:
            self.app = next((os.environ[v] for v in APP_VARIABLES if os.environ.get(v)), None)
        if self.app is None and options.base_url:
            self.app = DEMO_APP
        needs_credentials = (not options.base_url and options.token is None
                             and options.token_provider is None and options.client is None)
        if self.app is None:
            also = ("; it also needs credentials: token=... or Google's default credentials"
                    if needs_credentials else "")
            raise UsageError("google-ces needs GOOGLE_CES_APP (projects/P/locations/L/apps/A) "
                             f"in the environment, or app=/session=, to open a session{also}")
        if options.session is not None:
            try:
                wire.parse_session(options.session)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        self._owns = options.client is None
        self.client: AsyncCesClient = options.client or self._client(options,
                                                                      needs_credentials)
        self.report: SyncReport | None = None
        """What syncing the tools did (``None`` until a conversation started)."""
        self._syncing = asyncio.Lock()

    @staticmethod
    def _client(options: CesOptions, needs_credentials: bool) -> AsyncCesClient:
        token: Any = options.token_provider or options.token
        if needs_credentials:
            token = _default_credentials()
            if token is None:
                raise UsageError("google-ces needs credentials: token=... or Google's default "
                                 "credentials ($GOOGLE_APPLICATION_CREDENTIALS or `gcloud "
                                 "auth application-default login`)")
        return AsyncCesClient(base_url=options.base_url, token=token,
                              universe_domain=options.universe_domain,
                              retry=options.retry or DEFAULT_RETRY, timeout=options.timeout,
                              **options.network())

    async def tool_names(self) -> dict[str, str]:
        """Tool resource name -> function name, syncing the tools first (once)."""
        async with self._syncing:
            if self.report is None:
                assert self.app is not None
                if self.options.sync_tools:
                    self.report = await self.client.sync_tools(self.tools, self.app,
                                                               policy=self.options.policy)
                else:
                    self.report = SyncReport(tool_names={
                        wire.tool_name(self.app, t.name): t.name for t in self.tools})
            return dict(self.report.tool_names)

    def backend(self, conversation: str | None = None) -> Backend:
        session = conversation or self.options.session
        if session is None:
            session = f"{self.app}/sessions/{wire.new_session_id()}"
        return CesBackend(self, session)

    async def aclose(self) -> None:
        if self._owns:
            await self.client.aclose()


class CesBackend(Backend):
    """One CES session."""

    lists_pending = False
    provider = "gcp.vertex_ai"

    def __init__(self, connection: CesConnection, session: str) -> None:
        try:
            wire.parse_session(session)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.connection = connection
        self.client = connection.client
        self.conversation = session
        self.dialect: GoogleCesDialect = connection.dialect.bind(session)

    async def _bind(self) -> None:
        self.dialect = self.dialect.bind(self.conversation, await self.connection.tool_names())

    async def send(self, message: str) -> Step | None:
        await self._bind()
        return _step(await self.client.send_text(self.conversation, message))

    async def resume(self) -> Step | None:
        return None  # CES lists nothing: only a checkpoint can resume a turn

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        await self._bind()
        try:
            return _step(await self.client.run_session(self.conversation, body))
        except CesApiError as exc:
            if exc.status == 400 and "already answered" in str(exc):
                ids = [r.get("id") for i in body.get("inputs", [])
                       for r in i.get("toolResponses", {}).get("toolResponses", [])]
                raise ReplyLostError(
                    f"{DIALECT}: session {self.conversation}: the tool responses for "
                    f"{ids} were accepted by an earlier attempt whose reply (the next calls "
                    "or the turn's final text) was lost; CES cannot send it again",
                    status=400, body=exc.body) from None
            raise

    async def state(self) -> Step | None:
        return None

    def retryable(self, error: BaseException) -> bool:
        return not isinstance(error, ReplyLostError) and super().retryable(error)


def _step(response: Mapping[str, Any]) -> Step:
    """A ``runSession`` answer as a step: its calls, or the turn's end with its text."""
    outputs = response.get("outputs", [])
    outputs = outputs if isinstance(outputs, list) else []
    if any(isinstance(o, Mapping) and o.get("toolCalls", o.get("tool_calls"))
           for o in outputs):
        return Step("requires_action", payload=dict(response))
    texts = [str(o["text"]) for o in outputs if isinstance(o, Mapping)
             and isinstance(o.get("text"), str)]
    return Step("completed", reply="\n".join(texts), detail=dict(response))
