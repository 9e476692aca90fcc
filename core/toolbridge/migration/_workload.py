"""`Workload`: the assistants, threads and messages to migrate, read from export files.

Export layout, version 1 (every object as the Assistants API returned it; a list page
``{"object": "list", "data": [...]}`` is accepted wherever a list is):

- a JSON document ``{"toolbridge_export": 1, "assistants": [...], "threads": [...],
  "messages": {"<thread id>": [...]}, "runs": [...], "steps": [...]}`` (``messages`` may also
  be one flat list, each message naming its ``thread_id``; runs and steps name theirs);
- a folder with ``assistants.json``, ``threads.json``, ``runs.json``, ``steps.json`` and
  ``messages/<thread id>.json`` (or ``<thread id>.jsonl``), any of them optional;
- JSON Lines: one API object per line, told apart by its ``object`` field (``assistant``,
  ``thread``, ``thread.message``, ``thread.run``, ``thread.run.step``, or a ``list`` page).

Run steps put the tool exchanges in the history (`Workload.thread_history`); a run left
unfinished in an export has its pending calls reported dropped (`Workload.unfinished_runs`).

Messages are put oldest first by ``created_at``; messages of the same second keep the order
of their listing, a newest-first one (the API's default) reversed. A page's order is its
``order`` field (``"asc"`` or ``"desc"``, an addition to the API's page), else what its
``created_at`` values show; where neither tells and messages share a second, the thread's
order is reported approximated (`Workload.order_notes`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from ..errors import UsageError

__all__ = ["EXPORT_VERSION", "UNFINISHED_RUNS", "Workload", "read_export"]

EXPORT_VERSION = 1
"""The version of the export layout this module reads (``toolbridge_export``)."""


UNFINISHED_RUNS = frozenset({"queued", "in_progress", "requires_action", "cancelling"})
"""Run statuses that hold a thread back from migration."""

Order = Literal["asc", "desc"] | None
"""A sequence's order: oldest first, newest first (the API's default), or unknown."""


@dataclass
class Workload:
    """What to migrate: raw API objects, messages by thread id, oldest first.

    ``deployments`` maps an Azure deployment name to the model it serves (read from a live
    source's deployments API); ``order_notes`` says, per thread, why its order is only
    approximated (same-second messages from a sequence of unknown order)."""

    assistants: list[dict[str, Any]] = field(default_factory=list)
    threads: list[dict[str, Any]] = field(default_factory=list)
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    deployments: dict[str, str] = field(default_factory=dict)
    order_notes: dict[str, str] = field(default_factory=dict)
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Runs by thread id (``thread.run`` objects): an unfinished one holds its thread back."""
    steps: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Run steps by thread id (``thread.run.step``): the tool exchanges of the history."""
    unfinished: dict[str, str] = field(default_factory=dict)
    """Thread id -> why it is not migrated yet: on a live source, a run still queued, in
    progress or waiting for tool outputs (it can still end: migrate the thread after it).
    An export's unfinished runs cannot end: their threads are migrated without the pending
    calls (`unfinished_runs`)."""
    _ranks: dict[tuple[str, str], tuple[int, Order]] = field(default_factory=dict, repr=False)

    def add(self, obj: Any, where: str, order: Order = None) -> None:
        """One API object (or a list page of them), by its ``object`` field. A page's
        messages are read in its ``order`` (``asc``/``desc``; the page's own ``order``
        field, else what its ``created_at`` values show)."""
        if not isinstance(obj, Mapping):
            raise UsageError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        kind = obj.get("object")
        if kind == "list":
            data = obj.get("data")
            if not isinstance(data, list):
                raise UsageError(f"{where}: a list page needs a 'data' list")
            self.add_sequence(data, f"{where}.data", _order(obj.get("order"), where))
            return
        if not isinstance(obj.get("id"), str) or not obj["id"]:
            raise UsageError(f"{where}: the {kind or 'object'} has no 'id'")
        if kind == "assistant":
            self.assistants.append(dict(obj))
        elif kind == "thread":
            self.threads.append(dict(obj))
        elif kind in ("thread.message", "thread.run", "thread.run.step"):
            thread_id = obj.get("thread_id")
            if not isinstance(thread_id, str) or not thread_id:
                raise UsageError(f"{where}: {kind} {obj['id']} has no 'thread_id'")
            held = self.messages if kind == "thread.message" else (
                self.runs if kind == "thread.run" else self.steps)
            held.setdefault(thread_id, []).append(dict(obj))
            if kind == "thread.message":
                self._ranks.setdefault((thread_id, obj["id"]), (len(self._ranks), order))
        else:
            raise UsageError(f"{where}: unknown object {kind!r} (expected 'assistant', 'thread', "
                             "'thread.message', 'thread.run', 'thread.run.step' or a 'list' "
                             "page)")

    def add_sequence(self, items: Sequence[Any], where: str, order: Order = None) -> None:
        """Objects in the order a listing gave them; ``order`` unknown: read from the
        messages' ``created_at`` (rising: oldest first, falling: newest first)."""
        order = order or _inferred(items)
        for i, item in enumerate(items):
            self.add(item, f"{where}[{i}]", order)

    def finish(self) -> Workload:
        """Drop duplicates (same id, first kept), put messages oldest first (``created_at``;
        within a second, the source's order: newest-first sequences reversed), add threads
        that only messages name."""
        self.assistants = _unique(self.assistants)
        self.threads = _unique(self.threads)
        known = {t["id"] for t in self.threads}
        for thread_id, messages in self.messages.items():
            ranked = []
            for message in _unique(messages):
                arrival, order = self._ranks[(thread_id, message["id"])]
                ranked.append((_number(message.get("created_at")),
                               -arrival if order == "desc" else arrival, order, message))
            ranked.sort(key=lambda r: (r[0], r[1]))
            self.messages[thread_id] = [r[3] for r in ranked]
            ties = Counter(r[0] for r in ranked)
            unsure = sorted({r[3]["id"] for r in ranked if r[2] is None and ties[r[0]] > 1})
            if unsure:
                self.order_notes[thread_id] = (
                    f"messages {', '.join(unsure)} share a created_at second and came in a "
                    "sequence of unknown order (give the page an 'order', or export with "
                    "order=asc): kept in the order read")
            if thread_id not in known:
                self.threads.append({"id": thread_id, "object": "thread", "metadata": {}})
                known.add(thread_id)
        for thread_id, steps in self.steps.items():
            self.steps[thread_id] = sorted(_unique(steps), key=lambda s: _number(
                s.get("created_at")))
        for thread_id, runs in self.runs.items():
            self.runs[thread_id] = _unique(runs)
        return self

    def unfinished_runs(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's runs still queued, in progress or waiting for tool outputs."""
        return [r for r in self.runs.get(thread_id, []) if r.get("status") in UNFINISHED_RUNS]

    def thread_history(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's messages with its run steps in their places, oldest first: a run's
        tool steps before the message its next ``message_creation`` step made, else after
        the last message created before them."""
        before: dict[str, list[dict[str, Any]]] = {}
        loose: list[dict[str, Any]] = []
        runs: dict[str, list[dict[str, Any]]] = {}
        for step in self.steps.get(thread_id, []):
            runs.setdefault(str(step.get("run_id")), []).append(step)
        for steps in runs.values():
            waiting: list[dict[str, Any]] = []
            for step in steps:
                made = (step.get("step_details") or {}).get("message_creation") or {}
                if step.get("type") == "message_creation" and made.get("message_id"):
                    before.setdefault(str(made["message_id"]), []).extend(waiting)
                    waiting = []
                elif step.get("type") != "message_creation":
                    waiting.append(step)
            loose += waiting
        history: list[dict[str, Any]] = []
        for message in self.thread_messages(thread_id):
            history += before.pop(str(message["id"]), [])
            history.append(message)
        loose += [s for steps in before.values() for s in steps]  # their message is absent
        for step in sorted(loose, key=lambda s: _number(s.get("created_at"))):
            at = len(history)
            while at > 0 and _number(history[at - 1].get("created_at")) > _number(
                    step.get("created_at")):
                at -= 1
            history.insert(at, step)
        return history

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


def _order(value: Any, where: str) -> Order:
    if value in (None, "asc", "desc"):
        return cast(Order, value)
    raise UsageError(f"{where}: 'order' must be 'asc' or 'desc', not {value!r}")


def _inferred(items: Sequence[Any]) -> Order:
    """``asc`` or ``desc`` when the messages' ``created_at`` only rise or only fall (per
    thread), else unknown."""
    last: dict[str, float] = {}
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, Mapping) or item.get("object", "thread.message") != (
                "thread.message") or not isinstance(item.get("created_at"), (int, float)):
            continue
        thread = str(item.get("thread_id"))
        at = float(item["created_at"])
        if thread in last and at != last[thread]:
            seen.add("asc" if at > last[thread] else "desc")
        last[thread] = at
    return cast(Order, seen.pop()) if len(seen) == 1 else None


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
    """One API object per line; the lines that are not list pages are one sequence."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    loose: list[Any] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise UsageError(f"{path}:{number}: not JSON: {exc}") from None
        if isinstance(value, Mapping) and value.get("object") == "list":
            workload.add(value, f"{path}:{number}")
        else:
            if not isinstance(value, Mapping):
                workload.add(value, f"{path}:{number}")  # raises: not an object
            loose.append(value)
    workload.add_sequence(loose, str(path))


def _listed(value: Any, kind: str, where: str, workload: Workload) -> None:
    """A list (or page) of ``kind`` objects; objects without ``object`` are taken as ``kind``."""
    page = isinstance(value, Mapping) and "data" in value
    items = value.get("data") if page else value
    if not isinstance(items, list):
        raise UsageError(f"{where}: expected a list of {kind} objects (or a list page)")
    items = [{**item, "object": kind} if isinstance(item, Mapping) and "object" not in item
             else item for item in items]
    workload.add_sequence(items, where, _order(value.get("order"), where) if page else None)


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
    _listed(data.get("runs", []), "thread.run", f"{where}: runs", workload)
    _listed(data.get("steps", []), "thread.run.step", f"{where}: steps", workload)
    messages = data.get("messages", [])
    if isinstance(messages, Mapping) and "data" not in messages:
        for thread_id, page in messages.items():
            _thread_messages(page, str(thread_id), f"{where}: messages.{thread_id}", workload)
    else:
        _listed(messages, "thread.message", f"{where}: messages", workload)


def _thread_messages(value: Any, thread_id: str, where: str, workload: Workload) -> None:
    page = isinstance(value, Mapping)
    items = value.get("data") if page else value
    if not isinstance(items, list):
        raise UsageError(f"{where}: expected a list of messages (or a list page)")
    items = [{"object": "thread.message", "thread_id": thread_id, **item}
             if isinstance(item, Mapping) else item for item in items]
    workload.add_sequence(items, where, _order(value.get("order"), where) if page else None)


def read_export(*paths: str | Path) -> Workload:
    """A `Workload` from export files and folders (see the module docstring for the layout)."""
    workload = Workload()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for name, kind in (("assistants.json", "assistant"), ("threads.json", "thread"),
                               ("runs.json", "thread.run"), ("steps.json", "thread.run.step")):
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
