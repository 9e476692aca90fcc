"""What a target is asked to do (`AgentPlan`, `ThreadPlan`), the `MigrationTarget` seam, the
retired-model table, and readers of the Assistants objects every target shares."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ._report import Fate

__all__ = [
    "RETIRED_MODELS", "AgentPlan", "MigrationTarget", "ThreadPlan", "config_hash",
    "message_text", "remapped", "setting_fates",
]

RETIRED_MODELS: dict[str, str] = {
    # shut down 2026-10-23
    "gpt-4-turbo": "gpt-5.1", "gpt-4": "gpt-5.1", "gpt-3.5-turbo": "gpt-5.1-mini",
    "o1": "gpt-5.1", "o3-mini": "gpt-5.1-mini", "o4-mini": "gpt-5.1-mini",
    "gpt-4.1-nano": "gpt-5.1-nano",
    # shut down 2026-12-11
    "gpt-5": "gpt-5.1", "gpt-5-mini": "gpt-5.1-mini", "gpt-5-nano": "gpt-5.1-nano",
    "o3": "gpt-5.1",
    # shut down 2027-01-14
    "gpt-4o": "gpt-5.1", "gpt-4o-mini": "gpt-5.1-mini", "gpt-4.1": "gpt-5.1",
    "gpt-4.1-mini": "gpt-5.1-mini",
}
"""Models named by old assistants that OpenAI retires, and the default replacement (a choice,
not OpenAI's advice: override per model with ``remap=`` / ``--model-map OLD=NEW``). Dated
snapshots (``gpt-4o-2024-08-06``) follow their family."""


def remapped(model: str, overrides: Mapping[str, str]) -> str | None:
    """The model to use instead of ``model`` (``overrides`` first, then `RETIRED_MODELS`;
    a dated snapshot follows its family), or ``None`` to keep it."""
    family = model if model in overrides or model in RETIRED_MODELS else next(
        (f for f in sorted({*overrides, *RETIRED_MODELS}, key=len, reverse=True)
         if model.startswith(f + "-20")), None)
    new = None if family is None else overrides.get(family, RETIRED_MODELS.get(family))
    return None if new is None or new == model else new


def config_hash(value: Any) -> str:
    """A short, stable hash of a JSON value (a target configuration)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def message_text(message: Mapping[str, Any]) -> str:
    """The text of an Assistants message: its text parts joined (refusals included)."""
    out = []
    for part in message.get("content") or []:
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text":
            text = part.get("text")
            out.append(str(text.get("value", "")) if isinstance(text, Mapping) else str(text))
        elif part.get("type") == "refusal":
            out.append(str(part.get("refusal", "")))
    return "".join(out)


def setting_fates(assistant: Mapping[str, Any], carried: Mapping[str, str],
                  dropped: Mapping[str, str]) -> list[Fate]:
    """Fates of the assistant's settings that are set: ``carried`` maps a setting to how
    (empty: as is), ``dropped`` to why; a set setting in neither is reported dropped."""
    fates = []
    aid = assistant["id"]
    for key in ("name", "description", "instructions", "metadata", "temperature", "top_p",
                "response_format", "reasoning_effort", "tool_resources"):
        value = assistant.get(key)
        if value in (None, "", {}, [], "auto") or (key == "tool_resources" and not any(
                (value or {}).values())):
            continue
        if key in carried:
            how = carried[key]
            fates.append(Fate("setting", f"{aid}.{key}",
                              "approximated" if how else "carried", how))
        else:
            fates.append(Fate("setting", f"{aid}.{key}", "dropped",
                              dropped.get(key, "the target has no equivalent")))
    return fates


@dataclass
class AgentPlan:
    """One assistant as the target will hold it. ``body`` is what the target creates (its
    own wire form); ``key`` a stable hash of it, written with it to find it again."""

    source_id: str
    name: str
    body: dict[str, Any]
    fates: list[Fate] = field(default_factory=list)
    key: str = ""


@dataclass
class ThreadPlan:
    """One thread as the target will hold it: ``create_items`` go with the create,
    ``append_items`` are appended after it (in order, found by listing before each append);
    ``expected`` is the (role, text) of each message the target should then hold."""

    source_id: str
    agent_source_id: str | None
    metadata: dict[str, str]
    create_items: list[dict[str, Any]]
    append_items: list[dict[str, Any]]
    expected: list[tuple[str, str]]
    fates: list[Fate] = field(default_factory=list)


@runtime_checkable
class MigrationTarget(Protocol):
    """A backend that migrated assistants and threads are written to, through its adapter's
    client. Planning does no I/O (a dry run plans only); the rest talks to the backend."""

    name: str
    lists_threads: bool
    """Whether `find_thread` can find a thread created by a run that crashed before its id
    was recorded (else such a thread may be left behind: a possible orphan)."""
    chunk: int
    """Most items per append request."""

    def plan_agent(self, assistant: Mapping[str, Any], model: str) -> AgentPlan: ...

    def plan_thread(self, thread: Mapping[str, Any], messages: Sequence[Mapping[str, Any]],
                    agent: AgentPlan | None) -> ThreadPlan: ...

    def find_agent(self, plan: AgentPlan) -> str | None: ...

    def create_agent(self, plan: AgentPlan) -> str: ...

    def find_thread(self, plan: ThreadPlan) -> str | None: ...

    def create_thread(self, plan: ThreadPlan, agent_id: str | None) -> str: ...

    def append(self, target_id: str, items: Sequence[Mapping[str, Any]]) -> None: ...

    def held(self, target_id: str) -> list[tuple[str, str]]:
        """(role, text) of each message the target holds, oldest first."""
        ...

    def close(self) -> None: ...
