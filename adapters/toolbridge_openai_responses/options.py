"""Typed options of the Responses dialect: its serve backend's and its emulator's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import Field, SecretStr, model_validator

from toolbridge import UsageError
from toolbridge.http import RetryPolicy
from toolbridge.migration.targets import DEFAULT_MODEL
from toolbridge.plugin import ServeOptions
from toolbridge.testing import StreamFaults
from toolbridge.testing.emulators import EmulatorOptions

from .wire import DIALECT

__all__ = ["ResponsesEmulatorOptions", "ResponsesFaults", "ResponsesServeOptions"]


class ResponsesServeOptions(ServeOptions):
    """Where the Responses service is, how to sign in, and how conversations continue."""

    dialect: ClassVar[str] = DIALECT
    api_key: SecretStr | None = None
    """OpenAI key (default ``$OPENAI_API_KEY``), or an Azure OpenAI ``api-key``."""
    azure_endpoint: str | None = None
    """Azure OpenAI resource root (``https://RES.openai.azure.com``): its ``/openai/v1/``."""
    project_endpoint: str | None = None
    """Azure Foundry project (``https://ACCOUNT.services.ai.azure.com/api/projects/P``)."""
    azure_credential: bool = False
    """Sign in with azure-identity's ``DefaultAzureCredential`` (Entra) instead of a key."""
    credential: Any = None
    """An azure-core ``TokenCredential`` (sync or async) to sign in with, from Python."""
    config: str | None = None
    """A per-request configuration file (written by ``toolbridge migrate --to
    openai-responses``; read with `load_config`): its fields fill the options not given."""
    model: str | None = DEFAULT_MODEL
    """Model (Azure: deployment name); unused with ``agent``. Default: a current model
    (``toolbridge.migration.targets.DEFAULT_MODEL``)."""
    instructions: str | None = None
    """Sent with every request (``previous_response_id`` does not carry them over)."""
    tools: list[dict[str, Any]] | None = None
    """Tools of every request besides the toolbox's functions: hosted tools (``file_search``,
    ``code_interpreter``, ...) are sent after them; a ``function`` tool here must be one of
    the toolbox's (the toolbox's definition is sent)."""
    temperature: float | None = None
    """Sampling temperature of every request."""
    top_p: float | None = None
    """Nucleus sampling of every request."""
    text: dict[str, Any] | None = None
    """``text`` of every request (``{"format": {"type": "json_schema", ...}}``)."""
    reasoning: dict[str, Any] | None = None
    """``reasoning`` of every request (``{"effort": "low"}``)."""
    metadata: dict[str, str] | None = None
    """``metadata`` of every response (16 pairs at most)."""
    tool_choice: str | dict[str, Any] | None = None
    """``tool_choice`` of every request (``auto``, ``required``, ``none`` or a tool)."""
    parallel_tool_calls: bool | None = None
    """Whether the model may call several tools at once."""
    max_output_tokens: int | None = None
    """Most output tokens per response."""
    truncation: str | None = None
    """``auto`` or ``disabled``."""
    agent: str | None = None
    """A saved Foundry agent to answer, by ``agent_reference`` (its tools and model win)."""
    agent_version: str | None = None
    """The agent's version (default: the latest)."""
    create_agent: bool = False
    """Save the toolbox's tools as a new version of ``agent`` before the first turn."""
    conversation: str | None = None
    """An existing Responses conversation to continue or serve."""
    response_id: str | None = None
    """An existing response whose calls wait (served by ``previous_response_id``)."""
    use_conversation: bool = True
    """New conversations live in a Conversation (recoverable by listing its items)."""
    stream: bool = True
    """Stream each response (a dropped stream is re-attached or the response read)."""
    background: bool = False
    """Run responses in background mode (polled, or streamed and re-attached)."""
    poll_interval: float = 1.0
    """Seconds between reads of a background response."""
    timeout: float = 60.0
    """Seconds per request (event streams excepted)."""
    retry: RetryPolicy | None = None
    """Retries of each request (default: 4 attempts on 429/5xx and transport errors)."""

    @model_validator(mode="before")
    @classmethod
    def _read_config(cls, data: Any) -> Any:
        """``config``: the file's fields, under the options given."""
        if not isinstance(data, Mapping) or not data.get("config"):
            return data
        from .migration import load_config

        path = str(data["config"])
        try:
            fields = load_config(path)
        except (OSError, ValueError) as exc:
            raise UsageError(f"{DIALECT} options: config: cannot read {path}: {exc}") from None
        unknown = sorted(k for k in fields if k not in cls.model_fields or k in (
            "config", *_CONNECTION))
        if unknown:
            raise UsageError(f"{DIALECT} options: config: {path} holds {', '.join(unknown)}, "
                             "which a request configuration cannot set")
        return {**fields, **data}

    def request_fields(self, functions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The fields every ``POST /responses`` of a served conversation carries: the
        toolbox's ``functions`` (rendered), then the hosted ``tools``, and the sampling,
        format and other per-request options that are set. With ``agent`` the saved agent
        holds the model, tools and sampling: only ``instructions`` and ``metadata`` go."""
        fields: dict[str, Any] = {}
        if self.agent:
            held = [name for name in _AGENT_HOLDS if getattr(self, name) is not None]
            if held and not self.create_agent:
                raise UsageError(f"{DIALECT} options: {', '.join(held)}: the saved agent "
                                 f"{self.agent!r} holds them (with create_agent they are "
                                 "saved in its new version); drop them from the options")
        else:
            fields.update(model=self.model, tools=self.tools_with(functions))
            for name in _AGENT_HOLDS[1:]:
                if getattr(self, name) is not None:
                    fields[name] = getattr(self, name)
        for name in ("instructions", "metadata"):
            if getattr(self, name):
                fields[name] = getattr(self, name)
        return fields

    def agent_definition(self, functions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A Foundry prompt agent's definition holding the toolbox's ``functions`` and this
        configuration (``create_agent``)."""
        definition: dict[str, Any] = {"kind": "prompt", "model": self.model,
                                      "tools": self.tools_with(functions)}
        for name in (*_AGENT_HOLDS[1:], "instructions"):
            if getattr(self, name) is not None:
                definition[name] = getattr(self, name)
        return definition

    def tools_with(self, functions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The toolbox's ``functions``, then the hosted tools of ``tools``; a function of
        ``tools`` the toolbox does not define is an error naming it."""
        defined = {member.get("name") for tool in functions for member in (
            tool.get("tools") or [] if tool.get("type") == "namespace" else [tool])}
        hosted = []
        for i, tool in enumerate(self.tools or []):
            kind = tool.get("type")
            if not isinstance(kind, str):
                raise UsageError(f"{DIALECT} options: tools[{i}]: no 'type'")
            if kind == "function":
                if tool.get("name") not in defined:
                    raise UsageError(f"{DIALECT} options: tools[{i}]: function "
                                     f"{tool.get('name')!r} has no handler in the toolbox "
                                     "(add one, or remove it from the configuration)")
                continue
            hosted.append(dict(tool))
        return [dict(f) for f in functions] + hosted

    @classmethod
    def emulated(cls, base_url: str) -> Any:
        return cls(base_url=base_url.rstrip("/") + "/v1", api_key=SecretStr("emulator-key"))


_AGENT_HOLDS = ("tools", "temperature", "top_p", "text", "reasoning", "tool_choice",
                "parallel_tool_calls", "max_output_tokens", "truncation")
"""Per-request fields a saved Foundry agent holds instead (``tools`` first)."""
_CONNECTION = ("api_key", "azure_endpoint", "project_endpoint", "azure_credential",
               "credential", "base_url", "retry", "timeout", "poll_interval")
"""Options a configuration file may not set (where to connect, how to sign in)."""


class ResponsesFaults(StreamFaults):
    """The Responses emulator's faults: the shared and stream ones, plus background pacing."""

    background_polls: int | None = Field(default=None, ge=0)
    """Reads a background response stays ``in_progress`` before its final state (1)."""


class ResponsesEmulatorOptions(EmulatorOptions):
    """What the emulated Responses service plays and how it misbehaves."""

    dialect: ClassVar[str] = DIALECT
    background_polls: int | None = None
    """Reads a background response stays ``in_progress`` before its final state (also a
    fault; default 1)."""
