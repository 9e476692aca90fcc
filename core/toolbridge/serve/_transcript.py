"""`Transcript`: a readable record of a conversation served through a dialect."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Transcript", "TranscriptEntry"]

EntryKind = Literal["tools", "user", "call", "result", "reply", "note"]


@dataclass(frozen=True)
class TranscriptEntry:
    """One step: the tool list, a user message, a pending call, a result, the final reply."""

    kind: EntryKind
    text: str
    data: Any = None
    """The wire payload behind the step, when there is one."""


@dataclass
class Transcript:
    """What happened on one backend, in order."""

    dialect: str
    entries: list[TranscriptEntry] = field(default_factory=list)

    def add(self, kind: EntryKind, text: str, data: Any = None) -> None:
        self.entries.append(TranscriptEntry(kind, text, data))

    def of_kind(self, kind: EntryKind) -> list[TranscriptEntry]:
        return [e for e in self.entries if e.kind == kind]

    @property
    def reply(self) -> str:
        """The last reply, or empty."""
        replies = self.of_kind("reply")
        return replies[-1].text if replies else ""

    def render(self, *, show_data: bool = False) -> str:
        """Plain text, one line per step (with the wire payloads when ``show_data``)."""
        labels = {"tools": "tools ", "user": "user  ", "call": "call  ", "result": "result",
                  "reply": "reply ", "note": "note  "}
        lines = [f"== {self.dialect}"]
        for e in self.entries:
            lines.append(f"  {labels[e.kind]} {e.text}")
            if show_data and e.data is not None:
                dumped = json.dumps(e.data, indent=2, ensure_ascii=False)
                lines.extend("           " + line for line in dumped.splitlines())
        return "\n".join(lines)
