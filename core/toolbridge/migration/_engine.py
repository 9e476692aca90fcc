"""`migrate`: a `Workload` onto a `MigrationTarget`, resumable through a `Ledger`.

Order: every assistant, then one thread after another (create, append oldest first, verify).
Before each create the intent is in the ledger; a run that finds an intent without an id
asks the target (`find_agent` / `find_thread`) before creating again, and where the target
cannot list, reports the possible orphan. Before each append the target's items are listed,
so items that reached it before a crash (or whose reply was lost) are not sent twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import BackendError, UsageError
from ._ledger import Ledger
from ._plan import AgentPlan, MigrationTarget, ThreadPlan, remapped
from ._report import Fate, MigrationReport, ThreadOutcome, Verification
from ._workload import Workload

__all__ = ["migrate"]

log = logging.getLogger("toolbridge.migration")

Progress = Callable[[int, int], None]
"""Called with (threads done, threads in all) after each thread."""

APPEND_ATTEMPTS = 3
"""Appends tried per chunk after unclear failures (each preceded by a listing)."""


def migrate(workload: Workload, target: MigrationTarget, ledger: Ledger, *,
            dry_run: bool = False, remap: Mapping[str, str] | None = None,
            progress: Progress | None = None) -> MigrationReport:
    """Migrate ``workload`` to ``target``; returns the report (also for a dry run, which
    plans and writes nothing). Safe to run again: what the ledger says is done is skipped,
    what was begun is continued."""
    report = MigrationReport(ledger.migration, target.name, dry_run)
    plans: dict[str, AgentPlan] = {}
    for assistant in workload.assistants:
        agent_plan = _plan_agent(assistant, target, remap or {}, report)
        plans[agent_plan.source_id] = agent_plan
        report.agents[agent_plan.source_id] = None if dry_run else _agent(
            agent_plan, target, ledger, report)
    total = len(workload.threads)
    for done, thread in enumerate(workload.threads, 1):
        assistant_id = workload.assistant_of(thread)
        agent = plans.get(assistant_id) if assistant_id else None
        plan = target.plan_thread(thread, workload.thread_messages(str(thread["id"])), agent)
        report.fates += plan.fates
        if dry_run:
            report.threads.append(ThreadOutcome(plan.source_id, None, "planned"))
        else:
            agent_id = report.agents.get(agent.source_id) if agent else None
            report.threads.append(_thread(plan, agent_id, target, ledger, report))
        if progress is not None:
            progress(done, total)
    return report


def _plan_agent(assistant: Mapping[str, Any], target: MigrationTarget,
                remap: Mapping[str, str], report: MigrationReport) -> AgentPlan:
    model = assistant.get("model")
    if not isinstance(model, str) or not model:
        raise UsageError(f"assistant {assistant.get('id')}: no 'model'")
    new = remapped(model, remap)
    if new is not None:
        report.remaps[model] = new
        why = "remap given" if model in remap else "retired model"
        report.fates.append(Fate("setting", f"{assistant['id']}.model", "approximated",
                                 f"{why}: {model} remapped to {new}"))
    else:
        report.fates.append(Fate("setting", f"{assistant['id']}.model", "carried"))
    plan = target.plan_agent(assistant, new or model)
    report.fates += plan.fates
    return plan


def _agent(plan: AgentPlan, target: MigrationTarget, ledger: Ledger,
           report: MigrationReport) -> str:
    entry = ledger.get("agent", plan.source_id)
    if entry.get("state") == "done" and entry.get("key") == plan.key:
        return str(entry["target_id"])
    if entry.get("state") == "done":
        report.notes.append(f"{plan.source_id}: configuration changed since the last run; a "
                            "new agent (version) is made")
    else:
        found = target.find_agent(plan)
        if found is not None:
            ledger.put("agent", plan.source_id, state="done", target_id=found, key=plan.key)
            return found
    ledger.put("agent", plan.source_id, state="creating", key=plan.key)
    created = target.create_agent(plan)
    ledger.put("agent", plan.source_id, state="done", target_id=created, key=plan.key)
    return created


def _thread(plan: ThreadPlan, agent_id: str | None, target: MigrationTarget, ledger: Ledger,
            report: MigrationReport) -> ThreadOutcome:
    entry = ledger.get("thread", plan.source_id)
    state = entry.get("state")
    target_id = entry.get("target_id")
    status = "done" if state == "done" else "resumed" if state else "created"
    if target_id is None:
        if state == "creating":
            target_id = target.find_thread(plan)
            if target_id is None and not target.lists_threads:
                report.possible_orphans.append(
                    f"{plan.source_id}: a {target.name} object created by an interrupted run "
                    f"(metadata source_thread_id={plan.source_id}) may exist; it cannot be "
                    "listed, so a new one was created")
        if target_id is None:
            ledger.put("thread", plan.source_id, state="creating")
            target_id = target.create_thread(plan, agent_id)
            ledger.put("thread", plan.source_id, state="created", target_id=target_id)
    appended = 0
    if state == "done":
        held = target.held(target_id)
    else:
        appended, held = _append(plan, target_id, target, ledger)
        ledger.put("thread", plan.source_id, state="done", target_id=target_id)
    return ThreadOutcome(plan.source_id, target_id, status, appended, _verify(plan, held))


def _append(plan: ThreadPlan, target_id: str, target: MigrationTarget, ledger: Ledger
            ) -> tuple[int, list[tuple[str, str]]]:
    """Append what the target does not hold yet, a chunk at a time; returns how many, and
    the target's messages as last listed (holding them all)."""
    base = len(plan.expected) - len(plan.append_items)  # messages sent with the create
    sent = 0
    failures = 0
    while True:
        listed = target.held(target_id)
        held = _held_count(plan, listed)
        todo = plan.append_items[max(held - base, 0):]
        if not todo:
            return sent, listed
        part = todo[:target.chunk]
        try:
            target.append(target_id, part)
        except BackendError as exc:
            failures += 1
            if failures >= APPEND_ATTEMPTS or (exc.status is not None and exc.status < 500
                                               and exc.status not in (408, 409, 429)):
                raise
            log.warning("%s: append failed (%s); listing before trying again",
                        plan.source_id, exc)
            continue
        sent += len(part)
        ledger.put("thread", plan.source_id, state="created", target_id=target_id,
                   appended=held - base + len(part))


def _held_count(plan: ThreadPlan, held: Sequence[tuple[str, str]]) -> int:
    """How many of the expected messages the target holds, checking they are the same."""
    count = min(len(held), len(plan.expected))
    for i in range(count):
        if _same(held[i], plan.expected[i]):
            continue
        raise BackendError(f"{plan.source_id}: the target's message {i} ({held[i][0]}: "
                           f"{held[i][1][:60]!r}) is not the migrated one ({plan.expected[i][0]}"
                           f": {plan.expected[i][1][:60]!r}); was it written by someone else?")
    return count


def _same(held: tuple[str, str], expected: tuple[str, str]) -> bool:
    return held[0] == expected[0] and held[1].strip() == expected[1].strip()


def _verify(plan: ThreadPlan, held: Sequence[tuple[str, str]]) -> Verification:
    expected = plan.expected
    ours = list(held[:len(expected)])
    last_source = expected[-1][1] if expected else ""
    last_target = ours[-1][1] if ours else ""
    ok = len(ours) == len(expected) and all(_same(h, e) for h, e in zip(ours, expected,
                                                                        strict=True))
    note = "" if ok else "messages differ"
    extra = len(held) - len(expected)
    if extra > 0:
        note = (note + "; " if note else "") + f"{extra} later message(s) on the target"
    return Verification(len(expected), len(ours), last_source[:200], last_target[:200], ok,
                        note)
