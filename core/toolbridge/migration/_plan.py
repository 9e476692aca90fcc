"""What a target is asked to do (`AgentPlan`, `ThreadPlan`), the `MigrationTarget` seam, and
readers of the Assistants objects every target shares."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ._report import Fate, FateKind

__all__ = [
    "AgentPlan", "MigrationTarget", "ThreadPlan", "config_hash", "message_fates",
    "message_text", "setting_fates", "thread_metadata",
]

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
    (empty: as is), ``dropped`` to why; a set setting in neither is reported dropped.
    ``tool_resources`` get a line per resource (``asst_1.tool_resources.file_search``)."""
    fates = []
    aid = assistant["id"]
    for key in ("name", "description", "instructions", "metadata", "temperature", "top_p",
                "response_format", "reasoning_effort", "tool_resources"):
        value = assistant.get(key)
        if value in (None, "", {}, [], "auto"):
            continue
        subjects = [("setting", f"{aid}.{key}")]
        if key == "tool_resources":
            subjects = [("tool_resource", f"{aid}.tool_resources.{kind}")
                        for kind, resource in (value or {}).items() if resource]
        for kind, subject in subjects:
            if key in carried:
                how = carried[key]
                fates.append(Fate(kind, subject, "approximated" if how else "carried", how))
            else:
                fates.append(Fate(kind, subject, "dropped",
                                  dropped.get(key, "the target has no equivalent")))
    return fates


def message_fates(thread_id: str, message: Mapping[str, Any], how: str,
                  fate: FateKind = "carried") -> list[Fate]:
    """The fates every target shares for one message, keyed ``<thread id>.<message id>``:
    the message itself (``how`` it is held) and its ``metadata`` (no target's items hold
    one)."""
    where = f"{thread_id}.{message.get('id')}"
    parts = [str(p.get("type")) for p in message.get("content") or [] if isinstance(p, Mapping)]
    fates = [Fate("message", where, fate, f"{how} ({', '.join(parts) or 'no parts'})")]
    if message.get("metadata"):
        fates.append(Fate("message", f"{where}.metadata", "dropped",
                          "the target's items have no metadata"))
    return fates


def thread_metadata(thread: Mapping[str, Any], agent_source_id: str | None,
                    fates: list[Fate]) -> dict[str, str]:
    """The target's metadata for a thread: the source's pairs (16 at most, with the
    migration's two marks), and its fate."""
    tid = str(thread["id"])
    marks = {"source_thread_id": tid}
    if agent_source_id is not None:
        marks["source_assistant_id"] = agent_source_id
    source = {str(k): str(v) for k, v in (thread.get("metadata") or {}).items()}
    room = 16 - len(marks)
    if len(source) > room:
        fates.append(Fate("thread", f"{tid}.metadata", "approximated",
                          f"{len(source) - room} pair(s) dropped (16 at most, "
                          f"{len(marks)} used by the migration)"))
    elif source:
        fates.append(Fate("thread", f"{tid}.metadata", "carried",
                          f"{len(source)} pair(s), with source_thread_id added"))
    return dict(list(source.items())[:room]) | marks


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
    ``expected`` is the (role, text) of each message the target should then hold, with the
    (type, text) of each tool item (a run step's function call and output) in its place."""

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
                    agent: AgentPlan | None) -> ThreadPlan:
        """The thread's plan; ``messages`` is its history (`Workload.thread_history`):
        ``thread.message`` objects with ``thread.run.step`` objects in their places."""
        ...

    def find_agent(self, plan: AgentPlan) -> str | None: ...

    def create_agent(self, plan: AgentPlan) -> str: ...

    def find_thread(self, plan: ThreadPlan) -> str | None: ...

    def create_thread(self, plan: ThreadPlan, agent_id: str | None) -> str: ...

    def append(self, target_id: str, items: Sequence[Mapping[str, Any]]) -> None: ...

    def held_agent(self, plan: AgentPlan, target_id: str) -> Mapping[str, Any]:
        """What the target holds for the agent ``target_id``, read back in the shape of
        ``plan.body`` (verified to hold every field of it: the conversations continued
        after the migration run with that agent or configuration)."""
        ...

    def held(self, target_id: str) -> list[tuple[str, str]]:
        """(role, text) of each message the target holds, oldest first, and (type, text)
        of each tool item it holds (``function_call``: ``name arguments``), as ``expected``
        names them."""
        ...

    def missing_models(self, models: Sequence[str]) -> list[str]:
        """Those of ``models`` the target cannot serve (Foundry: no such deployment in the
        project); asked before anything is written."""
        ...

    def discard(self, target_id: str, threads: Collection[str]) -> tuple[str, str]:
        """Delete ``target_id`` if it is a possible orphan: empty, and marked with one of
        ``threads`` (source thread ids). Returns the thread it is marked with, and ``""``
        once deleted, else why it was kept."""
        ...

    def close(self) -> None: ...
