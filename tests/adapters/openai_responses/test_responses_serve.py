"""Responses conversations through the one serve driver (`toolbridge.serve`) on the emulator:
every continuation mode, the emulator's faults, recovery after failures and after a restart,
with side effects counted."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from responses_support import D

import toolbridge
from toolbridge.http import RetryPolicy
from toolbridge.plugin import capabilities
from toolbridge.serve import DriverSettings, aanswer_pending, aconverse
from toolbridge.testing import emulator
from toolbridge_openai_responses import ResponsesServeOptions

SETTINGS = DriverSettings(recovery=RetryPolicy(max_attempts=3, backoff=0.01, max_delay=0.05))
SCRIPT = {"turns": [
    {"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}],
                [{"name": "charge", "arguments": {"amount": 2}},
                 {"name": "lookup", "arguments": {"key": "b"}}]],
     "reply": "done {outputs}"},
    {"rounds": [[{"name": "charge", "arguments": {"amount": 5}}]], "reply": "again {outputs}"},
]}
MODES = {
    "conversation": {},
    "previous_response_id": {"use_conversation": False},
    "background": {"stream": False, "background": True, "poll_interval": 0.01},
    "background-stream": {"background": True},
}


def ledger_toolbox(charges: list[int], **options: Any) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(**options)

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    @box.tool(side_effects=True)
    def charge(amount: int) -> dict[str, int]:
        """Charge a card (never twice for one call)."""
        charges.append(amount)
        return {"charged": amount}

    return box


RETRY = RetryPolicy(max_attempts=4, backoff=0.01, max_delay=0.05)
"""The client's default four attempts, without its waits (0.2 s, doubling)."""


def options(emu: Any, **more: Any) -> ResponsesServeOptions:
    return ResponsesServeOptions.emulated(emu.base_url).model_copy(update={
        "poll_interval": 0.01, "retry": RETRY, **more})


@pytest.mark.parametrize("mode", MODES)
async def test_a_conversation_in_every_mode(mode: str) -> None:
    charges: list[int] = []
    box = ledger_toolbox(charges)
    with emulator(D, script=SCRIPT) as emu:
        transcript = await aconverse(box, D, ["pay", "pay again"],
                                     options(emu, **MODES[mode]), settings=SETTINGS)
    assert transcript.status == "completed", transcript.render()
    replies = [e.text for e in transcript.of_kind("reply")]
    assert replies[0].startswith("done ") and json.loads(replies[1][6:]) == [
        '{"charged":5}']
    assert charges == [2, 5]


@pytest.mark.parametrize("mode", ["conversation", "previous_response_id"])
async def test_failures_on_the_request_carrying_results(mode: str) -> None:
    charges: list[int] = []
    box = ledger_toolbox(charges)
    # Requests: 1 create conversation (conversation mode), then a response per round: the
    # second round's answer (with the side effect) fails, then the driver's recovery
    # requests (a create is not sent again by the client: the driver reads or resends).
    first_submit = 4 if mode == "conversation" else 3
    failures = SETTINGS.recovery.max_attempts  # each one a recovery of the driver's
    faults = {"fail_requests": [{"nth": first_submit + i, "status": 500 if i % 2 else 502}
                                for i in range(failures)]}
    with emulator(D, script=SCRIPT, faults=faults) as emu:
        transcript = await aconverse(box, D, ["pay"], options(emu, **MODES[mode]),
                                     settings=SETTINGS)
        entries = emu.journal.entries()
    assert transcript.status == "completed", transcript.render()
    assert charges == [2]  # answered again from the store, never run twice
    assert sum(1 for e in entries if e.status >= 500) == failures
    assert entries[first_submit - 1].path.endswith("/responses")  # the answer failed first


@pytest.mark.parametrize("mode", ["conversation", "previous_response_id"])
async def test_an_answer_processed_whose_reply_is_lost(mode: str) -> None:
    charges: list[int] = []
    # The second round's answer (after the side effect) is processed, its reply lost: the
    # client's retry is refused (conversation: already answered) or starts a second response.
    nth = 4 if mode == "conversation" else 3
    faults = {"fail_requests": [{"nth": nth, "status": 502, "after_processing": True}]}
    with emulator(D, script=SCRIPT, faults=faults) as emu:
        transcript = await aconverse(ledger_toolbox(charges), D, ["pay"],
                                     options(emu, **MODES[mode]), settings=SETTINGS)
    assert transcript.status == "completed", transcript.render()
    assert charges == [2] and transcript.reply.startswith("done ")


@pytest.mark.parametrize("mode", ["conversation", "background-stream"])
async def test_dropped_and_duplicated_streams(mode: str) -> None:
    charges: list[int] = []
    with emulator(D, script=SCRIPT, faults={"drop_stream_after": 4,
                                            "duplicate_events": 2}) as emu:
        transcript = await aconverse(ledger_toolbox(charges), D, ["pay"],
                                     options(emu, **MODES[mode]), settings=SETTINGS)
    assert transcript.status == "completed" and charges == [2]


def _charge_stored(db: Path) -> bool:
    """Whether the store file holds the charge's result (the worker's handler wrote the
    ledger, then the result was committed: killing before that commit makes the outcome
    unknown, not what this test is about)."""
    if not db.exists():
        return False
    with closing(sqlite3.connect(db, timeout=5)) as conn:
        try:
            row = conn.execute("SELECT count(*) FROM toolbridge_calls WHERE tool = 'charge' "
                               "AND state = 'completed'").fetchone()
        except sqlite3.OperationalError:  # the table is not made yet
            return False
    return bool(row[0])


async def test_a_successor_serves_a_conversation_from_the_store(tmp_path: Path) -> None:
    """A worker is killed (SIGKILL) after the side effect ran and its result was stored,
    before it answered: its successor reads the conversation's pending calls and answers
    them, the side effect from the store (the killed worker's other call, not
    side-effecting, runs again)."""
    db, ledger = tmp_path / "results.db", tmp_path / "ledger.txt"
    store = f"sqlite:///{db}"
    script = {"turns": [{"rounds": [[{"name": "charge", "arguments": {"amount": 7}},
                                     {"name": "wait_forever", "arguments": {}}]],
                         "reply": "{outputs}"}]}
    with emulator(D, script=script) as emu:
        worker = subprocess.Popen([sys.executable, str(Path(__file__).with_name(
            "killed_worker.py")), emu.base_url, store, str(ledger)])
        try:
            for _ in range(600):
                if _charge_stored(db) or worker.poll() is not None:
                    break
                await asyncio.sleep(0.05)
            assert ledger.read_text() == "7\n"
            assert _charge_stored(db), "the worker stopped early"
        finally:
            worker.kill()
            worker.wait()
        [conversation] = emu.state.service.conversations
        charges: list[int] = []
        successor = ledger_toolbox(charges, store=store)

        @successor.tool(name="wait_forever")
        async def done_now() -> str:
            """Returns at once in the successor."""
            return "ok"

        transcript = await aanswer_pending(successor, D, options(emu), conversation=conversation,
                                           settings=SETTINGS)
        successor.close()
    assert transcript.status == "completed", transcript.render()
    assert charges == [] and ledger.read_text() == "7\n"  # charged once, by the first worker
    assert json.loads(transcript.reply) == ['{"charged":7}', "ok"]


async def test_a_foundry_agent_saved_from_the_toolbox_and_served() -> None:
    from foundry_support import FixedCredential

    charges: list[int] = []
    credential = FixedCredential()
    with emulator(D, script=SCRIPT) as emu:
        transcript = await aconverse(ledger_toolbox(charges), D, ["pay"], ResponsesServeOptions(
            project_endpoint=emu.base_url + "/api/projects/p", credential=credential,
            agent="billing", create_agent=True, model="gpt-4.1"), settings=SETTINGS)
        [version] = emu.state.service.agents["billing"]
        posts = emu.journal.entries("POST", "/api/projects/p/openai/v1/responses")
    assert transcript.status == "completed" and charges == [2]
    assert [t["name"] for t in version["definition"]["tools"]] == ["lookup", "charge"]
    assert all(p.body["agent_reference"] == {"type": "agent_reference", "name": "billing",
                                             "version": "1"} and "tools" not in p.body
               for p in posts)


async def test_a_failed_agent_version_save_is_not_taken_as_saved() -> None:
    """The first save fails (no retry): the connection keeps no half-made state, and the next
    conversation's save creates the version (counted in the emulator's journal)."""
    from foundry_support import FixedCredential

    from toolbridge.errors import BackendError

    once = RetryPolicy(max_attempts=1)
    path = "/api/projects/p/agents/billing/versions"
    with emulator(D, script=SCRIPT, faults={"fail_requests": [{"nth": 1}]}) as emu:
        connection = capabilities().serving(D).connect(ResponsesServeOptions(
            project_endpoint=emu.base_url + "/api/projects/p", credential=FixedCredential(),
            agent="billing", create_agent=True, model="gpt-4.1", retry=once),
            list(ledger_toolbox([])))
        try:
            with pytest.raises(BackendError):
                await connection.save_agent()  # type: ignore[attr-defined]
            assert emu.state.service.agents.get("billing", []) == []
            await asyncio.gather(*(connection.save_agent()  # type: ignore[attr-defined]
                                   for _ in range(3)))  # together: one save
            await connection.save_agent()  # type: ignore[attr-defined]  # saved: no request
        finally:
            await connection.aclose()
        posts = [e for e in emu.journal.entries("POST") if e.path.startswith(path)]
        [version] = emu.state.service.agents["billing"]
    assert len(posts) == 2 and version["version"] == "1"
