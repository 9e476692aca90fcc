"""Serving conversations through any dialect: the driver, its settings, and the `Transcript`.

`aconverse` holds a scripted conversation (user messages in, transcript out) and `aserve`
answers what an existing conversation waits for, on any dialect that gives a
`toolbridge.plugin.Backend` (`hold` drives a backend you made yourself); `Worker` serves many
conversations of one backend at once. `ScriptedBackend` (with `ScriptedConnection`,
`SeamFault` and its wire, `MemoryDialect`) is the in-memory double of the Backend seam.
Checkpoints live in the result store's records under `CHECKPOINTS`. `refuse_late` and
`tool_timeout` are the deadline rule the driver applies (the Temporal fleet applies it too);
`message_key` and `results_key` the one key rule (what a backend's idempotency keys derive
from).
"""

from ._checkpoints import NAMESPACE as CHECKPOINTS
from ._deadline import refuse_late, tool_timeout
from ._double import MemoryDialect, ScriptedBackend, ScriptedConnection, SeamFault
from ._driver import aconverse, aserve, converse, hold, serve
from ._keys import message_key, results_key
from ._settings import DEFAULT_RECOVERY, AnswerReport, DriverSettings
from ._transcript import EntryKind, Status, Transcript, TranscriptEntry
from ._worker import Job, Worker

__all__ = [
    "CHECKPOINTS", "DEFAULT_RECOVERY", "AnswerReport", "DriverSettings", "EntryKind", "Job",
    "MemoryDialect", "ScriptedBackend", "ScriptedConnection", "SeamFault", "Status",
    "Transcript", "TranscriptEntry", "Worker", "aconverse", "aserve", "converse", "hold",
    "message_key", "refuse_late", "results_key", "serve", "tool_timeout",
]
