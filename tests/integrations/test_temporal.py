"""The fleet on a real Temporal dev server: a conversation per dialect, end to end, against
the emulators; progress query and cancel signal; options that carry a secret are refused."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import fleet_toolbox
import pytest
from temporalio.client import Client

import toolbridge
from toolbridge.testing import emulated_options, emulator, installed_dialects
from toolbridge_temporal import (
    ConversationWorkflow,
    FleetSettings,
    Outcome,
    Progress,
    serve,
    worker,
)

SCRIPT = {"turns": [{"rounds": [
    [{"name": "lookup", "arguments": {"key": "a"}}],
    [{"name": "charge", "arguments": {"amount": 3}}, {"name": "lookup", "arguments": {"key": "b"}}],
], "reply": "done {outputs}"}, {"rounds": [
    [{"name": "lookup", "arguments": {"key": "c"}}]], "reply": "second {outputs}"}]}
FAST = FleetSettings(heartbeat_timeout=2.0, task_timeout=2.0, recovery_backoff=0.05,
                     recovery_max_delay=0.2)
"""Recovery within seconds: a worker lost in a call or in a workflow task is replaced after
2 s (the defaults wait 30 s and 10 s), still far above a workflow task's milliseconds."""
SECRETS = {"google-ces": {"token": "emulator"}}


def credentials(dialect: str) -> dict[str, Any]:
    """A worker's own options for the emulator (the workflow never carries them)."""
    return SECRETS.get(dialect, {"api_key": "emulator"})


def where(dialect: str, emu: Any) -> dict[str, Any]:
    """The emulated options without their credentials: what goes into the history."""
    given = emulated_options(dialect, emu.base_url)
    return given.model_dump(mode="json", exclude_unset=True,
                            exclude=set(credentials(dialect)))


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ledger"
    monkeypatch.setenv("TOOLBRIDGE_FLEET_LEDGER", str(path))
    return path


@pytest.mark.parametrize("dialect", installed_dialects())
async def test_a_conversation_per_dialect(temporal: Client, dialect: str, ledger: Path,
                                          tmp_path: Path) -> None:
    queue = f"q-{uuid.uuid4().hex}"
    box = fleet_toolbox.make_toolbox(f"sqlite:///{tmp_path / 'store.db'}")
    with emulator(dialect, script=SCRIPT) as emu:
        running, activities = worker(temporal, queue, box,
                                     dialect_options={dialect: credentials(dialect)})
        async with running:
            handle = await serve(temporal, dialect, messages=["go", "again"],
                                 options=where(dialect, emu), task_queue=queue, settings=FAST)
            outcome = await asyncio.wait_for(handle.result(), 60)
            progress = await handle.query(ConversationWorkflow.progress)  # as docs/scaling.md
            described = await handle.describe()
        await activities.aclose()
    assert isinstance(outcome, Outcome)
    assert outcome.status == "completed", outcome
    assert outcome.calls == 4 and outcome.conversation
    assert len(outcome.replies) == 2 and "charged 3" in outcome.replies[0], outcome.replies
    assert isinstance(progress, Progress)
    assert progress.status == "completed" and progress.turn == 2 and progress.calls == 4
    assert len(fleet_toolbox.entries("charge")) == 1
    assert len(fleet_toolbox.entries("lookup")) == 3
    task_timeout = described.raw_description.execution_config.default_workflow_task_timeout
    assert task_timeout.ToTimedelta() == timedelta(seconds=FAST.task_timeout)


@pytest.mark.parametrize(("dialect", "nth"), [("openai-assistants", 5), ("openai-agents", 3)])
async def test_calls_answered_again_after_a_failed_submit_count_once(
        temporal: Client, dialect: str, nth: int, ledger: Path, tmp_path: Path) -> None:
    """The first submission fails (500, no client retry): the workflow recovers, answers the
    step's calls again (from the store) and submits them; each call is counted once."""
    queue = f"q-{uuid.uuid4().hex}"
    box = fleet_toolbox.make_toolbox(f"sqlite:///{tmp_path / 'store.db'}")
    faults = {"fail_requests": [{"nth": nth, "status": 500}]}  # the first submission
    with emulator(dialect, script=SCRIPT, faults=faults) as emu:
        running, activities = worker(temporal, queue, box,
                                     dialect_options={dialect: credentials(dialect)})
        async with running:
            handle = await serve(temporal, dialect, messages=["go", "again"],
                                 options={**where(dialect, emu), "retry": {"max_attempts": 1}},
                                 task_queue=queue, settings=FAST)
            outcome = await asyncio.wait_for(handle.result(), 60)
        await activities.aclose()
        failed = [e for e in emu.journal.entries("POST") if e.status == 500]
    assert any("submit_tool_outputs" in e.path or "tool_result" in json.dumps(e.body)
               for e in failed), "the fault missed the first submission"
    assert outcome.status == "completed", outcome
    assert outcome.calls == 4, outcome
    assert len(fleet_toolbox.entries("lookup")) == 3  # answered again from the store


async def test_cancel_signal_stops_the_conversation(temporal: Client, ledger: Path,
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLBRIDGE_FLEET_SLOW", "1.0")
    queue = f"q-{uuid.uuid4().hex}"
    box = fleet_toolbox.make_toolbox(f"sqlite:///{tmp_path / 'store.db'}")
    with emulator("openai-chat", script=SCRIPT) as emu:
        running, activities = worker(temporal, queue, box,
                                     dialect_options={"openai-chat": credentials("openai-chat")})
        async with running:
            handle = await serve(temporal, "openai-chat", messages=["go", "again"],
                                 options=where("openai-chat", emu), task_queue=queue,
                                 settings=FAST)
            while not fleet_toolbox.entries("charge"):
                await asyncio.sleep(0.05)
            await handle.signal("cancel")
            outcome = await asyncio.wait_for(handle.result(), 30)
        await activities.aclose()
    assert outcome.status == "cancelled"
    assert outcome.replies == []  # stopped within the first turn, after the slow call


async def test_secrets_never_go_into_the_history(temporal: Client) -> None:
    with pytest.raises(toolbridge.UsageError, match="api_key"):
        await serve(temporal, "openai-chat", messages=["hi"], task_queue="unused",
                    options={"base_url": "http://127.0.0.1:9", "api_key": "sk-secret"})
