"""HTTP clients for CES: ``runSession`` and tool resources (sync and async, httpx).

Retries: tool-resource calls retry transport errors and the policy's statuses. ``runSession``
is not idempotent (a retried turn whose reply was lost runs the user turn twice), so it is
retried only on 429/503 and on errors raised before the request was sent
(``send_with_retries(..., idempotent=False)``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from toolbridge import BackendError, Toolbox, ToolDefinition, UsageError
from toolbridge.http import (
    RetryPolicy,
    Secret,
    asend_with_retries,
    raise_for_backend,
    send_with_retries,
)

from . import translate, wire
from ._retry import run_session_policy

__all__ = ["AsyncCesClient", "CesApiError", "CesClient", "SyncReport", "TokenProvider"]

log = logging.getLogger("toolbridge.google_ces")

TokenProvider = Callable[[], "str | Secret"]
"""Returns a fresh OAuth access token; called before every request (cache inside it)."""

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
DEFAULT_RETRY = RetryPolicy()
"""Four attempts on transport errors, 408/409/429/5xx, honouring Retry-After (``runSession``:
only 429/503 and errors before the request was sent)."""
DEFAULT_TIMEOUT = 220.0
"""Seconds; the SDK's default for ``run_session``."""


class CesApiError(BackendError):
    """CES answered an error; ``status_name`` is Google's status (``FAILED_PRECONDITION`` ...)."""

    def __init__(self, message: str, *, status: int | None, body: Any,
                 status_name: str = "") -> None:
        super().__init__(message, status=status, body=body)
        self.status_name = status_name


def _google_default_token() -> TokenProvider:
    try:
        import google.auth
        import google.auth.transport.requests
    except ImportError:
        raise UsageError("no token given and google-auth is not installed; pass token=... "
                         "(a string or a callable returning one) or install "
                         "'toolbridge[google-auth]' for Google's default credentials") from None
    credentials, _ = google.auth.default(scopes=list(SCOPES))

    def provide() -> str:
        if not credentials.valid:
            refresh: Callable[[Any], None] = credentials.refresh
            refresh(google.auth.transport.requests.Request())
        return str(credentials.token)

    return provide


def _token_provider(token: str | Secret | TokenProvider | None) -> TokenProvider:
    if token is None:
        return _google_default_token()
    if isinstance(token, (str, Secret)):
        secret = token if isinstance(token, Secret) else Secret(token)
        return lambda: secret
    if callable(token):
        return token
    raise UsageError("token must be a string, a toolbridge.http.Secret or a callable returning one")


@dataclass
class SyncReport:
    """What `sync_tools` did, by tool resource name."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    tool_names: dict[str, str] = field(default_factory=dict)
    """Tool resource name -> function name (give it to `GoogleCesDialect`)."""
    losses: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """Schema conversion losses per tool name."""


class _Base:
    """Request building shared by the sync and async clients."""

    def __init__(self, *, base_url: str | None, token: str | Secret | TokenProvider | None,
                 universe_domain: str, retry: RetryPolicy, timeout: float) -> None:
        self.base_url = (base_url or wire.endpoint(universe_domain=universe_domain)).rstrip("/")
        self._token = _token_provider(token)
        self.retry = retry
        self.run_session_retry = run_session_policy(retry)
        """``retry`` limited to 429/503: what ``runSession`` uses."""
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.base_url}>"

    def _headers(self, token: str | Secret) -> dict[str, str]:
        value = token.get() if isinstance(token, Secret) else token
        return {"authorization": f"Bearer {value}", "content-type": "application/json"}

    def _request(self, token: str | Secret, method: str, path: str, body: Any = None,
                 params: Mapping[str, str] | None = None,
                 headers: Mapping[str, str] | None = None) -> httpx.Request:
        content = None if body is None else json.dumps(body).encode()
        return httpx.Request(method, f"{self.base_url}/{wire.API_VERSION}/{path}",
                             params=params, content=content,
                             headers={**self._headers(token), **(headers or {})})

    @staticmethod
    def _run_session_parts(session: str, body: Mapping[str, Any]) -> tuple[str, dict[str, Any],
                                                                             dict[str, str]]:
        try:
            wire.parse_session(session)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        config = dict(body.get("config") or {})
        if config.get("session", session) != session:
            raise UsageError(f"body config.session {config['session']!r} differs from "
                             f"session {session!r}")
        config["session"] = session
        full = {**body, "config": config}
        routing = {"x-goog-request-params": "config.session=" + quote(session, safe="/")}
        return f"{session}:runSession", full, routing

    @staticmethod
    def _decode(response: httpx.Response, what: str) -> Any:
        if not response.is_success:
            try:
                raise_for_backend(response, what)
            except BackendError as exc:
                body = exc.body
                name = ""
                if isinstance(body, dict) and isinstance(body.get("error"), dict):
                    name = str(body["error"].get("status", ""))
                raise CesApiError(str(exc), status=exc.status, body=body,
                                  status_name=name) from None
        if not response.content:
            return {}
        return response.json()

    @staticmethod
    def _plan(toolbox: Toolbox | Sequence[ToolDefinition], app: str,
              existing: Sequence[Mapping[str, Any]], policy: Any
              ) -> tuple[list[tuple[str, str, dict[str, Any]]], SyncReport]:
        """(action, tool id or name, resource) steps making ``app`` hold the toolbox's tools."""
        if not wire.APP_RE.match(app):
            raise UsageError(f"app {app!r} must look like projects/P/locations/L/apps/A")
        have = {str(t.get("name")): wire.normalize_tool_enums(t) for t in existing}
        report = SyncReport()
        steps: list[tuple[str, str, dict[str, Any]]] = []
        for tool in toolbox:
            resource, lost = translate.tool_resource(tool, policy=policy)
            tool_id = translate.tool_id_of(tool)
            name = wire.tool_name(app, tool_id)
            report.tool_names[name] = tool.name
            if lost:
                report.losses[tool.name] = lost
            current = have.get(name)
            if current is None:
                steps.append(("create", tool_id, resource))
                report.created.append(name)
            elif any(current.get(k) != v for k, v in resource.items()):
                steps.append(("update", name, resource))
                report.updated.append(name)
            else:
                report.unchanged.append(name)
        return steps, report


class CesClient(_Base):
    """Blocking CES client. ``token``: a string, `toolbridge.http.Secret` or callable; ``None``
    uses Google's default credentials (extra ``google-auth``)."""

    def __init__(self, *, base_url: str | None = None,
                 token: str | Secret | TokenProvider | None = None,
                 universe_domain: str = wire.DEFAULT_UNIVERSE,
                 retry: RetryPolicy = DEFAULT_RETRY, timeout: float = DEFAULT_TIMEOUT,
                 http: httpx.Client | None = None) -> None:
        super().__init__(base_url=base_url, token=token, universe_domain=universe_domain,
                         retry=retry, timeout=timeout)
        self._http = http or httpx.Client(timeout=timeout)
        self._owns_http = http is None

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> CesClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, method: str, path: str, what: str, body: Any = None,
              params: Mapping[str, str] | None = None,
              headers: Mapping[str, str] | None = None, idempotent: bool = True) -> Any:
        request = self._request(self._token(), method, path, body, params, headers)
        policy = self.retry if idempotent else self.run_session_retry
        return self._decode(send_with_retries(self._http, request, policy,
                                              idempotent=idempotent), what)

    def run_session(self, session: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/{session}:runSession`` with ``body`` (a ``RunSessionRequest``); retried
        only on 429/503 and errors before the request was sent (it is not idempotent)."""
        path, full, routing = self._run_session_parts(session, body)
        result: dict[str, Any] = self._send("POST", path, "runSession", full, headers=routing,
                                            idempotent=False)
        return result

    def send_text(self, session: str, text: str) -> dict[str, Any]:
        """One user turn."""
        return self.run_session(session, {"inputs": [{"text": text}]})

    def create_tool(self, app: str, tool: Mapping[str, Any], tool_id: str) -> dict[str, Any]:
        """``POST /v1/{app}/tools?toolId=...``; returns the created ``Tool``."""
        result: dict[str, Any] = self._send("POST", f"{app}/tools", "create tool", dict(tool),
                                            params={"toolId": tool_id})
        return result

    def get_tool(self, name: str) -> dict[str, Any]:
        result: dict[str, Any] = self._send("GET", name, "get tool")
        return result

    def list_tools(self, app: str) -> list[dict[str, Any]]:
        """Every tool of ``app`` (all pages)."""
        tools: list[dict[str, Any]] = []
        params: dict[str, str] = {}
        while True:
            page = self._send("GET", f"{app}/tools", "list tools", params=params)
            tools += page.get("tools", [])
            if not page.get("nextPageToken"):
                return tools
            params = {"pageToken": page["nextPageToken"]}

    def update_tool(self, name: str, tool: Mapping[str, Any],
                    update_mask: Sequence[str] | None = None) -> dict[str, Any]:
        """``PATCH /v1/{tool.name}``; ``update_mask`` defaults to the fields given."""
        mask = ",".join(update_mask or list(tool))
        result: dict[str, Any] = self._send("PATCH", name, "update tool", dict(tool),
                                            params={"updateMask": mask})
        return result

    def delete_tool(self, name: str) -> None:
        self._send("DELETE", name, "delete tool")

    def sync_tools(self, toolbox: Toolbox | Sequence[ToolDefinition], app: str, *,
                   policy: Any = "describe") -> SyncReport:
        """Create or update one client-function tool in ``app`` per toolbox tool."""
        steps, report = self._plan(toolbox, app, self.list_tools(app), policy)
        for action, key, resource in steps:
            if action == "create":
                self.create_tool(app, resource, key)
            else:
                self.update_tool(key, resource)
        return report


class AsyncCesClient(_Base):
    """Async form of `CesClient` (same methods, awaited)."""

    def __init__(self, *, base_url: str | None = None,
                 token: str | Secret | TokenProvider | None = None,
                 universe_domain: str = wire.DEFAULT_UNIVERSE,
                 retry: RetryPolicy = DEFAULT_RETRY, timeout: float = DEFAULT_TIMEOUT,
                 http: httpx.AsyncClient | None = None) -> None:
        super().__init__(base_url=base_url, token=token, universe_domain=universe_domain,
                         retry=retry, timeout=timeout)
        self._http = http or httpx.AsyncClient(timeout=timeout)
        self._owns_http = http is None

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncCesClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, method: str, path: str, what: str, body: Any = None,
                    params: Mapping[str, str] | None = None,
                    headers: Mapping[str, str] | None = None, idempotent: bool = True) -> Any:
        token = await asyncio.to_thread(self._token)  # providers may block (refresh)
        request = self._request(token, method, path, body, params, headers)
        policy = self.retry if idempotent else self.run_session_retry
        response = await asend_with_retries(self._http, request, policy, idempotent=idempotent)
        return self._decode(response, what)

    async def run_session(self, session: str, body: Mapping[str, Any]) -> dict[str, Any]:
        path, full, routing = self._run_session_parts(session, body)
        result: dict[str, Any] = await self._send("POST", path, "runSession", full,
                                                  headers=routing, idempotent=False)
        return result

    async def send_text(self, session: str, text: str) -> dict[str, Any]:
        return await self.run_session(session, {"inputs": [{"text": text}]})

    async def create_tool(self, app: str, tool: Mapping[str, Any],
                          tool_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._send("POST", f"{app}/tools", "create tool",
                                                  dict(tool), params={"toolId": tool_id})
        return result

    async def get_tool(self, name: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._send("GET", name, "get tool")
        return result

    async def list_tools(self, app: str) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        params: dict[str, str] = {}
        while True:
            page = await self._send("GET", f"{app}/tools", "list tools", params=params)
            tools += page.get("tools", [])
            if not page.get("nextPageToken"):
                return tools
            params = {"pageToken": page["nextPageToken"]}

    async def update_tool(self, name: str, tool: Mapping[str, Any],
                          update_mask: Sequence[str] | None = None) -> dict[str, Any]:
        mask = ",".join(update_mask or list(tool))
        result: dict[str, Any] = await self._send("PATCH", name, "update tool", dict(tool),
                                                  params={"updateMask": mask})
        return result

    async def delete_tool(self, name: str) -> None:
        await self._send("DELETE", name, "delete tool")

    async def sync_tools(self, toolbox: Toolbox | Sequence[ToolDefinition], app: str, *,
                         policy: Any = "describe") -> SyncReport:
        steps, report = self._plan(toolbox, app, await self.list_tools(app), policy)
        for action, key, resource in steps:
            if action == "create":
                await self.create_tool(app, resource, key)
            else:
                await self.update_tool(key, resource)
        return report
