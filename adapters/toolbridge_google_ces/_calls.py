"""CES described once: the endpoint and the calls of `CesClient` and `AsyncCesClient`.

Retries: tool-resource calls retry transport errors and the policy's statuses. ``runSession``
is not idempotent (a retried turn whose reply was lost runs the user turn twice), so it is
retried only on 429/503 and on errors raised before the request was sent
(``idempotent=False``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from toolbridge import BackendError, Toolbox, ToolDefinition, UsageError
from toolbridge.http import Call, Flow, RetryPolicy, Secret, raise_for_backend

from . import translate, wire
from ._retry import run_session_policy

__all__ = ["DEFAULT_RETRY", "DEFAULT_TIMEOUT", "CesApiError", "CesCalls", "CesEndpoint",
           "SyncReport", "TokenProvider"]

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


def _reader(what: str) -> Callable[[httpx.Response], Any]:
    """Reads an answer: its JSON (``{}`` when empty), or `CesApiError`."""

    def read(response: httpx.Response) -> Any:
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

    return read


def _unless_exists(read: Callable[[httpx.Response], Any]
                   ) -> Callable[[httpx.Response], dict[str, Any] | None]:
    """``read``, but ``None`` for a 409 ALREADY_EXISTS answer (the caller compares)."""

    def reader(response: httpx.Response) -> dict[str, Any] | None:
        if response.status_code == 409:
            return None
        answer: dict[str, Any] = read(response)
        return answer

    return reader


class CesEndpoint:
    """Where a CES client's calls go and how they are signed (a `toolbridge.http.Endpoint`)."""

    __slots__ = ("client",)

    def __init__(self, client: CesCalls) -> None:
        self.client = client

    @property
    def retry(self) -> RetryPolicy:
        return self.client.retry

    def bearer(self) -> str | Secret:
        return self.client._token()

    async def abearer(self) -> str | Secret:
        return await asyncio.to_thread(self.client._token)  # providers may block (refresh)

    def request_for(self, call: Call[Any], token: str | Secret,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        value = token.get() if isinstance(token, Secret) else token
        headers = {"authorization": f"Bearer {value}", "content-type": "application/json",
                   **(call.headers or {})}
        content = None if call.body is None else json.dumps(call.body).encode()
        return httpx.Request(call.method,
                             f"{self.client.base_url}/{wire.API_VERSION}/{call.path}",
                             params=call.params, content=content, headers=headers)


class CesCalls:
    """Every call of both clients (they send them to their `CesEndpoint`)."""

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

    # ------------------------------------------------------------------ calls
    def _run_session(self, session: str, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        try:
            wire.parse_session(session)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        config = dict(body.get("config") or {})
        if config.get("session", session) != session:
            raise UsageError(f"body config.session {config['session']!r} differs from "
                             f"session {session!r}")
        config["session"] = session
        routing = {"x-goog-request-params": "config.session=" + quote(session, safe="/")}
        return Call("POST", f"{session}:runSession", _reader("runSession"),
                    body={**body, "config": config}, headers=routing, idempotent=False,
                    retry=self.run_session_retry)

    @staticmethod
    def _create_tool(app: str, tool: Mapping[str, Any], tool_id: str
                     ) -> Call[dict[str, Any]]:
        return Call("POST", f"{app}/tools", _reader("create tool"), body=dict(tool),
                    params={"toolId": tool_id})

    def _create_or_match(self, app: str, tool: Mapping[str, Any], tool_id: str
                         ) -> Flow[dict[str, Any]]:
        """Create the tool (the created ``Tool``); a 409 "already exists" (e.g. a retried
        create whose first reply was lost) is done when the stored tool is identical to
        ``tool`` (read and compared: the stored one), a `CesApiError` naming both when not."""
        policy = dataclasses.replace(self.retry,
                                     retry_statuses=self.retry.retry_statuses - {409})
        create = self._create_tool(app, tool, tool_id)
        taken: dict[str, Any] | None = yield Call(
            create.method, create.path, _unless_exists(create.read), body=create.body,
            params=create.params, retry=policy)
        if taken is not None:
            return taken
        name = wire.tool_name(app, tool_id)
        found: dict[str, Any] = yield self._get_tool(name)
        stored = wire.normalize_tool_enums(found)
        differs = sorted(k for k, v in tool.items() if stored.get(k) != v)
        if differs:
            raise CesApiError(
                f"create tool: {name} already exists with a different definition (fields "
                f"{', '.join(differs)} differ): stored "
                f"{json.dumps({k: stored.get(k) for k in differs}, sort_keys=True)}, ours "
                f"{json.dumps({k: tool[k] for k in differs}, sort_keys=True)}",
                status=409, status_name="ALREADY_EXISTS",
                body={"name": name, "stored": stored, "ours": dict(tool)})
        log.info("create tool: %s already exists, identical to ours (a create retried after "
                 "its reply was lost)", name)
        return found

    @staticmethod
    def _get_tool(name: str) -> Call[dict[str, Any]]:
        return Call("GET", name, _reader("get tool"))

    @staticmethod
    def _list_tools(app: str) -> Flow[list[dict[str, Any]]]:
        tools: list[dict[str, Any]] = []
        params: dict[str, str] = {}
        while True:
            page = yield Call("GET", f"{app}/tools", _reader("list tools"), params=params)
            tools += page.get("tools", [])
            if not page.get("nextPageToken"):
                return tools
            params = {"pageToken": page["nextPageToken"]}

    @staticmethod
    def _update_tool(name: str, tool: Mapping[str, Any],
                     update_mask: Sequence[str] | None) -> Call[dict[str, Any]]:
        mask = ",".join(update_mask or list(tool))
        return Call("PATCH", name, _reader("update tool"), body=dict(tool),
                    params={"updateMask": mask})

    @staticmethod
    def _delete_tool(name: str) -> Call[None]:
        read = _reader("delete tool")

        def deleted(response: httpx.Response) -> None:
            read(response)

        return Call("DELETE", name, deleted)

    def _sync_tools(self, toolbox: Toolbox | Sequence[ToolDefinition], app: str,
                    policy: Any) -> Flow[SyncReport]:
        existing = yield from self._list_tools(app)
        steps, report = self._plan(toolbox, app, existing, policy)
        for action, key, resource in steps:
            if action == "create":
                yield from self._create_or_match(app, resource, key)
            else:
                yield self._update_tool(key, resource, None)
        return report

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
        tools = list(toolbox)
        rendered = translate.render_tools(tools, policy=policy)  # errors name each tool
        for tool, resource in zip(tools, rendered.definitions, strict=True):
            tool_id = translate.tool_id_of(tool)
            name = wire.tool_name(app, tool_id)
            report.tool_names[name] = tool.name
            if tool.name in rendered.losses:
                report.losses[tool.name] = rendered.losses[tool.name]
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
