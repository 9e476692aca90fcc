"""Interactions chains through the one serve driver (`toolbridge.serve`) on the emulator:
two turns chained by ``previous_interaction_id``, failures and lost replies on the creates
carrying results and messages, dropped streams, serving an existing interaction, with side
effects counted and what the service took read from the emulator's journal."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google import genai
from interactions_support import D

import toolbridge
from toolbridge.http import RetryPolicy
from toolbridge.serve import DriverSettings, aconverse
from toolbridge.serve import aanswer_pending as aserve
from toolbridge.testing import emulator
from toolbridge_gemini_interactions import InteractionsServeOptions

SETTINGS = DriverSettings(recovery=RetryPolicy(max_attempts=3, backoff=0.01, max_delay=0.05))
SCRIPT = {"turns": [
    {"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}],
                [{"name": "charge", "arguments": {"amount": 2}},
                 {"name": "lookup", "arguments": {"key": "b"}}]],
     "reply": "done {outputs}"},
    {"rounds": [[{"name": "charge", "arguments": {"amount": 5}}]], "reply": "again {outputs}"},
]}
RETRY = RetryPolicy(max_attempts=4, backoff=0.01, max_delay=0.05)


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


def options(emu: Any, **more: Any) -> InteractionsServeOptions:
    return InteractionsServeOptions.emulated(emu.base_url).model_copy(update={
        "retry": RETRY, **more})


def creates(emu: Any) -> list[Any]:
    return [e.body for e in emu.journal.entries("POST", "/interactions") if e.status == 200]


@pytest.mark.parametrize("stream", [False, True])
async def test_two_turns_on_one_chain(stream: bool) -> None:
    charges: list[int] = []
    with emulator(D, script=SCRIPT) as emu:
        transcript = await aconverse(ledger_toolbox(charges), D, ["pay", "pay again"],
                                     options(emu, stream=stream,
                                             system_instruction="Be brief."),
                                     settings=SETTINGS)
        bodies = creates(emu)
        received = emu.state.messages_received()
    assert transcript.status == "completed", transcript.render()
    replies = [e.text for e in transcript.of_kind("reply")]
    assert replies[0].startswith("done ") and json.loads(replies[1][6:]) == ['{"charged":5}']
    assert charges == [2, 5]
    assert received == {transcript.conversation: ["pay", "pay again"]}  # one chain, once each
    assert "previous_interaction_id" not in bodies[0]
    assert all(b["previous_interaction_id"] for b in bodies[1:])
    assert all(b["system_instruction"] == "Be brief." and b["tools"] for b in bodies)
    assert [s["type"] for s in bodies[1]["input"]] == ["function_result"]


async def test_failures_on_the_create_carrying_results() -> None:
    charges: list[int] = []
    # Requests: the message (1), the first round's results (2), the second round's (3, with
    # the side effect): it fails before being processed, again on each recovery.
    failures = SETTINGS.recovery.max_attempts
    faults = {"fail_requests": [{"nth": 3 + i, "status": 500 if i % 2 else 502}
                                for i in range(failures)]}
    with emulator(D, script=SCRIPT, faults=faults) as emu:
        transcript = await aconverse(ledger_toolbox(charges), D, ["pay"], options(emu),
                                     settings=SETTINGS)
        entries = emu.journal.entries()
    assert transcript.status == "completed", transcript.render()
    assert charges == [2]  # answered again from the store, never run twice
    assert sum(1 for e in entries if e.status >= 500) == failures


async def test_an_answer_processed_whose_reply_is_lost() -> None:
    charges: list[int] = []
    faults = {"fail_requests": [{"nth": 3, "status": 502, "after_processing": True}]}
    with emulator(D, script=SCRIPT, faults=faults) as emu:
        transcript = await aconverse(ledger_toolbox(charges), D, ["pay"], options(emu),
                                     settings=SETTINGS)
        results = emu.state.results_received()
        branched = [b["previous_interaction_id"] for b in
                    (e.body for e in emu.journal.entries("POST", "/interactions"))
                    if isinstance(b.get("input"), list) and len(b["input"]) == 2]
    assert transcript.status == "completed", transcript.render()
    assert charges == [2] and transcript.reply.startswith("done ")
    # The resend branched a second interaction from the same one: taken twice, run once.
    assert len(branched) == 2 and branched[0] == branched[1]
    assert len(results) == 1 + 2 * 2


async def test_a_lost_reply_to_the_message_cannot_be_told_apart() -> None:
    faults = {"fail_requests": [{"nth": 1, "status": 500, "after_processing": True}]}
    with emulator(D, script=SCRIPT, faults=faults) as emu:
        transcript = await aconverse(ledger_toolbox([]), D, ["pay"], options(emu),
                                     settings=SETTINGS)
        received = emu.state.messages_received()
    assert transcript.status == "failed", transcript.render()
    assert [texts for texts in received.values()] == [["pay"]]  # stored once, never resent


async def test_a_429_on_the_message_is_sent_again() -> None:
    faults = {"fail_requests": [{"nth": 1, "status": 429, "retry_after": 0}]}
    with emulator(D, script=SCRIPT, faults=faults) as emu:
        transcript = await aconverse(ledger_toolbox([]), D, ["pay"], options(emu),
                                     settings=SETTINGS)
        received = emu.state.messages_received()
    assert transcript.status == "completed", transcript.render()
    assert [texts for texts in received.values()] == [["pay"]]


async def test_dropped_and_duplicated_streams_are_read_back() -> None:
    charges: list[int] = []
    with emulator(D, script=SCRIPT, faults={"drop_stream_after": 2,
                                            "duplicate_events": 2}) as emu:
        transcript = await aconverse(ledger_toolbox(charges), D, ["pay"],
                                     options(emu, stream=True), settings=SETTINGS)
        gets = emu.journal.entries("GET", "/interactions/")
    assert transcript.status == "completed", transcript.render()
    assert charges == [2] and gets  # each stream cut short was read back


async def test_serving_an_interaction_that_waits() -> None:
    """An interaction created elsewhere (google-genai) whose calls wait: served by id."""
    charges: list[int] = []
    box = ledger_toolbox(charges)
    with emulator(D, script=SCRIPT) as emu:
        sdk = genai.Client(api_key="k", http_options={"base_url": emu.base_url})
        first = sdk.interactions.create(model="gemini-3-flash-preview", input="pay",
                                        tools=box.definitions(D))
        transcript = await aserve(box, D, options(emu, interaction_id=first.id),
                                  settings=SETTINGS)
    assert transcript.status == "completed", transcript.render()
    assert charges == [2] and transcript.reply.startswith("done ")


async def test_a_missing_key_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(toolbridge.UsageError, match="GEMINI_API_KEY"):
        await aconverse(ledger_toolbox([]), D, ["pay"],
                        InteractionsServeOptions(base_url="http://127.0.0.1:9"))


def test_hosted_tools_follow_the_functions_and_unknown_functions_are_refused() -> None:
    functions = [{"type": "function", "name": "lookup"}]
    fields = InteractionsServeOptions(
        base_url="http://x", tools=[{"type": "google_search"}, {"type": "function",
                                                                "name": "lookup"}],
        generation_config={"temperature": 0.2}).request_fields(functions)
    assert fields["tools"] == [*functions, {"type": "google_search"}]
    assert fields["generation_config"] == {"temperature": 0.2}
    with pytest.raises(toolbridge.UsageError, match="'charge' has no handler"):
        InteractionsServeOptions(tools=[{"type": "function", "name": "charge"}]).request_fields(
            functions)
