"""The Assistants dialect's typed options: serving (`AssistantsOptions`) and its emulator's."""

from __future__ import annotations

from typing import Any

from toolbridge import ToolChoice
from toolbridge.http import RetryPolicy, Secret
from toolbridge.migration.targets import DEFAULT_MODEL
from toolbridge.plugin import ServeOptions
from toolbridge.testing import StreamFaults
from toolbridge.testing.emulators import EmulatorOptions

from .wire import DIALECT

__all__ = ["AssistantsEmulatorOptions", "AssistantsFaults", "AssistantsOptions"]

CLIENT_FIELDS = ("api_key", "azure_endpoint", "api_version", "azure_ad_token_provider",
                 "project_endpoint", "credential",
                 "retry", "timeout", "poll_interval", "expiry_margin", "http_client")
"""The options that configure the client (the others say what to serve)."""


class AssistantsOptions(ServeOptions):
    """How the driver reaches Assistants runs on OpenAI (``base_url``, ``api_key``) or Azure
    OpenAI (``azure_endpoint``, ``api_version``, and ``api_key`` or
    ``azure_ad_token_provider``) or Foundry classic agents (``project_endpoint`` and
    ``credential`` or ``azure_ad_token_provider``). Without any, the real service with
    credentials from the environment (``$OPENAI_API_KEY``, or ``$AZURE_OPENAI_ENDPOINT`` and
    its companions)."""

    dialect = DIALECT
    api_key: Secret | None = None
    """OpenAI key, or Azure ``api-key``."""
    azure_endpoint: str | None = None
    """``https://<resource>.openai.azure.com`` (Azure OpenAI)."""
    api_version: str | None = None
    """Azure's ``api-version`` (``2024-02-15-preview`` or later)."""
    azure_ad_token_provider: Any = None
    """Azure: a callable returning an Entra ID token (instead of ``api_key``)."""
    project_endpoint: str | None = None
    """Foundry classic agents: ``https://<resource>.services.ai.azure.com/api/projects/<p>``
    (Entra token only: ``credential`` or ``azure_ad_token_provider``; ``api-version=v1``)."""
    credential: Any = None
    """An azure-identity ``TokenCredential`` (scope ``https://ai.azure.com/.default``)."""
    thread_id: str | None = None
    """Serving: the thread of the run to serve (a conversation: continue this thread)."""
    run_id: str | None = None
    """Serving: the run to serve."""
    assistant_id: str | None = None
    """The assistant to run (else one is created with the toolbox's tools)."""
    model: str = DEFAULT_MODEL
    """The model of a created assistant (on Azure: the deployment name). Default: a current
    model (``toolbridge.migration.targets.DEFAULT_MODEL``)."""
    instructions: str | None = None
    """The instructions of a created assistant."""
    tool_choice: ToolChoice | str | None = None
    """``auto``, ``none``, ``required`` or a tool's name, for every run."""
    run_options: dict[str, Any] | None = None
    """Other fields of every created run (``parallel_tool_calls``, ``metadata``, ...)."""
    stream: bool = True
    """Follow runs by streaming (else by polling)."""
    timeout: float = 60.0
    """Seconds per request."""
    poll_interval: float = 1.0
    """Seconds between polls when the service sends no ``openai-poll-after-ms``."""
    expiry_margin: float = 5.0
    """A call whose tool could end within this many seconds of the run's expiry is answered
    with an error instead of being started."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx and transport errors)."""
    http_client: Any = None
    """An ``httpx.AsyncClient`` to send with."""
    client: Any = None
    """An open `AsyncAssistantsClient` to use (not closed); replaces the client options."""

    @classmethod
    def emulated(cls, base_url: str) -> AssistantsOptions:
        return cls(base_url=base_url, api_key=Secret("emulator"))


class AssistantsFaults(StreamFaults):
    """The Assistants emulator's faults: the shared ones and the stream ones, plus expiry."""

    expire_after: float | None = None
    """Seconds until a run expires (the service's ten minutes, shortened)."""


class AssistantsEmulatorOptions(EmulatorOptions):
    """Options of the Assistants emulator."""

    dialect = DIALECT
    poll_after_ms: int = 20
    """The ``openai-poll-after-ms`` hint sent with every answer."""
    expire_after: float | None = None
    """Seconds until a run expires (also a fault)."""
