"""`Workload`: the assistants, threads and messages to migrate, read from export files.

Export layout, version 1 (every object as the Assistants API returned it; a list page
``{"object": "list", "data": [...]}`` is accepted wherever a list is):

- a JSON document ``{"toolbridge_export": 1, "assistants": [...], "threads": [...],
  "messages": {"<thread id>": [...]}}`` (``messages`` may also be one flat list, each message
  naming its ``thread_id``);
- a folder with ``assistants.json``, ``threads.json`` and ``messages/<thread id>.json``
  (or ``<thread id>.jsonl``), any of them optional;
- JSON Lines: one API object per line, told apart by its ``object`` field (``assistant``,
  ``thread``, ``thread.message``, or a ``list`` page of them).

Messages are put oldest first (``created_at``, then position), whatever order they came in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

__all__ = ["EXPORT_VERSION", "Workload", "read_export"]

EXPORT_VERSION = 1
"""The version of the export layout this module reads (``toolbridge_export``)."""


@dataclass
class Workload:
    """What to migrate: raw API objects, messages by thread id, oldest first."""

    assistants: list[dict[str, Any]] = field(default_factory=list)
    threads: list[dict[str, Any]] = field(default_factory=list)
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, obj: Any, where: str) -> None:
        """One API object (or a list page of them), by its ``object`` field."""
        if not isinstance(obj, Mapping):
            raise UsageError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        kind = obj.get("object")
        if kind == "list":
            data = obj.get("data")
            if not isinstance(data, list):
                raise UsageError(f"{where}: a list page needs a 'data' list")
            for i, item in enumerate(data):
                self.add(item, f"{where}.data[{i}]")
            return
        if not isinstance(obj.get("id"), str) or not obj["id"]:
            raise UsageError(f"{where}: the {kind or 'object'} has no 'id'")
        if kind == "assistant":
            self.assistants.append(dict(obj))
        elif kind == "thread":
            self.threads.append(dict(obj))
        elif kind == "thread.message":
            thread_id = obj.get("thread_id")
            if not isinstance(thread_id, str) or not thread_id:
                raise UsageError(f"{where}: message {obj['id']} has no 'thread_id'")
            self.messages.setdefault(thread_id, []).append(dict(obj))
        else:
            raise UsageError(f"{where}: unknown object {kind!r} (expected 'assistant', 'thread', "
                             "'thread.message' or a 'list' page)")

    def finish(self) -> Workload:
        """Drop duplicates (same id, first kept), sort messages oldest first, add threads
        that only messages name; check every id is unique per kind."""
        self.assistants = _unique(self.assistants)
        self.threads = _unique(self.threads)
        known = {t["id"] for t in self.threads}
        for thread_id, messages in self.messages.items():
            ordered = sorted(enumerate(_unique(messages)),
                             key=lambda p: (_number(p[1].get("created_at")), p[0]))
            self.messages[thread_id] = [m for _, m in ordered]
            if thread_id not in known:
                self.threads.append({"id": thread_id, "object": "thread", "metadata": {}})
                known.add(thread_id)
        return self

    def thread_messages(self, thread_id: str) -> list[dict[str, Any]]:
        return self.messages.get(thread_id, [])

    def assistant_of(self, thread: Mapping[str, Any]) -> str | None:
        """The assistant a thread ran with: its assistant messages', its metadata's
        ``assistant_id``, or the only assistant of the workload."""
        for message in self.thread_messages(str(thread["id"])):
            if isinstance(message.get("assistant_id"), str) and message["assistant_id"]:
                return str(message["assistant_id"])
        metadata = thread.get("metadata") or {}
        if isinstance(metadata, Mapping) and isinstance(metadata.get("assistant_id"), str):
            return str(metadata["assistant_id"])
        return str(self.assistants[0]["id"]) if len(self.assistants) == 1 else None


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def _unique(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for obj in objects:
        seen.setdefault(str(obj["id"]), obj)
    return list(seen.values())


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None


def _lines(path: Path, workload: Workload) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise UsageError(f"{path}:{number}: not JSON: {exc}") from None
        workload.add(value, f"{path}:{number}")


def _listed(value: Any, kind: str, where: str, workload: Workload) -> None:
    """A list (or page) of ``kind`` objects; objects without ``object`` are taken as ``kind``."""
    items = value.get("data") if isinstance(value, Mapping) and "data" in value else value
    if not isinstance(items, list):
        raise UsageError(f"{where}: expected a list of {kind} objects (or a list page)")
    for i, item in enumerate(items):
        if isinstance(item, Mapping) and "object" not in item:
            item = {**item, "object": kind}
        workload.add(item, f"{where}[{i}]")


def _document(data: Any, where: str, workload: Workload) -> None:
    if not isinstance(data, Mapping):
        raise UsageError(f"{where}: expected a JSON object with 'assistants', 'threads' and "
                         "'messages'")
    version = data.get("toolbridge_export", EXPORT_VERSION)
    if version != EXPORT_VERSION:
        raise UsageError(f"{where}: export layout version {version!r} is not supported "
                         f"(this toolbridge reads version {EXPORT_VERSION})")
    if data.get("object") is not None:  # one API object or page
        workload.add(data, where)
        return
    _listed(data.get("assistants", []), "assistant", f"{where}: assistants", workload)
    _listed(data.get("threads", []), "thread", f"{where}: threads", workload)
    messages = data.get("messages", [])
    if isinstance(messages, Mapping) and "data" not in messages:
        for thread_id, page in messages.items():
            _thread_messages(page, str(thread_id), f"{where}: messages.{thread_id}", workload)
    else:
        _listed(messages, "thread.message", f"{where}: messages", workload)


def _thread_messages(value: Any, thread_id: str, where: str, workload: Workload) -> None:
    items = value.get("data") if isinstance(value, Mapping) else value
    if not isinstance(items, list):
        raise UsageError(f"{where}: expected a list of messages (or a list page)")
    for i, item in enumerate(items):
        if isinstance(item, Mapping):
            item = {"object": "thread.message", "thread_id": thread_id, **item}
        workload.add(item, f"{where}[{i}]")


def read_export(*paths: str | Path) -> Workload:
    """A `Workload` from export files and folders (see the module docstring for the layout)."""
    workload = Workload()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for name, kind in (("assistants.json", "assistant"), ("threads.json", "thread")):
                if (path / name).exists():
                    _listed(_load(path / name), kind, str(path / name), workload)
            folder = path / "messages"
            if folder.is_dir():
                for file in sorted(folder.iterdir()):
                    if file.suffix == ".jsonl":
                        _lines(file, workload)
                    elif file.suffix == ".json":
                        _thread_messages(_load(file), file.stem, str(file), workload)
        elif path.suffix == ".jsonl":
            _lines(path, workload)
        elif path.exists():
            _document(_load(path), str(path), workload)
        else:
            raise UsageError(f"no export at {path}")
    return workload.finish()
