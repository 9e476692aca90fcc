"""`Transcript`: what happened in one conversation served through a dialect, and how it ended."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import BackendError, ServeError

__all__ = ["EntryKind", "Status", "Transcript", "TranscriptEntry"]

EntryKind = Literal["tools", "user", "call", "result", "reply", "note"]
"""The kinds of `TranscriptEntry`: the tools rendered, a user message, a call, its result, the
model's reply, a note (recoveries, the final status)."""
Status = Literal["in_progress", "completed", "failed", "expired", "cancelled", "incomplete",
                 "awaiting_approval"]
"""``completed``: every turn ended with a reply. ``failed``: the backend failed it or it could
not go on (`Transcript.error` says why). ``expired``, ``cancelled``: the backend's own ends.
``incomplete``: it stopped short (a Responses ``incomplete`` response, a round bound, actions
left to the caller)."""


@dataclass(frozen=True)
class TranscriptEntry:
    """One step: the tool list, a user message, a pending call, a result, a reply, a note."""

    kind: EntryKind
    text: str
    data: Any = None
    """The wire payload behind the step, when there is one."""
    call: str = ""
    """The id of the call a ``call``, ``result`` or per-call ``note`` entry is about."""
    tool: str = ""
    """That call's tool."""

    def line(self) -> str:
        """The entry as `Transcript.render` shows it (naming its call, when it has one)."""
        if not self.call and not self.tool:
            return self.text
        if self.kind == "call":
            return f"{self.text} [{self.call}]"
        return f"{self.tool} [{self.call}]: {self.text}"


@dataclass(eq=False)
class Transcript:
    """What happened on one backend, in order, and the conversation's `status`.

    With ``keep=False`` (a worker serving many conversations) no entries are kept: only the
    status, the error, the last reply and the count of answered calls.
    """

    dialect: str
    entries: list[TranscriptEntry] = field(default_factory=list)
    conversation: str = ""
    """The session, thread or CES session served."""
    status: Status = "in_progress"
    error: BackendError | None = None
    """Why the conversation did not complete (the backend's error, typed)."""
    answered: int = 0
    """Results sent (one per ``result`` entry, the error results of bad calls included)."""
    keep: bool = True
    last_reply: str = ""

    def add(self, kind: EntryKind, text: str, data: Any = None, *, call: str = "",
            tool: str = "") -> None:
        if kind == "reply":
            self.last_reply = text
        elif kind == "result":
            self.answered += 1
        if self.keep:
            self.entries.append(TranscriptEntry(kind, text, data, call, tool))

    def of_kind(self, kind: EntryKind) -> list[TranscriptEntry]:
        return [e for e in self.entries if e.kind == kind]

    @property
    def reply(self) -> str:
        """The last reply, or empty."""
        return self.last_reply

    @property
    def ok(self) -> bool:
        """Whether the conversation completed."""
        return self.status == "completed"

    def end(self, status: Status, error: BackendError | None = None) -> None:
        """Record how the conversation ended (the first end recorded wins)."""
        if self.status == "in_progress":
            self.status, self.error = status, error

    def raise_for_status(self) -> Transcript:
        """This transcript if it completed; else raise `ServeError` (its ``transcript`` is
        this one; a typed error such as `ReplyLostError` is raised as it is)."""
        if self.ok:
            return self
        error = self.error
        if isinstance(error, ServeError):
            if error.transcript is None:
                error.transcript = self
            raise error
        raise ServeError(f"{self.dialect}: conversation {self.conversation or ''} ended "
                         f"{self.status}" + (f": {error}" if error else ""),
                         status=getattr(error, "status", None), transcript=self) from error

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible: status, error, reply, and every entry with its data."""
        error = None if self.error is None else {
            "type": type(self.error).__name__, "message": str(self.error),
            "status": self.error.status}
        return {"dialect": self.dialect, "conversation": self.conversation,
                "status": self.status, "error": error, "reply": self.reply,
                "answered": self.answered,
                "entries": [{"kind": e.kind, "text": e.text, "data": e.data,
                             **({"call": e.call, "tool": e.tool} if e.call or e.tool else {})}
                            for e in self.entries]}

    def render(self, *, show_data: bool = False) -> str:
        """Plain text, one line per step (with the wire payloads when ``show_data``), ending
        with the status (and the error when it did not complete)."""
        labels = {"tools": "tools ", "user": "user  ", "call": "call  ", "result": "result",
                  "reply": "reply ", "note": "note  "}
        lines = [f"== {self.dialect}"]
        for e in self.entries:
            lines.append(f"  {labels[e.kind]} {e.line()}")
            if show_data and e.data is not None:
                dumped = json.dumps(e.data, indent=2, ensure_ascii=False, default=str)
                lines.extend("           " + line for line in dumped.splitlines())
        if not self.keep and self.reply:
            lines.append(f"  reply  {self.reply}")
        where = f" ({self.conversation})" if self.conversation else ""
        ending = f"{self.status}{where}"
        if self.error is not None:
            ending += f": {type(self.error).__name__}: {self.error}"
        lines.append(f"  status {ending}")
        return "\n".join(lines)
