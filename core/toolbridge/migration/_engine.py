"""`migrate`: a `Workload` onto a `MigrationTarget`, resumable through a `Ledger`.

Order: every assistant, then one thread after another (create, append oldest first, verify).
Before each create the intent is in the ledger; a run that finds an intent without an id
asks the target (`find_agent` / `find_thread`) before creating again, and where the target
cannot list, keeps the possible orphan in the ledger (reported by every later run until
`delete_orphans` resolves it). Before each append the target's items are listed,
so items that reached it before a crash (or whose reply was lost) are not sent twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import BackendError, UsageError
from ._ledger import Ledger
from ._models import ModelChoice, resolve_model
from ._plan import AgentPlan, MigrationTarget, ThreadPlan
from ._report import Fate, MigrationReport, ThreadOutcome, Verification
from ._workload import Workload

__all__ = ["delete_orphans", "migrate", "orphan_lines"]

log = logging.getLogger("toolbridge.migration")

Progress = Callable[[int, int], None]
"""Called with (threads done, threads in all) after each thread."""

APPEND_ATTEMPTS = 3
"""Appends tried per chunk after unclear failures (each preceded by a listing)."""


def migrate(workload: Workload, target: MigrationTarget, ledger: Ledger, *,
            dry_run: bool = False, remap: Mapping[str, str] | None = None,
            allow_unused_map: bool = False, progress: Progress | None = None
            ) -> MigrationReport:
    """Migrate ``workload`` to ``target``; returns the report (also for a dry run, which
    plans and writes nothing). Safe to run again: what the ledger says is done is skipped,
    what was begun is continued. Before anything is written, every ``remap`` entry must
    match an assistant's model (else `UsageError`; a warning with ``allow_unused_map``)
    and the target must serve every model (`MigrationTarget.missing_models`)."""
    report = MigrationReport(ledger.migration, target.name, dry_run)
    remap = remap or {}
    plans: dict[str, AgentPlan] = {}
    used: set[str] = set()
    for assistant in workload.assistants:
        agent_plan, choice = _plan_agent(assistant, target, remap, workload, report)
        plans[agent_plan.source_id] = agent_plan
        if choice.override is not None:
            used.add(choice.override)
    _check_unused(remap, used, workload, allow_unused_map, report)
    if not dry_run:
        models = sorted({choice_model for choice_model in report.models.values()})
        missing = target.missing_models(models)
        if missing:
            raise UsageError(f"{target.name}: no deployment serves {', '.join(missing)}; "
                             "deploy it, or map each to a deployment with --model-map "
                             "OLD=DEPLOYMENT (nothing was written)")
    for source_id, agent_plan in plans.items():
        report.agents[source_id] = None if dry_run else _agent(agent_plan, target, ledger,
                                                               report)
        if not dry_run:
            report.fates.append(_agent_check(agent_plan, target, str(report.agents[source_id])))
    total = len(workload.threads)
    for done, thread in enumerate(workload.threads, 1):
        tid = str(thread["id"])
        assistant_id = workload.assistant_of(thread)
        agent = plans.get(assistant_id) if assistant_id else None
        if tid in workload.unfinished:
            why = (f"{workload.unfinished[tid]}: not migrated (answer or cancel it where it "
                   "lives, or read the source with --wait-runs; then run again)")
            log.warning("%s: %s", tid, why)
            report.fates.append(Fate("thread", tid, "dropped", why))
            report.threads.append(ThreadOutcome(tid, None, "skipped"))
            if progress is not None:
                progress(done, total)
            continue
        plan = target.plan_thread(thread, workload.thread_history(tid), agent)
        plan.fates += [Fate("run", f"{tid}.{run['id']}", "dropped",
                            f"{run.get('status')} in the export (it cannot end now): its "
                            "pending calls are not migrated, having no outputs")
                       for run in workload.unfinished_runs(tid)]
        if tid in workload.order_notes:
            plan.fates.append(Fate("thread", f"{tid}.order", "approximated",
                                   workload.order_notes[tid]))
        report.fates += plan.fates
        if dry_run:
            report.threads.append(ThreadOutcome(plan.source_id, None, "planned"))
        else:
            agent_id = report.agents.get(agent.source_id) if agent else None
            report.threads.append(_thread(plan, agent_id, target, ledger))
        if progress is not None:
            progress(done, total)
    report.possible_orphans = orphan_lines(ledger)
    return report


def orphan_lines(ledger: Ledger) -> list[str]:
    """The possible orphans the ledger keeps, one line each."""
    return [f"{tid}: {entry.get('count', 1)} {entry.get('target')} object(s) made by an "
            f"interrupted run may exist, marked metadata.source_thread_id={tid} (they cannot "
            "be listed: delete them with --delete-orphans ID); the thread went to "
            f"{entry.get('replaced_by') or '-'}"
            for tid, entry in ledger.entries("orphan").items()]


def _check_unused(remap: Mapping[str, str], used: set[str], workload: Workload,
                  allow: bool, report: MigrationReport) -> None:
    unused = sorted(set(remap) - used)
    if not unused:
        return
    models = sorted({str(a.get("model")) for a in workload.assistants})
    message = (f"--model-map {', '.join(unused)}: matches no assistant's model (the "
               f"assistants name {', '.join(models) or 'none'})")
    if not allow:
        raise UsageError(message + "; fix the name, or pass --allow-unused-map")
    log.warning("%s", message)
    report.notes.append(message)


def _plan_agent(assistant: Mapping[str, Any], target: MigrationTarget,
                remap: Mapping[str, str], workload: Workload, report: MigrationReport
                ) -> tuple[AgentPlan, ModelChoice]:
    model = assistant.get("model")
    if not isinstance(model, str) or not model:
        raise UsageError(f"assistant {assistant.get('id')}: no 'model'")
    choice = resolve_model(model, remap, workload.deployments)
    subject = f"{assistant['id']}.model"
    if choice.fate == "remapped":
        report.remaps[model] = choice.model
        report.fates.append(Fate("setting", subject, "approximated", choice.how))
    elif choice.fate == "unknown":
        log.warning("%s: %s", subject, choice.how)
        report.fates.append(Fate("setting", subject, "unknown", choice.how))
    else:
        report.fates.append(Fate("setting", subject, "carried", choice.how))
    report.models[str(assistant["id"])] = choice.model
    plan = target.plan_agent(assistant, choice.model)
    report.fates += plan.fates
    return plan, choice


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


def _agent_check(plan: AgentPlan, target: MigrationTarget, agent_id: str) -> Fate:
    """Whether the target's agent (or configuration file) holds the plan, read back."""
    missing = _differences(plan.body, target.held_agent(plan, agent_id))
    subject = f"{plan.source_id}.agent"
    if missing:
        log.warning("%s: %s does not hold %s", subject, agent_id, ", ".join(missing))
        return Fate("agent", subject, "dropped", f"{agent_id} does not hold what was "
                    f"written: {', '.join(missing)}")
    return Fate("agent", subject, "carried", f"{agent_id} holds the configuration, read "
                "back: continue its conversations with it")


def _thread(plan: ThreadPlan, agent_id: str | None, target: MigrationTarget, ledger: Ledger
            ) -> ThreadOutcome:
    entry = ledger.get("thread", plan.source_id)
    state = entry.get("state")
    target_id = entry.get("target_id")
    status = "done" if state == "done" else "resumed" if state else "created"
    if target_id is None:
        orphaned = False
        if state == "creating":
            target_id = target.find_thread(plan)
            orphaned = target_id is None and not target.lists_threads
        if orphaned:  # kept before the new create: a kill during it loses nothing
            status = "recreated"
            earlier = ledger.get("orphan", plan.source_id)
            orphan = ledger.put("orphan", plan.source_id, target=target.name,
                                count=int(earlier.get("count", 0)) + 1)
        if target_id is None:
            ledger.put("thread", plan.source_id, state="creating")
            target_id = target.create_thread(plan, agent_id)
            ledger.put("thread", plan.source_id, state="created", target_id=target_id)
        if orphaned:
            ledger.put("orphan", plan.source_id, **orphan, replaced_by=target_id)
    appended = 0
    if state == "done":
        held = target.held(target_id)
    else:
        appended, held = _append(plan, target_id, target, ledger)
        ledger.put("thread", plan.source_id, state="done", target_id=target_id)
    return ThreadOutcome(plan.source_id, target_id, status, appended, _verify(plan, held))


def delete_orphans(target: MigrationTarget, ledger: Ledger, found: Sequence[str]
                   ) -> list[str]:
    """Remove possible orphans you ``found`` on the target (their ids: the target cannot
    list them) from the target and the ledger. The target deletes each only if it is empty
    and its metadata names a thread the ledger holds an orphan of; returns one line per id
    (deleted, or why it was kept)."""
    lines = []
    for target_id in dict.fromkeys(found):
        orphans = ledger.entries("orphan")
        try:
            thread, why = target.discard(target_id, set(orphans))
        except BackendError as exc:
            lines.append(f"{target_id}: kept: {exc}")
            continue
        if why:
            lines.append(f"{target_id}: kept: {why}")
            continue
        left = int(orphans[thread].get("count", 1)) - 1
        if left > 0:
            ledger.put("orphan", thread, **{**orphans[thread], "count": left})
        else:
            ledger.records.delete(ledger.namespace, f"orphan/{thread}")
        lines.append(f"{target_id} (thread {thread}): deleted")
    return lines


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
    note = "" if ok else ("the same messages in another order"
                          if sorted(ours) == sorted(expected) else "messages differ")
    extra = len(held) - len(expected)
    if extra > 0:
        note = (note + "; " if note else "") + f"{extra} later message(s) on the target"
    return Verification(len(expected), len(ours), last_source[:200], last_target[:200], ok,
                        note)


def _differences(wanted: Any, held: Any, path: str = "") -> list[str]:
    """Where ``held`` lacks or changes what ``wanted`` sets (fields the service adds are
    not differences): one dotted path each."""
    if isinstance(wanted, Mapping):
        if not isinstance(held, Mapping):
            return [path or "<agent>"]
        return [d for key, value in wanted.items() for d in _differences(
            value, held.get(key), f"{path}.{key}" if path else str(key))]
    if isinstance(wanted, list):
        if not isinstance(held, list) or len(held) != len(wanted):
            return [path]
        return [d for i, (w, h) in enumerate(zip(wanted, held, strict=True))
                for d in _differences(w, h, f"{path}[{i}]")]
    return [] if wanted == held else [path]
