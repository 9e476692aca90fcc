"""What a migration target (or source) adapter builds its plans with: the model tables and
their resolution, the fate helpers, the thread metadata it writes, the run statuses that hold a
thread back, and the export layout version read.

A target adapter declares a `toolbridge.migration.MigrationTarget` (`toolbridge.plugin.MigratesTo`)
whose plans use these; an application migrating calls `toolbridge.migration.migrate` instead.
"""

from __future__ import annotations

from ._models import (
    CURRENT_MODELS,
    DEFAULT_MODEL,
    RETIRED_MODELS,
    ModelChoice,
    remapped,
    resolve_model,
)
from ._plan import config_hash, message_fates, message_text, setting_fates, thread_metadata
from ._workload import EXPORT_VERSION, UNFINISHED_RUNS

__all__ = [
    "CURRENT_MODELS", "DEFAULT_MODEL", "EXPORT_VERSION", "RETIRED_MODELS", "UNFINISHED_RUNS",
    "ModelChoice", "config_hash", "message_fates", "message_text", "remapped", "resolve_model",
    "setting_fates", "thread_metadata",
]
