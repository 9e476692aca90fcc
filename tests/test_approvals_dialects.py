"""Approvals end to end on every installed dialect, through its emulator and the one serve
driver: the turn ends ``awaiting_approval`` with no result sent for the waiting call (counted
from the emulator's journal), is decided from another toolbox, and served again completes
with the call run once. Assistants runs expire: what then happens is tested too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge.plugin import capabilities
from toolbridge.serve import aanswer_pending, aconverse
from toolbridge.testing import emulated_options, emulator, installed_dialects

SCRIPT = {"turns": [{"rounds": [
    [{"name": "charge", "arguments": {"amount": 3}}, {"name": "lookup", "arguments": {"key": "b"}}],
], "reply": "done {outputs}"}]}
WAITING = [d for d in installed_dialects() if capabilities().serving(d).waits]


def toolbox(store: str, runs: list[str], **options: Any) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(store=store, **options)

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        runs.append("lookup")
        return f"value of {key}"

    @box.tool(side_effects=True, needs_approval=True)
    def charge(amount: int) -> str:
        """Charge an amount."""
        runs.append("charge")
        return f"charged {amount}"

    return box


def resumed(dialect: str, emu: Any, request: Any) -> Any:
    """The serve options that reach the waiting turn again (an Assistants run is named)."""
    if dialect == "openai-assistants":
        return emulated_options(dialect, emu.base_url, thread_id=request.key.conversation,
                                run_id=request.key.turn)
    return emulated_options(dialect, emu.base_url)


def sent(emu: Any) -> str:
    """Every request body the backend received, as text."""
    return json.dumps([e.body for e in emu.journal.entries("POST")])


@pytest.mark.parametrize("dialect", installed_dialects())
async def test_the_turn_waits_then_resumes_when_decided(dialect: str, tmp_path: Path) -> None:
    store, runs = f"sqlite:///{tmp_path / 'store.db'}", []
    box = toolbox(store, runs)
    with emulator(dialect, script=SCRIPT) as emu:
        options = emulated_options(dialect, emu.base_url)
        first = await aconverse(box, dialect, ["go"], options)
        assert first.status == "awaiting_approval", first.render()
        [request] = box.approvals.pending()
        assert request.tool == "charge" and runs == ["lookup"]
        assert "charged" not in sent(emu)  # no result invented for the waiting call
        if dialect not in WAITING:  # the service keeps no pending calls: local only
            return
        toolbox(store, []).approvals.approve(request, by="ana")  # any process decides
        again = await aanswer_pending(toolbox(store, runs), dialect, resumed(dialect, emu, request),
                                      conversation=first.conversation)
        assert again.status == "completed", again.render()
        assert runs == ["lookup", "charge"]
        assert sent(emu).count("charged 3") == 1  # the backend received it once


async def test_an_expired_assistants_run_ends_expired_and_the_request_stays(
        tmp_path: Path) -> None:
    store, runs = f"sqlite:///{tmp_path / 'store.db'}", []
    box = toolbox(store, runs)
    # 6 s: past the driver's 5 s margin (a call is not started closer to the expiry)
    with emulator("openai-assistants", script=SCRIPT, expire_after=6.0) as emu:
        options = emulated_options("openai-assistants", emu.base_url)
        first = await aconverse(box, "openai-assistants", ["go"], options)
        assert first.status == "awaiting_approval", first.render()
        await asyncio.sleep(6.5)  # the run expires while the person decides
        [request] = box.approvals.pending()
        box.approvals.approve(request)
        again = await aanswer_pending(box, "openai-assistants",
                                      resumed("openai-assistants", emu, request),
                                      conversation=first.conversation)
    assert again.status == "expired", again.render()
    assert runs == ["lookup"]  # nothing ran for a run that can take no output
    assert box.approvals.pending(decided=True)  # decided, kept: nothing consumed it


async def test_approval_expiry_below_the_runs_answers_it_while_the_run_waits(
        tmp_path: Path) -> None:
    store, runs = f"sqlite:///{tmp_path / 'store.db'}", []
    box = toolbox(store, runs, approval_expiry=0.2)
    with emulator("openai-assistants", script=SCRIPT, expire_after=30) as emu:
        options = emulated_options("openai-assistants", emu.base_url)
        first = await aconverse(box, "openai-assistants", ["go"], options)
        assert first.status == "awaiting_approval", first.render()
        await asyncio.sleep(0.3)
        [request] = box.approvals.pending()
        again = await aanswer_pending(box, "openai-assistants",
                                      resumed("openai-assistants", emu, request),
                                      conversation=first.conversation)
        assert again.status == "completed", again.render()
        assert "expired at" in sent(emu) and runs == ["lookup"]
