"""The backends' own approval items as the emulators script them, and what a backend received
as their answers (counted from its journal): shared by the driver's and the fleet's tests."""

from __future__ import annotations

from typing import Any

DELETE = {"name": "delete_user", "arguments": {"id": 7},
          "approval": {"server": "crm", "message": "Delete user 7?", "output": "user 7 deleted"}}
ALONE = {"turns": [{"rounds": [[DELETE]], "reply": "done {outputs}"}]}
MIXED = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": "b"}}, DELETE]],
                    "reply": "done {outputs}"}]}


def answers(emu: Any) -> list[dict[str, Any]]:
    """Every approval answer the backend received (events or input items)."""
    found = []
    for entry in emu.journal.entries("POST"):
        body = entry.body if isinstance(entry.body, dict) else {}
        for item in list(body.get("events") or []) + list(
                body.get("input") if isinstance(body.get("input"), list) else []):
            if isinstance(item, dict) and item.get("type") in (
                    "agent.session.input.mcp_approval_request_result", "mcp_approval_response"):
                found.append(item)
    return found
