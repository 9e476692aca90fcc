"""The serve driver's seam for Interactions: `InteractionsConnection`, `InteractionsBackend`
(one chain of interactions). No loop here: `toolbridge.serve` drives it.

The service holds the conversation: each create names the interaction it continues
(``previous_interaction_id``), and the backend's cursor is the chain's first interaction id
(the conversation's key) and its last one. Nothing lists a chain's pending calls, so
`lists_pending` is false: the driver persists each answer (with the checkpoint) before it goes
and sends it again after a failure; a resend whose first copy landed branches a second
interaction from the same one (the model runs again; no function does, every call is answered
from the store). `resume` reads the last interaction back with a ``GET``. A user message whose
reply was lost cannot be found (`sent` answers ``None``): the chain has no listing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, UsageError
from toolbridge.plugin import Backend, Connection, PendingCalls, Step, StepStatus

from . import GeminiInteractionsDialect, translate
from .options import InteractionsServeOptions
from .wire import ACTIVE_STATUSES, DIALECT

__all__ = ["ChainDialect", "InteractionsBackend", "InteractionsConnection"]

_POLL_SECONDS = 1.0


class ChainDialect(GeminiInteractionsDialect):
    """``gemini-interactions`` reading the interactions of one chain: its calls are keyed in
    the store by ``(chain, "", call id)`` (call ids are unique; later interactions of the
    chain do not name its first)."""

    def __init__(self, chain: str = "") -> None:
        self.chain = chain

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload, self.chain or None)


class InteractionsConnection(Connection):
    """One client and the rendered tools, shared by a worker's conversations."""

    def __init__(self, options: InteractionsServeOptions,
                 tools: Sequence[ToolDefinition]) -> None:
        from .client import AsyncInteractionsClient

        self.options = options
        self.definitions = translate.render_tools(tools).definitions
        GeminiInteractionsDialect.limits.check_tools(self.definitions, DIALECT)
        self.fields = options.request_fields(self.definitions)
        key = options.api_key.get_secret_value() if options.api_key else None
        self.client = AsyncInteractionsClient(
            base_url=options.base_url, api_key=key, key_in_query=options.key_in_query,
            retry=options.retry, timeout=options.timeout, **options.network())

    def backend(self, conversation: str | None = None) -> Backend:
        return InteractionsBackend(self, conversation or "", self.options.interaction_id)

    async def aclose(self) -> None:
        await self.client.aclose()


class InteractionsBackend(Backend):
    """One conversation: a chain of interactions the service holds."""

    lists_pending = False

    def __init__(self, connection: InteractionsConnection, chain: str,
                 interaction_id: str | None) -> None:
        self.connection = connection
        self.client = connection.client
        self.last_interaction_id = interaction_id
        self.conversation = chain or interaction_id or ""
        self.chain_dialect = ChainDialect(self.conversation)
        self.dialect = self.chain_dialect
        self.provider = "gcp.gemini"

    async def _create(self, **body: Any) -> Step:
        fields = {**self.connection.fields, **body}
        if self.connection.options.stream:
            interaction = await self.client.stream_interaction(**fields)
        else:
            interaction = await self.client.create(**fields)
        return await self._settled(interaction)

    async def _settled(self, interaction: Mapping[str, Any], *, fresh: bool = False) -> Step:
        """The step of ``interaction``, read again while it still runs (background)."""
        while interaction.get("status") in ACTIVE_STATUSES and interaction.get("id"):
            await asyncio.sleep(_POLL_SECONDS)
            interaction = await self.client.get(str(interaction["id"]))
        return self._step(interaction, fresh=fresh)

    def _step(self, interaction: Mapping[str, Any], *, fresh: bool = False) -> Step:
        interaction_id = interaction.get("id")
        if isinstance(interaction_id, str) and interaction_id:
            self.last_interaction_id = interaction_id
            if not self.conversation:
                self.conversation = self.chain_dialect.chain = interaction_id
        status = interaction.get("status")
        if status == "requires_action":
            return Step("requires_action", payload=dict(interaction), fresh=fresh)
        if status == "completed":
            return Step("completed", reply=translate.text_of(interaction),
                        detail=dict(interaction), fresh=fresh)
        errors = interaction.get("errors") or []
        reason = next((str(e.get("message")) for e in errors
                       if isinstance(e, Mapping) and e.get("message")),
                      f"the interaction is {status}")
        final: StepStatus = ("cancelled" if status == "cancelled" else "incomplete"
                             if status in ("incomplete", "budget_exceeded") else "failed")
        return Step(final, error=reason, detail=dict(interaction), fresh=fresh)

    # ------------------------------------------------------------------ Backend
    async def send(self, message: str) -> Step | None:
        body: dict[str, Any] = {"input": message}
        if self.last_interaction_id:
            body["previous_interaction_id"] = self.last_interaction_id
        return await self._create(**body)

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        return await self._create(**body)

    async def resume(self) -> Step | None:
        """The last interaction, read back (`fresh`)."""
        if not self.last_interaction_id:
            raise UsageError(f"{DIALECT}: serving an existing chain needs "
                             "interaction_id=... (its last interaction)")
        interaction = await self.client.get(self.last_interaction_id)
        return await self._settled(interaction, fresh=True)

    async def sent(self, message: str) -> bool | None:
        """Cannot tell: nothing lists a chain's interactions, and a lost create's id was in
        its reply."""
        return None

    async def state(self) -> Step | None:
        return None

    def checkpoint(self) -> dict[str, Any]:
        return {"conversation": self.conversation,
                "last_interaction_id": self.last_interaction_id}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        self.last_interaction_id = (checkpoint.get("last_interaction_id")
                                    or self.last_interaction_id)
        self.conversation = str(checkpoint.get("conversation") or self.conversation
                                or self.last_interaction_id or "")
        self.chain_dialect.chain = self.conversation
