"""Approvals in the fleet: a call activity whose call waits for a person makes the workflow
wait (``awaiting_approval``) for its ``approval`` signal, then answers the call again: with
the signalled decision, or with one taken elsewhere (``toolbox.approvals``). The backends' own
approval items (Agents, Responses) wait the same way, under their request ids, and their
answer reaches the backend once (counted from the emulator's journal)."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import fleet_toolbox
import pytest
from approval_items_support import ALONE, MIXED, answers
from temporalio.client import Client

import toolbridge
from toolbridge import ToolContext
from toolbridge.testing import emulated_options, emulator
from toolbridge_temporal import FleetSettings, Outcome, Progress, serve, worker

SCRIPT = {"turns": [{"rounds": [
    [{"name": "charge", "arguments": {"amount": 3}}, {"name": "lookup", "arguments": {"key": "b"}}],
], "reply": "done {outputs}"}]}
FAST = FleetSettings(heartbeat_timeout=2.0, task_timeout=2.0, recovery_backoff=0.05,
                     recovery_max_delay=0.2)
DIALECT = "openai-agents"


def approving_toolbox(store: str) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(store=store)

    @box.tool
    def lookup(key: str, context: ToolContext) -> str:
        """Look a key up."""
        fleet_toolbox.write("lookup", context.call_id)
        return f"value of {key}"

    @box.tool(side_effects=True, needs_approval=True)
    def charge(amount: int, context: ToolContext) -> str:
        """Charge an amount."""
        fleet_toolbox.write("charge", context.call_id)
        return f"charged {amount}"

    return box


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ledger"
    monkeypatch.setenv("TOOLBRIDGE_FLEET_LEDGER", str(path))
    return path


async def _hold(temporal: Client, box: toolbridge.Toolbox, decide: Any, *,
                dialect: str = DIALECT, script: dict[str, Any] = SCRIPT,
                message: str = "go") -> tuple[Outcome, list[Any]]:
    """Hold a conversation until one request waits (``awaiting_approval``, nothing run or
    answered for it), let ``decide`` decide it; the outcome and the approval answers the
    backend received."""
    queue = f"q-{uuid.uuid4().hex}"
    with emulator(dialect, script=script) as emu:
        given = emulated_options(dialect, emu.base_url).model_dump(
            mode="json", exclude_unset=True, exclude={"api_key"})
        running, activities = worker(temporal, queue, box,
                                     dialect_options={dialect: {"api_key": "emulator"}})
        async with running:
            handle = await serve(temporal, dialect, messages=[message], options=given,
                                 task_queue=queue, settings=FAST)
            for _ in range(600):
                progress = await handle.query("progress", result_type=Progress)
                if progress.status == "awaiting_approval":
                    break
                await asyncio.sleep(0.05)
            assert progress.status == "awaiting_approval", progress
            [request] = box.approvals.pending()
            assert fleet_toolbox.entries("charge") == [] and answers(emu) == []  # waiting
            await decide(handle, box, request)
            outcome = await asyncio.wait_for(handle.result(), 60)
            sent = answers(emu)
        await activities.aclose()
    return outcome, sent


async def test_the_signal_carries_the_decision(temporal: Client, ledger: Path,
                                               tmp_path: Path) -> None:
    box = approving_toolbox(f"sqlite:///{tmp_path / 'store.db'}")

    async def approve(handle: Any, box: toolbridge.Toolbox, request: Any) -> None:
        await handle.signal("approval", args=[request.key.call_id, {"kind": "approve"}])

    outcome, _ = await _hold(temporal, box, approve)
    assert outcome.status == "completed", outcome
    assert "charged 3" in outcome.replies[0], outcome.replies
    assert len(fleet_toolbox.entries("charge")) == 1 and len(fleet_toolbox.entries("lookup")) == 1


async def test_a_decision_taken_elsewhere_then_signalled(temporal: Client, ledger: Path,
                                                         tmp_path: Path) -> None:
    box = approving_toolbox(f"sqlite:///{tmp_path / 'store.db'}")

    async def deny(handle: Any, box: toolbridge.Toolbox, request: Any) -> None:
        box.approvals.deny(request, "charges need a ticket")
        await handle.signal("approval", args=[request.key.call_id])

    outcome, _ = await _hold(temporal, box, deny)
    assert outcome.status == "completed", outcome
    assert "charges need a ticket" in outcome.replies[0], outcome.replies
    assert fleet_toolbox.entries("charge") == []


# ---------------------------------------------------------------- the backends' own items
@pytest.mark.parametrize("dialect", ["openai-agents", "openai-responses"])
async def test_a_backend_approval_item_waits_for_its_signal(
        temporal: Client, ledger: Path, tmp_path: Path, dialect: str) -> None:
    box = approving_toolbox(f"sqlite:///{tmp_path / 'store.db'}")

    async def approve(handle: Any, box: toolbridge.Toolbox, request: Any) -> None:
        assert (request.origin, request.tool) == ("backend", "delete_user")
        await handle.signal("approval", args=[request.key.call_id, {"kind": "approve",
                                                                    "by": "ana"}])

    outcome, sent = await _hold(temporal, box, approve, dialect=dialect, script=ALONE,
                                message="remove user 7")
    assert box.approvals.pending() == []
    assert outcome.status == "completed", outcome
    assert len(sent) == 1 and json.dumps(sent).count("approve") == 1, sent
    assert box.approvals.pending(decided=True) == []  # consumed: answered once


async def test_a_backend_approval_denied_elsewhere_then_signalled(
        temporal: Client, ledger: Path, tmp_path: Path) -> None:
    box = approving_toolbox(f"sqlite:///{tmp_path / 'store.db'}")

    async def deny(handle: Any, box: toolbridge.Toolbox, request: Any) -> None:
        assert (request.origin, request.tool) == ("backend", "delete_user")
        box.approvals.deny(request, "users are deleted by the admin team")
        await handle.signal("approval", args=[request.key.call_id])

    outcome, sent = await _hold(temporal, box, deny, dialect="openai-responses", script=ALONE,
                                message="remove user 7")
    assert outcome.status == "completed", outcome
    [answer] = sent
    assert answer["approve"] is False and answer["reason"] == "users are deleted by the admin team"
    assert "user 7 deleted" not in outcome.replies[0]


async def test_a_step_with_a_call_and_an_approval_item_answers_the_call_once(
        temporal: Client, ledger: Path, tmp_path: Path) -> None:
    box = approving_toolbox(f"sqlite:///{tmp_path / 'store.db'}")

    async def approve(handle: Any, box: toolbridge.Toolbox, request: Any) -> None:
        assert request.origin == "backend"
        assert len(fleet_toolbox.entries("lookup")) == 1  # the function call was answered
        await handle.signal("approval", args=[request.key.call_id, {"kind": "approve"}])

    outcome, sent = await _hold(temporal, box, approve, script=MIXED, message="remove user 7")
    assert outcome.status == "completed", outcome
    assert len(sent) == 1 and len(fleet_toolbox.entries("lookup")) == 1
    assert "value of b" in outcome.replies[0] and "user 7 deleted" in outcome.replies[0]
