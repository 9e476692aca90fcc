"""The serve driver's seam for the echo service: `EchoConnection` and `EchoBackend`.

The service keeps each conversation and its pending calls (``GET`` lists them), so a lost
submission is seen and answered again; answers go with an ``Idempotency-Key`` made from the
body, so the same answers sent twice are taken once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from toolbridge import ToolDefinition, UsageError, get_dialect
from toolbridge.http import RetryPolicy, asend_with_retries, raise_for_backend
from toolbridge.plugin import Backend, DiscoveringConnection, Step

from .options import DIALECT, EchoServeOptions

__all__ = ["EchoBackend", "EchoConnection"]


class EchoConnection(DiscoveringConnection):
    """One HTTP client and the rendered tools, shared by a worker's conversations; the
    service lists the conversations that wait (`discover`)."""

    def __init__(self, options: EchoServeOptions, tools: Sequence[ToolDefinition]) -> None:
        import httpx

        if not options.base_url:
            raise UsageError(f"{DIALECT} options: base_url is required (the echo service has "
                             "no hosted endpoint; give an emulator's)")
        self.options = options
        self.dialect = get_dialect(DIALECT)
        self.definitions = self.dialect.render_tools(tools).definitions
        headers = {"authorization": f"Bearer {options.api_key.get()}"} if options.api_key else {}
        self.client = httpx.AsyncClient(base_url=options.base_url.rstrip("/") + "/v1",
                                        headers=headers, timeout=options.timeout)
        self.retry = options.retry or RetryPolicy()

    async def request(self, method: str, path: str, body: Any = None,
                      headers: Mapping[str, str] | None = None, *, once: bool = False) -> Any:
        """The decoded JSON answer; `toolbridge.BackendError` for an error answer. ``once``:
        a request that must not run twice (a user turn) is not retried after it may have
        arrived (the driver then asks `EchoBackend.sent`)."""
        request = self.client.build_request(method, path, json=body, headers=headers)
        what = f"{DIALECT} {method} {path}"
        policy = RetryPolicy(max_attempts=1) if once else self.retry
        response = await asend_with_retries(self.client, request, policy, what=what,
                                            idempotent=not once)
        raise_for_backend(response, what)
        return response.json()

    def backend(self, conversation: str | None = None) -> Backend:
        return EchoBackend(self, conversation or self.options.conversation or "")

    async def discover(self) -> AsyncIterator[str]:
        """Conversations waiting for answers, each once, polled every half second."""
        import asyncio

        seen: set[str] = set()
        while True:
            listed = await self.request("GET", "/conversations?status=waiting")
            for state in listed.get("data", []):
                if state["status"] == "waiting" and state["conversation"] not in seen:
                    seen.add(state["conversation"])
                    yield state["conversation"]
            await asyncio.sleep(0.5)

    async def aclose(self) -> None:
        await self.client.aclose()


def _step(state: Mapping[str, Any], *, fresh: bool = False) -> Step:
    status = state.get("status")
    if status == "waiting":
        return Step("requires_action", payload=dict(state), fresh=fresh)
    if status == "failed":
        return Step("failed", error=str(state.get("error")), detail=dict(state))
    return Step("completed", reply=str(state.get("reply") or ""), detail=dict(state))


class EchoBackend(Backend):
    """One conversation of the echo service."""

    def __init__(self, connection: EchoConnection, conversation: str) -> None:
        self.connection = connection
        self.dialect = connection.dialect
        self.conversation = conversation

    def _path(self, tail: str = "") -> str:
        return f"/conversations/{self.conversation}{tail}"

    async def send(self, message: str) -> Step | None:
        if not self.conversation:
            created = await self.connection.request(
                "POST", "/conversations", {"tools": self.connection.definitions})
            self.conversation = str(created["conversation"])
        return _step(await self.connection.request("POST", self._path("/messages"),
                                                   {"text": message}, once=True))

    async def sent(self, message: str) -> bool | None:
        if not self.conversation:
            return False
        state = await self.connection.request("GET", self._path())
        users = [m["text"] for m in state.get("messages", []) if m.get("role") == "user"]
        return bool(users) and users[-1] == message

    async def submit(self, step: Step, body: Mapping[str, Any]) -> Step | None:
        text = json.dumps([self.conversation, body], sort_keys=True)
        key = hashlib.sha256(text.encode()).hexdigest()[:32]
        return _step(await self.connection.request(
            "POST", self._path("/answers"), dict(body), {"idempotency-key": key}))

    async def state(self) -> Step | None:
        if not self.conversation:
            return None
        return _step(await self.connection.request("GET", self._path()), fresh=True)

    def checkpoint(self) -> dict[str, Any]:
        return {"conversation": self.conversation}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        self.conversation = str(checkpoint.get("conversation") or self.conversation)
