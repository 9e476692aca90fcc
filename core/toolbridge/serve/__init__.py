"""Serving conversations through any dialect: the driver, its settings, and the `Transcript`.

`aconverse` holds a scripted conversation (user messages in, transcript out) and
`aanswer_pending` answers what an existing conversation waits for, on any dialect that gives a
`toolbridge.plugin.Backend` (`hold` drives a backend you made yourself); `Worker` serves many
conversations of one backend at once. The in-memory double of the Backend seam is
`toolbridge.testing.ScriptedBackend`. Checkpoints live in the result store's records under
`CHECKPOINTS`. `refuse_late` and `tool_timeout` are the deadline rule the driver applies (the
Temporal fleet applies it too); `message_key` and `results_key` the one key rule (what a
backend's idempotency keys derive from); `BackendItems` settles a backend's own approval
items through the store (the driver's and the fleet's one way).
"""

from .._lazy import moved_attributes as _moved_attributes
from ._approvals import BackendItems
from ._checkpoints import NAMESPACE as CHECKPOINTS
from ._deadline import refuse_late, tool_timeout
from ._driver import aanswer_pending, aconverse, answer_pending, converse, hold
from ._keys import message_key, results_key
from ._settings import DEFAULT_RECOVERY, AnswerReport, DriverSettings
from ._transcript import EntryKind, Status, Transcript, TranscriptEntry
from ._worker import Job, Worker

__all__ = [
    "CHECKPOINTS", "DEFAULT_RECOVERY", "AnswerReport", "BackendItems", "DriverSettings",
    "EntryKind", "Job",
    "Status", "Transcript", "TranscriptEntry", "Worker", "aanswer_pending", "aconverse",
    "answer_pending", "converse", "hold", "message_key", "refuse_late", "results_key",
    "tool_timeout",
]

# Deprecated for one release: the old names, with a warning naming the new path.
_MOVED: dict[str, str] = {
    "serve": "toolbridge.serve.answer_pending",
    "aserve": "toolbridge.serve.aanswer_pending",
    **{name: f"toolbridge.testing.{name}"
       for name in ("MemoryDialect", "ScriptedBackend", "ScriptedConnection", "SeamFault")},
}

__getattr__ = _moved_attributes(__name__, _MOVED)
