"""Serving conversations through a dialect: the `Transcript` a conversation driver records."""

from ._transcript import Transcript, TranscriptEntry

__all__ = ["Transcript", "TranscriptEntry"]
