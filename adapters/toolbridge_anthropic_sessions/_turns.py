"""A turn read from session events (pure): what the serve backend reports for it.

The same reading serves the live stream and the events list after a reconnect or a failure,
so a step is the same whichever way its events arrived.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge.plugin import Step

from .translate import pending_events

__all__ = ["reply_of", "since_message", "step_of"]

_ENDS = {"retries_exhausted": "failed", "refusal": "failed", "budget_reached": "incomplete"}


def since_message(events: Sequence[Mapping[str, Any]], message_id: str | None = None
                  ) -> list[Mapping[str, Any]] | None:
    """The events of the turn the ``user.message`` ``message_id`` began (the latest user
    message's when ``None``), or ``None`` when that message is not among them."""
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.get("type") == "user.message" and (
                message_id is None or event.get("id") == message_id):
            return list(events[index:])
    return None


def reply_of(events: Sequence[Mapping[str, Any]]) -> str:
    """The text of the turn's last ``agent.message``."""
    for event in reversed(events):
        if event.get("type") == "agent.message":
            return "".join(str(b.get("text", "")) for b in event.get("content") or []
                           if isinstance(b, Mapping) and b.get("type") == "text")
    return ""


def step_of(events: Sequence[Mapping[str, Any]], session_id: str, *, fresh: bool = False
            ) -> tuple[str, Step] | None:
    """The step a turn's events end on, with the id of the event that shows it; ``None``
    while the session runs."""
    last = next((e for e in reversed(events) if e.get("type") in (
        "session.status_idle", "session.status_terminated", "session.status_running",
        "session.deleted")), None)
    if last is None or last.get("type") == "session.status_running":
        return None
    marker = str(last.get("id"))
    if last.get("type") != "session.status_idle":
        return marker, Step("failed", error=f"the session ended ({last.get('type')})",
                            detail={"id": session_id})
    stop = last.get("stop_reason") if isinstance(last.get("stop_reason"), Mapping) else {}
    kind = str(stop.get("type"))
    if kind == "requires_action":
        payload = {"session_id": session_id, "data": [*pending_events({"data": list(events)}),
                                                       dict(last)]}
        return marker, Step("requires_action", payload=payload, fresh=fresh)
    if kind == "end_turn":
        return marker, Step("completed", reply=reply_of(events), detail={"id": session_id})
    error = next((e.get("error") for e in reversed(events)
                  if e.get("type") == "session.error"), None)
    message = error.get("message") if isinstance(error, Mapping) else None
    return marker, Step(_ENDS.get(kind, "failed"),  # type: ignore[arg-type]
                        error=f"the session stopped: {kind}" + (f" ({message})" if message
                                                                else ""),
                        detail={"id": session_id, "stop_reason": dict(stop)})
