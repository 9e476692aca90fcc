"""Where a Responses client sends requests and how it signs them: OpenAI, Azure OpenAI's
``/openai/v1/``, or an Azure Foundry project endpoint (with an Entra token and an agent)."""

from __future__ import annotations

import inspect
import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from toolbridge import UsageError
from toolbridge.http import RetryPolicy, Secret

from .wire import DIALECT

if TYPE_CHECKING:
    import httpx

    from toolbridge.http import Call

__all__ = ["FOUNDRY_SCOPE", "OPENAI_BASE_URL", "ClientConfig", "agent_reference"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
FOUNDRY_SCOPE = "https://ai.azure.com/.default"
"""Entra scope of Foundry project endpoints (azure-ai-projects ``_configuration.py``)."""
COGNITIVE_SCOPE = "https://cognitiveservices.azure.com/.default"
"""Entra scope of Azure OpenAI resources."""
TokenProvider = Callable[[], "str | Awaitable[str]"]


def agent_reference(agent: str | tuple[str, str] | Mapping[str, Any]) -> dict[str, Any]:
    """``{"type": "agent_reference", "name", "version"?}`` from ``"name"``, ``("name",
    "version")`` or a mapping (the legacy ``agent`` key is never sent)."""
    if isinstance(agent, Mapping):
        reference = {"type": "agent_reference", **agent}
    elif isinstance(agent, tuple):
        reference = {"type": "agent_reference", "name": agent[0], "version": str(agent[1])}
    else:
        reference = {"type": "agent_reference", "name": agent}
    if not isinstance(reference.get("name"), str) or not reference["name"]:
        raise UsageError(f"{DIALECT}: an agent reference needs a name, got {agent!r}")
    return reference


class ClientConfig:
    """Endpoint, credentials and retry settings shared by both clients.

    Exactly one of: ``base_url`` (OpenAI or any compatible server; ``api_key`` defaults to
    ``$OPENAI_API_KEY``), ``azure_endpoint`` (Azure OpenAI, ``/openai/v1/``; ``api_key`` or
    a credential) or ``project_endpoint`` (Foundry; a ``credential`` or ``token_provider``).
    ``credential`` is an azure-core ``TokenCredential`` (sync or async), asked for ``scope``;
    ``token_provider`` a callable returning a bearer token. ``agent`` references a saved
    Foundry agent on every create.
    """

    def __init__(
        self, *, base_url: str | None = None, api_key: str | Secret | None = None,
        azure_endpoint: str | None = None, project_endpoint: str | None = None,
        credential: Any = None, token_provider: TokenProvider | None = None,
        scope: str | None = None, agent: str | tuple[str, str] | Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None, timeout: float = 60.0,
        poll_interval: float = 1.0, headers: Mapping[str, str] | None = None,
    ) -> None:
        given = [n for n, v in (("base_url", base_url), ("azure_endpoint", azure_endpoint),
                                ("project_endpoint", project_endpoint)) if v]
        if len(given) > 1:
            raise UsageError(f"{DIALECT}: give one endpoint, not {' and '.join(given)}")
        if credential is not None and token_provider is not None:
            raise UsageError(f"{DIALECT}: give credential=... or token_provider=..., not both")
        self.kind = "foundry" if project_endpoint else "azure" if azure_endpoint else "openai"
        root = (project_endpoint or azure_endpoint or "").rstrip("/")
        self.project_endpoint = root if project_endpoint else None
        self.base_url = (root + "/openai/v1" if root
                         else (base_url or os.environ.get("OPENAI_BASE_URL")
                               or OPENAI_BASE_URL).rstrip("/"))
        key = api_key if api_key is not None or self.kind != "openai" else os.environ.get(
            "OPENAI_API_KEY")
        self.api_key: Secret | None = Secret(key) if isinstance(key, str) else key
        self.credential = credential
        self.token_provider = token_provider
        self.scope = scope or (COGNITIVE_SCOPE if self.kind == "azure" else FOUNDRY_SCOPE)
        if self.kind == "foundry" and credential is None and token_provider is None and (
                self.api_key is None):
            raise UsageError(f"{DIALECT}: a Foundry project endpoint needs credential=... (an "
                             "azure-identity TokenCredential) or token_provider=...")
        if self.kind == "azure" and (self.api_key is None) == (
                credential is None and token_provider is None):
            raise UsageError(f"{DIALECT}: give Azure OpenAI exactly one credential: api_key=..."
                             ", credential=... or token_provider=...")
        self.agent = agent_reference(agent) if agent is not None else None
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.extra_headers = dict(headers or {})
        self._token: tuple[str, float] | None = None

    def __repr__(self) -> str:
        return (f"ClientConfig({self.kind}, base_url={self.base_url!r}, "
                f"api_key={self.api_key!r}, agent={self.agent!r})")

    # ------------------------------------------------------------------ auth
    def _cached(self) -> str | None:
        if self._token is not None and self._token[1] > time.time() + 60:
            return self._token[0]
        return None

    def _keep(self, token: Any) -> str:
        if isinstance(token, str):
            self._token = (token, time.time() + 300)
            return token
        value, expires = getattr(token, "token", None), getattr(token, "expires_on", 0)
        if not isinstance(value, str):
            raise UsageError(f"{DIALECT}: the credential returned no token")
        self._token = (value, float(expires or 0))
        return value

    def bearer(self) -> str | None:
        """The bearer token for the next request (sync credentials only)."""
        if self.credential is None and self.token_provider is None:
            return None
        cached = self._cached()
        if cached is not None:
            return cached
        token = (self.token_provider() if self.token_provider is not None
                 else self.credential.get_token(self.scope))
        if inspect.isawaitable(token):
            if inspect.iscoroutine(token):
                token.close()
            raise UsageError(f"{DIALECT}: the sync client needs a sync credential or token "
                             "provider; use AsyncResponsesClient with an async one")
        return self._keep(token)

    async def abearer(self) -> str | None:
        """The bearer token for the next request (sync or async credentials)."""
        if self.credential is None and self.token_provider is None:
            return None
        cached = self._cached()
        if cached is not None:
            return cached
        token = (self.token_provider() if self.token_provider is not None
                 else self.credential.get_token(self.scope))
        if inspect.isawaitable(token):
            token = await token
        return self._keep(token)

    def headers(self, token: str | None) -> dict[str, str]:
        """Headers of one request (the key is read from its Secret only here)."""
        out = {"Content-Type": "application/json", "Accept": "application/json",
               "User-Agent": "toolbridge-openai-responses"}
        if token is not None:
            out["Authorization"] = f"Bearer {token}"
        elif self.api_key is not None:
            if self.kind == "azure":
                out["api-key"] = self.api_key.get()
            else:
                out["Authorization"] = f"Bearer {self.api_key.get()}"
        out.update(self.extra_headers)
        return out

    def request_for(self, call: Call[Any], token: str | None,
                    http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        """The request of ``call``: to the base URL, or to a whole URL given (a project's)."""
        import httpx

        params = {k: v for k, v in (call.params or {}).items() if v is not None}
        headers = self.headers(token)
        if call.stream:
            headers["Accept"] = "text/event-stream"
        timeout = httpx.Timeout(self.timeout, read=None if call.stream else self.timeout)
        url = call.path if "://" in call.path else self.base_url + call.path
        return httpx.Request(call.method, url, params=params, headers=headers,
                             content=None if call.body is None else json.dumps(call.body).encode(),
                             extensions={"timeout": timeout.as_dict()})
