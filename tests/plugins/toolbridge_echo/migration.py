"""`EchoFilesTarget`: ``toolbridge migrate --to echo-files -o dir=PATH`` writes each assistant
as ``agents/<id>.json`` and each thread as ``conversations/<id>.json`` under ``dir``.

An agent keeps the assistant's model, instructions and tools (rendered in the echo wire
form); a conversation its messages' text, role by role. Files are written whole and renamed
into place, so a crash leaves each one either absent or complete; both carry their source id
(and an agent its migration key), so an interrupted run finds what it made before.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolbridge import BackendError, UsageError, get_dialect
from toolbridge.migration import AgentPlan, Fate, ThreadPlan
from toolbridge.migration.targets import (
    config_hash,
    message_fates,
    message_text,
    setting_fates,
    thread_metadata,
)

from .options import DIALECT, EchoTargetOptions

__all__ = ["EchoFilesTarget", "open_target"]


def open_target(options: Mapping[str, Any]) -> EchoFilesTarget:
    """The target for ``-o`` options (`EchoTargetOptions`: ``dir`` only)."""
    return EchoFilesTarget(EchoTargetOptions.parse(options).dir)


class EchoFilesTarget:
    """A `toolbridge.migration.MigrationTarget` writing JSON files under ``root``."""

    name = "echo-files"
    lists_threads = True
    chunk = 50

    def __init__(self, root: Path) -> None:
        self.agents = root / "agents"
        self.conversations = root / "conversations"
        try:
            self.agents.mkdir(parents=True, exist_ok=True)
            self.conversations.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{self.name}: cannot create the folders under dir={root}: "
                             f"{exc.strerror or exc}") from None

    # ------------------------------------------------------------------ planning
    def plan_agent(self, assistant: Mapping[str, Any], model: str) -> AgentPlan:
        aid = str(assistant["id"])
        imported = get_dialect("openai-assistants").import_tools(assistant.get("tools") or [])
        rendered = get_dialect(DIALECT).render_tools(imported.definitions)
        fates = [Fate("tool", f"{aid}.tools.{d.name}", "carried") for d in imported.definitions]
        fates += [Fate("tool", f"{aid}.tools[{s.index}]", "dropped", s.reason)
                  for s in imported.skipped]
        body = {"model": model, "name": assistant.get("name") or aid,
                "instructions": assistant.get("instructions") or "",
                "tools": rendered.definitions}
        fates = setting_fates(assistant, {"name": "", "instructions": ""}, {}) + fates
        return AgentPlan(aid, str(body["name"]), body, fates, config_hash(body))

    def plan_thread(self, thread: Mapping[str, Any], messages: Sequence[Mapping[str, Any]],
                    agent: AgentPlan | None) -> ThreadPlan:
        tid = str(thread["id"])
        items = [{"role": str(m.get("role")), "text": message_text(m)} for m in messages]
        fates = [Fate("thread", tid, "carried", f"{len(items)} message(s), text only")]
        for message in messages:
            fates += message_fates(tid, message, "its text, under its role")
        metadata = thread_metadata(thread, agent.source_id if agent else None, fates)
        expected = [(item["role"], item["text"]) for item in items]
        return ThreadPlan(tid, agent.source_id if agent else None, metadata, [], items,
                          expected, fates)

    # ------------------------------------------------------------------ writing
    def find_agent(self, plan: AgentPlan) -> str | None:
        for path, agent in _each(self.agents):
            if agent.get("source_id") == plan.source_id and agent.get("key") == plan.key:
                return path.stem
        return None

    def create_agent(self, plan: AgentPlan) -> str:
        agent_id = f"agent_{uuid.uuid4().hex[:12]}"
        _write(self.agents / f"{agent_id}.json",
               {"source_id": plan.source_id, "key": plan.key, **plan.body})
        return agent_id

    def find_thread(self, plan: ThreadPlan) -> str | None:
        for path, conversation in _each(self.conversations):
            if conversation.get("metadata", {}).get("source_thread_id") == plan.source_id:
                return path.stem
        return None

    def create_thread(self, plan: ThreadPlan, agent_id: str | None) -> str:
        conversation_id = f"conv_{uuid.uuid4().hex[:12]}"
        _write(self.conversations / f"{conversation_id}.json",
               {"agent": agent_id, "metadata": plan.metadata, "messages": plan.create_items})
        return conversation_id

    def append(self, target_id: str, items: Sequence[Mapping[str, Any]]) -> None:
        path = self.conversations / f"{target_id}.json"
        conversation = _read(path)
        conversation["messages"] += [dict(item) for item in items]
        _write(path, conversation)

    def held_agent(self, plan: AgentPlan, target_id: str) -> Mapping[str, Any]:
        """The agent file as written, without the keys it is found again by."""
        agent = _read(self.agents / f"{target_id}.json")
        return {k: v for k, v in agent.items() if k not in ("source_id", "key")}

    def held(self, target_id: str) -> list[tuple[str, str]]:
        messages = _read(self.conversations / f"{target_id}.json")["messages"]
        return [(str(m["role"]), str(m["text"])) for m in messages]

    def missing_models(self, models: Sequence[str]) -> list[str]:
        """None: a file holds any model name."""
        return []

    def discard(self, target_id: str, threads: Collection[str]) -> tuple[str, str]:
        return "", ("conversations are found again by metadata.source_thread_id, so none is "
                    "left behind as a possible orphan")

    def close(self) -> None:
        """Nothing is held open between writes."""


def _read(path: Path) -> dict[str, Any]:
    """A file this target wrote; `BackendError` (404 when it is gone) if it cannot be read."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        status = 404 if isinstance(exc, FileNotFoundError) else None
        raise BackendError(f"echo-files: cannot read {path}: {exc}", status=status) from None
    if not isinstance(value, dict):
        raise BackendError(f"echo-files: {path} does not hold a JSON object")
    return value


def _each(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [(path, _read(path)) for path in sorted(folder.glob("*.json"))]


def _write(path: Path, value: Any) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(value, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(partial, path)
