"""Workers SIGKILLed mid-conversation: `toolbridge worker` processes on a real Temporal dev
server, a shared SQLite result store, the emulators. The conversation finishes on another
worker, nothing is lost, and the side effect ran once (the ledger its handler writes)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fleet_toolbox
import pytest
from fleet_servers import postgres_store, temporal_address
from temporalio.client import Client
from test_temporal import FAST, SCRIPT, credentials, where

from toolbridge.testing import emulator, installed_dialects
from toolbridge_temporal import serve

HERE = Path(__file__).parent


class Workers:
    """`toolbridge worker` processes of one task queue; each one's stderr goes to a file
    beside the ledger (``worker-N.log``: a pipe nobody reads would block a chatty worker).
    A dead worker's conversations wait 0.5 s for it (``--sticky-timeout``) before another
    takes their next workflow task; a live one answers its own in milliseconds."""

    def __init__(self, queue: str, env: dict[str, str]) -> None:
        self.queue, self.env, self.procs = queue, env, []  # type: ignore[var-annotated]
        self.logs = Path(env["TOOLBRIDGE_FLEET_LEDGER"]).parent

    def start(self, spec: str = "fleet_toolbox:toolbox", **env: str) -> subprocess.Popen[bytes]:
        options = [f"-o{d}.{k}={v}" for d in installed_dialects()
                   for k, v in credentials(d).items()]
        with (self.logs / f"worker-{len(self.procs) + 1}.log").open("ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "toolbridge", "worker", "--temporal",
                 temporal_address(), "--task-queue", self.queue, "--sticky-timeout", "0.5",
                 *options, spec],
                env={**os.environ, **self.env, **env}, stdout=subprocess.DEVNULL, stderr=log)
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str) -> Workers:
    ledger = tmp_path / "ledger"
    monkeypatch.setenv("TOOLBRIDGE_FLEET_LEDGER", str(ledger))
    env = {"TOOLBRIDGE_FLEET_LEDGER": str(ledger), "TOOLBRIDGE_FLEET_STORE": store,
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    return Workers(f"kills-{uuid.uuid4().hex}", env)


@pytest.fixture
def workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workers]:
    running = _workers(tmp_path, monkeypatch, f"sqlite:///{tmp_path / 'store.db'}")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def postgres_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workers]:
    """Workers sharing a PostgreSQL store (a schema of their own), as across machines."""
    with postgres_store() as url:
        if url is None:
            if os.environ.get("CI"):
                pytest.fail("TOOLBRIDGE_TEST_POSTGRES_URL is unset in CI")
            pytest.skip('no PostgreSQL server: run eval "$(scripts/postgres start)" first')
        running = _workers(tmp_path, monkeypatch, url)
        try:
            yield running
        finally:
            running.stop()


async def until(predicate: Any, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


async def _converse(temporal: Client, workers: Workers, dialect: str, emu: Any) -> Any:
    return await serve(temporal, dialect, messages=["go", "again"],
                       options=where(dialect, emu), task_queue=workers.queue, settings=FAST)


@pytest.mark.parametrize("dialect", ["google-ces", "openai-agents"])
async def test_killed_in_the_middle_of_a_side_effect(temporal: Client, workers: Workers,
                                                     dialect: str) -> None:
    await _killed_in_a_side_effect(temporal, workers, dialect)


async def test_killed_in_the_middle_of_a_side_effect_with_a_postgresql_store(
        temporal: Client, postgres_workers: Workers) -> None:
    await _killed_in_a_side_effect(temporal, postgres_workers, "openai-responses")


async def _killed_in_a_side_effect(temporal: Client, workers: Workers, dialect: str) -> None:
    with emulator(dialect, script=SCRIPT) as emu:
        first = workers.start(TOOLBRIDGE_FLEET_SLOW="30")
        handle = await _converse(temporal, workers, dialect, emu)
        await until(lambda: fleet_toolbox.entries("charge"))
        first.kill()  # SIGKILL inside the handler, after its side effect
        first.wait()
        workers.start()
        outcome = await asyncio.wait_for(handle.result(), 60)
        sent = json.dumps([e.body for e in emu.journal.entries("POST")])
    assert outcome.status == "completed", outcome
    assert len(fleet_toolbox.entries("charge")) == 1  # the side effect ran once
    assert "charged (reconciled)" in sent  # the store's hook settled it; it was submitted
    assert outcome.calls == 4 and len(outcome.replies) == 2  # each turn's, rebuilt or not
    assert "charged (reconciled)" in outcome.replies[0], outcome.replies
    assert outcome.replies[1].startswith("second")


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses"])
async def test_killed_between_a_call_and_the_submit(temporal: Client, workers: Workers,
                                                    dialect: str) -> None:
    with emulator(dialect, script=SCRIPT) as emu:
        first = workers.start()
        handle = await _converse(temporal, workers, dialect, emu)
        await until(lambda: fleet_toolbox.entries("charged"))
        first.kill()  # the call is over: its result is stored, the submit not yet sent
        first.wait()
        workers.start()
        outcome = await asyncio.wait_for(handle.result(), 60)
        sent = json.dumps([e.body for e in emu.journal.entries("POST")])
    assert outcome.status == "completed", outcome
    assert len(fleet_toolbox.entries("charge")) == 1
    # The result that was stored is the one submitted; if the kill landed in the instant
    # between the handler's ledger line and the store's record, the reconcile hook answers
    # instead: either way the side effect ran once and its answer reached the backend.
    stored = "charged 3" in sent and "reconciled" not in sent
    assert stored or "charged (reconciled)" in sent, sent
    assert outcome.calls == 4 and outcome.replies[-1].startswith("second")


def _stored_once(emu: Any) -> dict[str, list[str]]:
    """What the backend stored (its own record): each message once, in one conversation."""
    received = emu.state.messages_received()
    assert [texts for texts in received.values() if texts] == [["go", "again"]], received
    return received


@pytest.mark.parametrize("which", [0, 1], ids=["first-send", "later-send"])
@pytest.mark.parametrize("dialect", ["openai-agents", "openai-assistants",
                                     "openai-responses"])
async def test_killed_while_the_backend_takes_a_user_message(
        temporal: Client, workers: Workers, dialect: str, which: int) -> None:
    """The worker is SIGKILLed after the backend stored the message and before its reply
    came back (the emulator holds it): the successor finds that message (a new
    conversation by its key) and goes on with its turn; nothing is sent twice."""
    for _ in range(5):  # the workers' requests may be numbered differently run to run
        with emulator(dialect, script=SCRIPT) as emu:  # where the message goes, unfaulted
            workers.start()
            outcome = await asyncio.wait_for((await _converse(temporal, workers, dialect,
                                                              emu)).result(), 60)
            assert outcome.status == "completed", outcome
            _stored_once(emu)
            nth = emu.state.intake.message_requests()[which]
        workers.stop()
        workers.procs.clear()
        held = {"nth": nth, "status": 500, "after_processing": True, "hold": 60}
        with emulator(dialect, script=SCRIPT, faults={"fail_requests": [held]}) as emu:
            first = workers.start()
            handle = await _converse(temporal, workers, dialect, emu)
            await until(lambda: any(e.dropped is not None for e in emu.journal.entries()))
            first.kill()  # the held request is processed, its reply not yet sent
            first.wait()
            workers.start()
            if emu.state.intake.message_requests()[which:which + 1] != [nth]:
                await handle.cancel()  # the held request was another: again
                workers.stop()
                workers.procs.clear()
                continue
            outcome = await asyncio.wait_for(handle.result(), 60)
            assert outcome.status == "completed", outcome
            assert outcome.replies[-1].startswith("second"), outcome
            _stored_once(emu)
            return
    pytest.fail("the held request was never the message's")
