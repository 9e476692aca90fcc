"""Gemini conversations through the one serve driver on the emulator: the contents list held
and checkpointed by the backend with every signature, failures on the request carrying
results, and a successor resuming from the checkpoint against another emulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gemini_support import TWO_ROUNDS, D, weather_toolbox

import toolbridge
from toolbridge.http import RetryPolicy
from toolbridge.serve import DriverSettings, aconverse
from toolbridge.testing import emulator
from toolbridge_gemini import GeminiServeOptions

SETTINGS = DriverSettings(recovery=RetryPolicy(max_attempts=3, backoff=0.01, max_delay=0.05))
RETRY = RetryPolicy(max_attempts=4, backoff=0.01, max_delay=0.05)
TURNS = {"turns": [*TWO_ROUNDS["turns"], {"rounds": [], "reply": "bye"}]}


def options(emu: Any, **more: Any) -> GeminiServeOptions:
    return GeminiServeOptions.emulated(emu.base_url).model_copy(update={"retry": RETRY,
                                                                        **more})


@pytest.mark.parametrize("stream", [False, True])
async def test_a_conversation_of_two_rounds_and_two_turns(stream: bool) -> None:
    with emulator(D, script=TURNS) as emu:
        transcript = await aconverse(weather_toolbox(), D, ["Help?", "Thanks"],
                                     options(emu, stream=stream, instructions="Be brief."),
                                     settings=SETTINGS)
        posts = emu.journal.entries("POST")
        results = emu.state.results_received()
        messages = emu.state.messages_received()
    assert transcript.status == "completed", transcript.render()
    assert [e.text for e in transcript.of_kind("reply")] == [
        json.dumps(["ticket: heating", json.dumps({"location": "Oslo", "days": 1, "unit": "f"}),
                    json.dumps({"location": "Rome", "days": 1, "unit": "c"})],
                   ensure_ascii=False), "bye"]
    assert len(results) == 3 and list(messages.values()) == [["Help?", "Thanks"]]
    assert posts[0].body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert all("streamGenerateContent" in p.path for p in posts) == stream
    last = posts[-1].body["contents"]
    assert [c["role"] for c in last] == ["user", "model", "user", "model", "user", "model",
                                         "user"]
    assert all("thoughtSignature" in c["parts"][0] for c in last if c["role"] == "model"
               and "functionCall" in c["parts"][0])


async def test_failures_on_the_request_carrying_results() -> None:
    faults = {"fail_requests": [{"nth": n, "status": 503} for n in (2, 3, 4, 5)]}
    ran: list[str] = []
    with emulator(D, script=TWO_ROUNDS, faults=faults) as emu:
        transcript = await aconverse(ledger(ran), D, ["Help?"], options(emu),
                                     settings=SETTINGS)
        bodies = [e.body for e in emu.journal.entries("POST") if e.status == 200]
        results = emu.state.results_received()
    assert transcript.status == "completed", transcript.render()
    assert ran == ["heating"] and len(results) == 3
    # The saved answer was resent as it was: the same function response after the same turn.
    assert bodies[1]["contents"][-1]["parts"][0]["functionResponse"]["response"] == {
        "output": "ticket: heating"}


async def test_a_successor_resumes_from_the_checkpoint(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/results.db"
    ran: list[str] = []
    with emulator(D, script=TWO_ROUNDS, faults={"fail_requests": [
            {"nth": n, "status": 500} for n in range(3, 30)]}) as emu:
        box = ledger(ran, store=store)
        with pytest.raises(toolbridge.BackendError):  # gave up: recoveries exhausted
            await aconverse(box, D, ["Help?"], options(emu, conversation="gem-42"),
                            settings=SETTINGS)
        box.close()
    assert ran == ["heating"]
    with emulator(D, script=TWO_ROUNDS) as emu:  # another emulator: signatures still verify
        successor = ledger(ran, store=store)
        transcript = await aconverse(successor, D, ["Help?"],
                                     options(emu, conversation="gem-42"), settings=SETTINGS)
        successor.close()
        resent = emu.journal.entries("POST")[0].body["contents"]
    assert transcript.status == "completed", transcript.render()
    assert ran == ["heating"]  # answered from the store, not run again
    assert [c["role"] for c in resent] == ["user", "model", "user", "model", "user"]
    # The checkpoint kept each model content verbatim, its signature with its first call.
    assert all("thoughtSignature" in c["parts"][0] for c in resent if c["role"] == "model")


def ledger(ran: list[str], **options: Any) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(**options)

    @box.tool(side_effects=True)
    def create_ticket(subject: str) -> str:
        """Open a support ticket (never twice for one call)."""
        ran.append(subject)
        return f"ticket: {subject}"

    @box.tool
    def get_weather(location: str, days: int = 1, unit: str = "c") -> str:
        """Forecast for a location."""
        return f"{location}: sunny"

    return box
