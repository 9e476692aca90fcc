"""Serving conversations through any dialect: the driver, its settings, and the `Transcript`.

`aconverse` holds a scripted conversation (user messages in, transcript out) and `aserve`
answers what an existing conversation waits for, on any dialect that gives a
`toolbridge.plugin.Backend`; `Worker` serves many conversations of one backend at once.
`ScriptedBackend` is the in-memory double of the Backend seam.
"""

from ._settings import AnswerReport, DriverSettings
from ._transcript import EntryKind, Status, Transcript, TranscriptEntry

__all__ = ["AnswerReport", "DriverSettings", "EntryKind", "Status", "Transcript",
           "TranscriptEntry"]
