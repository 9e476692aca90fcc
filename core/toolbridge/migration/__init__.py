"""Migrating Assistants workloads: exports read, a plan per target, a report, a ledger.

`read_export` reads export files into a `Workload` (a live endpoint is read by the
Assistants adapter, ``toolbridge_openai_assistants.read_workload``). `migrate` writes it to a
`MigrationTarget` (each target adapter declares one: `toolbridge.plugin.MigratesTo`; what it
builds its `AgentPlan` and `ThreadPlan` with is in `toolbridge.migration.targets`), keeping a
`Ledger` in the result store's records or a file (`FileRecords`), and returns a
`MigrationReport`. `orphan_lines` and `delete_orphans` resolve what an interrupted run left.
"""

from __future__ import annotations

from .._lazy import moved_attributes as _moved_attributes
from ._engine import delete_orphans, migrate, orphan_lines
from ._ledger import FileRecords, Ledger
from ._plan import AgentPlan, MigrationTarget, ThreadPlan
from ._report import Fate, FateKind, MigrationReport, ThreadOutcome, Verification
from ._workload import Workload, read_export

__all__ = [
    "AgentPlan", "Fate", "FateKind", "FileRecords", "Ledger", "MigrationReport",
    "MigrationTarget", "ThreadOutcome", "ThreadPlan", "Verification", "Workload",
    "delete_orphans", "migrate", "orphan_lines", "read_export",
]

# Deprecated for one release: what target adapters build on moved to a submodule of its own.
_MOVED: dict[str, str] = {
    name: f"toolbridge.migration.targets.{name}"
    for name in ("CURRENT_MODELS", "DEFAULT_MODEL", "EXPORT_VERSION", "RETIRED_MODELS",
                 "UNFINISHED_RUNS", "ModelChoice", "config_hash", "message_fates",
                 "message_text", "remapped", "resolve_model", "setting_fates",
                 "thread_metadata")
}

__getattr__ = _moved_attributes(__name__, _MOVED)
