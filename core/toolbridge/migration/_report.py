"""The migration report: every setting, tool, thread and message part with its fate."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["Fate", "FateKind", "MigrationReport", "ThreadOutcome", "Verification"]

FateKind = Literal["carried", "approximated", "dropped", "unknown"]
"""``unknown``: kept as it is, but not known to be right (a model not in the table)."""


@dataclass(frozen=True)
class Fate:
    """What became of one thing, named by the source's ids: ``subject``
    (``asst_1.temperature``, ``asst_1.tools[2]``, ``thread_9.msg_3.content[0].annotations``)
    ``carried``, ``approximated`` (``how``), ``dropped`` (``how`` says why) or ``unknown``."""

    kind: str
    """``setting``, ``tool``, ``tool_resource``, ``thread``, ``message``, ``tool_call`` (a
    run step's) or ``agent`` (the written agent, read back)."""
    subject: str
    fate: FateKind
    how: str = ""


@dataclass
class Verification:
    """One thread compared after the run: messages and last message on both sides."""

    source_messages: int
    target_messages: int
    source_last: str
    target_last: str
    ok: bool
    note: str = ""


@dataclass
class ThreadOutcome:
    """Where one thread went: ``status`` is ``planned`` (dry run), ``created``, ``resumed``
    (continued after an interrupted run), ``recreated`` (an interrupted run's object could
    not be found: made again, the first kept as a possible orphan), ``done`` (finished by
    an earlier run) or ``skipped`` (a run of the thread is unfinished: not migrated)."""

    source_id: str
    target_id: str | None
    status: str
    appended: int = 0
    verification: Verification | None = None


@dataclass
class MigrationReport:
    """The whole run; `to_json` for machines, `table` for the terminal."""

    migration: str
    target: str
    dry_run: bool
    fates: list[Fate] = field(default_factory=list)
    agents: dict[str, str | None] = field(default_factory=dict)
    """Source assistant id -> target agent (id, ``name:version`` or configuration file)."""
    threads: list[ThreadOutcome] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)
    """Source assistant id -> the model its target configuration names."""
    remaps: dict[str, str] = field(default_factory=dict)
    """Retired model -> the model used instead, for every remap applied."""
    possible_orphans: list[str] = field(default_factory=list)
    """Objects an interrupted run may have created that cannot be found again (no list
    call), as the ledger keeps them until they are resolved (``--delete-orphans``)."""
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        fates = Counter(f.fate for f in self.fates)
        verified = [t.verification for t in self.threads if t.verification is not None]
        return {"assistants": len(self.agents), "threads": len(self.threads),
                "carried": fates["carried"], "approximated": fates["approximated"],
                "dropped": fates["dropped"], "unknown": fates["unknown"],
                "remapped_models": len(self.remaps),
                "skipped": sum(t.status == "skipped" for t in self.threads),
                "verified": sum(v.ok for v in verified),
                "mismatched": sum(not v.ok for v in verified),
                "possible_orphans": len(self.possible_orphans)}

    @property
    def ok(self) -> bool:
        """Every thread migrated and verified (or planned, on a dry run), but those skipped
        for an unfinished run (reported, and migrated by a later run)."""
        if self.dry_run:
            return True
        return all(t.verification is not None and t.verification.ok for t in self.threads
                   if t.status != "skipped") and not any(
            f.kind == "agent" and f.fate == "dropped" for f in self.fates)

    def to_dict(self) -> dict[str, Any]:
        return {"migration": self.migration, "target": self.target, "dry_run": self.dry_run,
                "counts": self.counts(), "agents": dict(self.agents),
                "models": dict(self.models),
                "remaps": dict(self.remaps), "possible_orphans": list(self.possible_orphans),
                "notes": list(self.notes), "fates": [asdict(f) for f in self.fates],
                "threads": [asdict(t) for t in self.threads]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def table(self) -> str:
        """The report as aligned text: fates, threads, counts."""
        lines = [f"migration {self.migration!r} -> {self.target}"
                 + (" (dry run: nothing written)" if self.dry_run else "")]
        rows: list[tuple[str, ...]] = [(f.kind, f.subject, f.fate, f.how) for f in self.fates]
        lines += _aligned(("KIND", "SUBJECT", "FATE", "HOW / WHY"), rows)
        lines.append("")
        thread_rows: list[tuple[str, ...]] = []
        for t in self.threads:
            v = t.verification
            check = "-" if v is None else (f"ok {v.source_messages}/{v.target_messages}" if v.ok
                                           else f"MISMATCH {v.source_messages}/"
                                           f"{v.target_messages} {v.note}")
            thread_rows.append((t.source_id, t.target_id or "-", t.status, check))
        lines += _aligned(("THREAD", "TARGET", "STATUS", "VERIFIED (source/target)"),
                          thread_rows)
        for old, new in self.remaps.items():
            lines.append(f"model remapped: {old} -> {new}")
        for orphan in self.possible_orphans:
            lines.append(f"possible orphan: {orphan}")
        lines += [f"note: {n}" for n in self.notes]
        lines.append(" ".join(f"{k}={v}" for k, v in self.counts().items()))
        return "\n".join(lines)


def _aligned(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    widths = [min(max(len(str(r[i])) for r in [header, *rows]), 48)
              for i in range(len(header) - 1)]
    return ["  ".join([*(str(c).ljust(w) for c, w in zip(r[:-1], widths, strict=True)),
                       str(r[-1])]).rstrip() for r in [header, *rows]]
