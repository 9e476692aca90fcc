"""Migrating Assistants workloads: exports read, a plan per target, a report, a ledger.

`read_export` reads export files into a `Workload` (a live endpoint is read by the
Assistants adapter, ``toolbridge_openai_assistants.read_workload``). `migrate` writes it to a
`MigrationTarget` (each target adapter declares one: `toolbridge.plugin.MigratesTo`), keeping a
`Ledger` in the result store's records or a file, and returns a `MigrationReport`.
"""

from __future__ import annotations

from ._engine import migrate
from ._ledger import FileRecords, Ledger
from ._plan import (
    RETIRED_MODELS,
    AgentPlan,
    MigrationTarget,
    ThreadPlan,
    config_hash,
    message_text,
    remapped,
    setting_fates,
)
from ._report import Fate, FateKind, MigrationReport, ThreadOutcome, Verification
from ._workload import EXPORT_VERSION, Workload, read_export

__all__ = [
    "EXPORT_VERSION", "RETIRED_MODELS", "AgentPlan", "Fate", "FateKind", "FileRecords", "Ledger",
    "MigrationReport", "MigrationTarget", "ThreadOutcome", "ThreadPlan", "Verification",
    "Workload", "config_hash", "message_text", "migrate", "read_export", "remapped",
    "setting_fates",
]
