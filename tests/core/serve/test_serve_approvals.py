"""A served turn whose call waits for a person ends ``awaiting_approval``; served again once
decided, the conversation completes with the call run once (every kind of backend)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge.http import RetryPolicy
from toolbridge.serve import DriverSettings, Transcript, hold
from toolbridge.store import SqliteStore
from toolbridge.testing import ScriptedBackend

FAST = DriverSettings(recovery=RetryPolicy(max_attempts=4, backoff=0.001, max_delay=0.01))
KINDS = {
    "agents-like": {"streams": True, "partial_submit": True},
    "assistants-like": {},
}
SCRIPT = {"turns": [
    {"rounds": [[{"name": "charge", "arguments": {"amount": 2}},
                 {"name": "lookup", "arguments": {"key": "b"}}]],
     "reply": "done {outputs}"},
]}


def make_toolbox(runs: dict[str, int], store: Any) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(store=store)

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        runs[f"lookup:{key}"] = runs.get(f"lookup:{key}", 0) + 1
        return f"value of {key}"

    @box.tool(side_effects=True, needs_approval=True)
    async def charge(amount: int) -> str:
        """Charge an amount."""
        runs["charge"] = runs.get("charge", 0) + 1
        return f"charged {amount}"

    return box


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_turn_ends_awaiting_approval_and_resumes_when_decided(kind: str, tmp_path: Path
                                                                  ) -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs, SqliteStore(tmp_path / "results.db"))
    b = ScriptedBackend(SCRIPT, tools=list(box), **KINDS[kind])

    async def scenario() -> tuple[Transcript, Transcript]:
        first = await hold(box, b, ["go"], FAST)
        assert first.status == "awaiting_approval", first.render()
        assert runs == {"lookup:b": 1}  # the other call ran; the waiting one did not
        assert list(b.accepted.values()) == (  # no invented result for the waiting call
            ["value of b"] if KINDS[kind].get("partial_submit") else [])
        [request] = box.approvals.pending()
        assert request.tool == "charge" and dict(request.arguments) == {"amount": 2}
        other = toolbridge.Toolbox(store=SqliteStore(tmp_path / "results.db"))
        other.approvals.approve(request)  # another toolbox (any process) decides
        resumed = make_toolbox(runs, SqliteStore(tmp_path / "results.db"))
        return first, await hold(resumed, b, None, FAST)

    first, again = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert "charge (call" in str(first.error)
    assert again.status == "completed", again.render()
    assert runs == {"lookup:b": 1, "charge": 1}
    assert again.reply is not None and "charged 2" in again.reply
