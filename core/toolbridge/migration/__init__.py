"""Migrating Assistants workloads: exports read, a plan per target, a report, a ledger.

`read_export` reads export files into a `Workload` (a live endpoint is read by the
Assistants adapter, ``toolbridge_openai_assistants.read_workload``). `migrate` writes it to a
`MigrationTarget` (each target adapter declares one: `toolbridge.plugin.MigratesTo`), keeping a
`Ledger` in the result store's records or a file, and returns a `MigrationReport`.
"""

from __future__ import annotations

from ._engine import delete_orphans, migrate, orphan_lines
from ._ledger import FileRecords, Ledger
from ._models import (
    CURRENT_MODELS,
    DEFAULT_MODEL,
    RETIRED_MODELS,
    ModelChoice,
    remapped,
    resolve_model,
)
from ._plan import (
    AgentPlan,
    MigrationTarget,
    ThreadPlan,
    config_hash,
    message_fates,
    message_text,
    setting_fates,
    thread_metadata,
)
from ._report import Fate, FateKind, MigrationReport, ThreadOutcome, Verification
from ._workload import EXPORT_VERSION, UNFINISHED_RUNS, Workload, read_export

__all__ = [
    "CURRENT_MODELS", "DEFAULT_MODEL", "EXPORT_VERSION", "RETIRED_MODELS", "UNFINISHED_RUNS",
    "AgentPlan", "Fate", "FateKind", "FileRecords", "Ledger", "MigrationReport", "MigrationTarget",
    "ModelChoice", "ThreadOutcome", "ThreadPlan", "Verification", "Workload", "config_hash",
    "delete_orphans", "message_fates", "message_text", "migrate", "orphan_lines",
    "read_export", "remapped", "resolve_model", "setting_fates", "thread_metadata",
]
