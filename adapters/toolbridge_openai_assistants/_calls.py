"""The Assistants API described once: every call and flow of both clients (they send them)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from toolbridge import BackendError, UsageError
from toolbridge.http import Call, Emit, Flow, Pause

from ._base import _SSE, _Base
from .wire import ACTIVE_STATUSES

__all__ = ["AssistantsCalls"]

RunIds = tuple[str, str] | None
Streamed = tuple[Call[Any], _SSE]


class AssistantsCalls(_Base):
    """The calls of `AssistantsClient` and `AsyncAssistantsClient`; `_Base` is their endpoint."""

    def _reader(self, what: str, run_ids: RunIds = None) -> Callable[[httpx.Response], Any]:
        return lambda response: self._decode(response, what, run_ids)

    def _call(self, method: str, path: str, what: str, body: Any = None,
              query: Mapping[str, Any] | None = None, run_ids: RunIds = None, *,
              idempotent: bool = True) -> Call[Any]:
        return Call(method, path, self._reader(what, run_ids), body=body, params=query,
                    idempotent=idempotent)

    def _stream(self, path: str, body: Mapping[str, Any], what: str,
                run_ids: RunIds = None, *, idempotent: bool = True) -> Streamed:
        """A stream call and its reader (`toolbridge.http.Sender.events` takes both)."""
        return Call("POST", path, self._reader(what, run_ids), body={**body, "stream": True},
                    stream=True, idempotent=idempotent,
                    what=f"openai-assistants: {what}"), _SSE(what)

    def _create_assistant(self, model: str, tools: Sequence[Mapping[str, Any]],
                          instructions: str | None, name: str | None,
                          fields: Mapping[str, Any]) -> Call[dict[str, Any]]:
        body = self._assistant_body(model, tools, instructions, name, fields)
        return self._call("POST", "/assistants", "create assistant", body)

    def _create_thread(self, fields: Mapping[str, Any]) -> Call[dict[str, Any]]:
        # Not idempotent (a thread, its messages): a retried create would make a second one.
        return self._call("POST", "/threads", "create thread", dict(fields), idempotent=False)

    def _create_message(self, thread_id: str, content: str, role: str
                        ) -> Call[dict[str, Any]]:
        return self._call("POST", f"/threads/{thread_id}/messages", "create message",
                          {"role": role, "content": content}, idempotent=False)

    def _list_messages(self, thread_id: str, run_id: str | None, order: str, limit: int,
                       after: str | None) -> Call[list[dict[str, Any]]]:
        read = self._reader("list messages")
        return Call("GET", f"/threads/{thread_id}/messages",
                    lambda response: list(read(response).get("data", [])),
                    params={"run_id": run_id, "order": order, "limit": limit, "after": after})

    def _retrieve_assistant(self, assistant_id: str) -> Call[dict[str, Any]]:
        return self._call("GET", f"/assistants/{assistant_id}", "retrieve assistant")

    def _retrieve_thread(self, thread_id: str) -> Call[dict[str, Any]]:
        return self._call("GET", f"/threads/{thread_id}", "retrieve thread")

    def _list_deployments(self) -> Call[dict[str, str]]:
        if not self.foundry:
            raise UsageError("openai-assistants: only a Foundry project lists its deployments "
                             "(project_endpoint=...)")
        read = self._reader("list deployments")
        return Call("GET", "/deployments", lambda response: {
            str(d["name"]): str(d.get("modelName") or "") for d in read(response).get("value")
            or [] if d.get("type", "ModelDeployment") == "ModelDeployment"})

    def _iterate(self, path: str, what: str) -> Flow[None]:
        """Every object of a list endpoint, oldest first, 100 per page."""
        after = None
        while True:
            page = yield self._call("GET", path, what,
                                    query={"order": "asc", "limit": 100, "after": after})
            data = list(page.get("data") or [])
            for item in data:
                yield Emit(item)
            if not page.get("has_more") or not data:
                return
            after = data[-1]["id"]

    def _create_run(self, thread_id: str, assistant_id: str, fields: Mapping[str, Any]
                    ) -> Call[dict[str, Any]]:
        return self._call("POST", f"/threads/{thread_id}/runs", "create run",
                          {"assistant_id": assistant_id, **fields}, idempotent=False)

    def _stream_run(self, thread_id: str, assistant_id: str, fields: Mapping[str, Any]
                    ) -> Streamed:
        return self._stream(f"/threads/{thread_id}/runs",
                            {"assistant_id": assistant_id, **fields}, "create run (stream)",
                            idempotent=False)

    def _retrieve_run(self, thread_id: str, run_id: str) -> Call[dict[str, Any]]:
        return self._call("GET", self._run_path(thread_id, run_id), "retrieve run")

    def _poll_run(self, thread_id: str, run_id: str, timeout: float | None
                  ) -> Flow[dict[str, Any]]:
        started = time.monotonic()
        while True:
            run: dict[str, Any] = yield self._retrieve_run(thread_id, run_id)
            if run.get("status") not in ACTIVE_STATUSES:
                return run
            if timeout is not None and time.monotonic() - started > timeout:
                raise BackendError(f"openai-assistants: run {run_id} still "
                                   f"{run.get('status')} after {timeout:g} s", body=run)
            yield Pause(self.poll_delay())

    def _submit_tool_outputs(self, thread_id: str, run_id: str, body: Mapping[str, Any]
                             ) -> Call[dict[str, Any]]:
        return self._call("POST", self._run_path(thread_id, run_id, "/submit_tool_outputs"),
                          "submit tool outputs", dict(body), run_ids=(thread_id, run_id))

    def _stream_submit_tool_outputs(self, thread_id: str, run_id: str,
                                    body: Mapping[str, Any]) -> Streamed:
        return self._stream(self._run_path(thread_id, run_id, "/submit_tool_outputs"),
                            dict(body), "submit tool outputs (stream)", (thread_id, run_id))

    def _cancel_run(self, thread_id: str, run_id: str) -> Call[dict[str, Any]]:
        return self._call("POST", self._run_path(thread_id, run_id, "/cancel"), "cancel run")
