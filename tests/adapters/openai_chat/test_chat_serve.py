"""Chat conversations through the one serve driver on the emulator: the message list held
and checkpointed by the backend, failures on the request carrying results, servers that
reuse call ids, the round bound, and a successor resuming from the checkpoint."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from chat_support import D

import toolbridge
from toolbridge.http import RetryPolicy
from toolbridge.serve import DriverSettings, aconverse
from toolbridge.testing import emulator
from toolbridge_openai_chat import ChatServeOptions

SETTINGS = DriverSettings(recovery=RetryPolicy(max_attempts=3, backoff=0.01, max_delay=0.05))
SCRIPT = {"turns": [
    {"rounds": [[{"name": "charge", "arguments": {"amount": 2}}],
                [{"name": "charge", "arguments": {"amount": 3}}]],
     "reply": "done {outputs}"},
    {"rounds": [], "reply": "bye"},
]}


def ledger(charges: list[int], **options: Any) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(**options)

    @box.tool(side_effects=True)
    def charge(amount: int) -> str:
        """Charge a card (never twice for one call)."""
        charges.append(amount)
        return f"charged {amount}"

    return box


RETRY = RetryPolicy(max_attempts=4, backoff=0.01, max_delay=0.05)
"""The client's default four attempts, without its waits (0.2 s, doubling)."""


def options(emu: Any, **more: Any) -> ChatServeOptions:
    return ChatServeOptions.emulated(emu.base_url).model_copy(update={"retry": RETRY, **more})


@pytest.mark.parametrize("stream", [False, True])
async def test_a_conversation_with_reused_ids(stream: bool) -> None:
    charges: list[int] = []
    with emulator(D, script=SCRIPT, faults={"reuse_call_ids": True}) as emu:
        transcript = await aconverse(ledger(charges), D, ["pay", "thanks"],
                                     options(emu, stream=stream, instructions="Be brief."),
                                     settings=SETTINGS)
        first = emu.journal.entries("POST")[0].body["messages"][0]
    assert transcript.status == "completed", transcript.render()
    assert charges == [2, 3]  # call_0 both rounds: the position tells them apart
    assert [e.text for e in transcript.of_kind("reply")] == [
        'done ["charged 2", "charged 3"]', "bye"]
    assert first == {"role": "system", "content": "Be brief."}


async def test_failures_on_the_request_carrying_results() -> None:
    charges: list[int] = []
    faults = {"fail_requests": [{"nth": n, "status": 502} for n in (2, 3, 4, 5)]}
    with emulator(D, script=SCRIPT, faults=faults) as emu:
        transcript = await aconverse(ledger(charges), D, ["pay"], options(emu),
                                     settings=SETTINGS)
        bodies = [e.body for e in emu.journal.entries("POST") if e.status == 200]
    assert transcript.status == "completed" and charges == [2, 3]
    # The saved answer was resent as it was: the same tool message after the same history.
    assert bodies[1]["messages"][-1]["content"] == "charged 2"


async def test_an_answer_processed_whose_reply_is_lost() -> None:
    charges: list[int] = []
    faults = {"fail_requests": [{"nth": 2, "status": 500, "after_processing": True}]}
    with emulator(D, script=SCRIPT, faults=faults) as emu:
        transcript = await aconverse(ledger(charges), D, ["pay"], options(emu),
                                     settings=SETTINGS)
        posts = emu.journal.entries("POST")
    assert transcript.status == "completed" and charges == [2, 3]
    assert posts[1].body == posts[2].body  # the same answer again: the model ran twice


async def test_the_round_bound_ends_the_turn_incomplete() -> None:
    loop = {"turns": [{"rounds": [[{"name": "charge", "arguments": {"amount": 1}}]] * 5}]}
    with emulator(D, script=loop) as emu:
        transcript = await aconverse(ledger([]), D, ["pay"], options(emu),
                                     settings=DriverSettings(max_rounds=3))
    assert transcript.status == "incomplete" and "3 rounds" in str(transcript.error)


async def test_a_successor_resumes_from_the_checkpoint(tmp_path: Path) -> None:
    charges: list[int] = []
    store = f"sqlite:///{tmp_path}/results.db"
    with emulator(D, script=SCRIPT, faults={"fail_requests": [
            {"nth": n, "status": 500} for n in range(3, 30)]}) as emu:
        box = ledger(charges, store=store)
        with pytest.raises(toolbridge.BackendError):  # gave up: recoveries exhausted
            await aconverse(box, D, ["pay"], options(emu, conversation="chat-42"),
                            settings=SETTINGS)
        box.close()
        assert charges == [2, 3]  # both rounds ran; the last answer never got through
    with emulator(D, script=SCRIPT) as emu:
        successor = ledger(charges, store=store)
        transcript = await aconverse(successor, D, ["pay", "thanks"],
                                     options(emu, conversation="chat-42"), settings=SETTINGS)
        successor.close()
        resent = emu.journal.entries("POST")[0].body["messages"]
    assert transcript.status == "completed", transcript.render()
    assert charges == [2, 3] and transcript.reply == "bye"
    assert [m["role"] for m in resent] == ["user", "assistant", "tool", "assistant", "tool"]
    assert json.loads(transcript.of_kind("reply")[0].text[5:]) == ["charged 2", "charged 3"]


async def test_concurrent_conversations_keep_their_own_messages() -> None:
    charges: list[int] = []
    box = ledger(charges)
    with emulator(D, script=SCRIPT, faults={"reuse_call_ids": True}) as emu:
        transcripts = await asyncio.gather(*(
            aconverse(box, D, ["pay"], options(emu, conversation=f"c{i}"), settings=SETTINGS)
            for i in range(5)))
    assert all(t.status == "completed" for t in transcripts)
    assert sorted(charges) == [2] * 5 + [3] * 5
