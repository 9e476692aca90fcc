"""Every turn ends, on every built-in dialect, whatever the model does and whatever fails.

A later turn answered without calls, a reply that is only text, an empty reply; a sweep that
fails each request of a scripted two-turn conversation once, before it is processed (refused)
and after (its reply lost); a turn past `DriverSettings.turn_timeout`. The conversation always
reaches one of the transcript's final statuses, failing only with a typed error.
"""

from __future__ import annotations

import asyncio
from typing import Any, get_args

import pytest

import toolbridge
from toolbridge.errors import BackendError, TurnTimeoutError
from toolbridge.http import RetryPolicy
from toolbridge.serve import DriverSettings, Status, Transcript, aconverse
from toolbridge.testing import emulated_options, emulator, installed_dialects

DIALECTS = installed_dialects()
FINAL = set(get_args(Status)) - {"in_progress"}
FAST = RetryPolicy(max_attempts=3, backoff=0.001, max_delay=0.01)
DEADLINE = 20.0
"""The turn deadline of these tests: a hang ends ``failed`` with `TurnTimeoutError` instead."""
SETTINGS = DriverSettings(turn_timeout=DEADLINE,
                          recovery=RetryPolicy(max_attempts=6, backoff=0.001, max_delay=0.01))
LOOKUP = {"name": "lookup", "arguments": {"key": "a"}}


def make_toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key.upper()

    return box


def options(dialect: str, base_url: str) -> Any:
    extra: dict[str, Any] = {"retry": FAST}
    if dialect == "openai-agents":
        extra["race_delays"] = (0.001, 0.002, 0.005)
    if dialect == "openai-assistants":
        extra["poll_interval"] = 0.005
    return emulated_options(dialect, base_url).model_copy(
        update=extra)


async def hold(dialect: str, script: dict[str, Any], messages: list[str],
               faults: dict[str, Any] | None = None) -> tuple[Transcript, Any]:
    """The conversation's transcript and the emulator's journal; never waits past twice the
    turn deadline per message (the driver's own deadline must end it first)."""
    with emulator(dialect, script=script, faults=faults) as emu:
        transcript = await asyncio.wait_for(
            aconverse(make_toolbox(), dialect, messages, options(dialect, emu.base_url),
                      settings=SETTINGS), 2 * DEADLINE * len(messages))
        return transcript, emu.journal


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_later_turn_answered_without_calls_ends(dialect: str) -> None:
    script = {"turns": [{"rounds": [[LOOKUP]], "reply": "found {outputs}"},
                        {"reply": "nothing to look up"}, {"reply": "still nothing"}]}
    transcript, _ = asyncio.run(hold(dialect, script, ["one", "two", "three"]))
    assert transcript.status == "completed", transcript.render()
    assert [e.text for e in transcript.of_kind("reply")] == [
        'found ["A"]', "nothing to look up", "still nothing"]
    assert transcript.answered == 1


@pytest.mark.parametrize("dialect", DIALECTS)
def test_replies_of_only_text_and_empty_replies_end_their_turns(dialect: str) -> None:
    script = {"turns": [{"reply": "only text"}, {"reply": ""}, {"rounds": [[LOOKUP]],
                                                                "reply": ""}]}
    transcript, _ = asyncio.run(hold(dialect, script, ["hi", "again", "look"]))
    assert transcript.status == "completed", transcript.render()
    assert [e.text for e in transcript.of_kind("reply")] == ["only text", "", ""]
    assert transcript.reply == "" and transcript.answered == 1


TWO_TURNS = {"turns": [{"rounds": [[LOOKUP]], "reply": "one {outputs}"},
                       {"rounds": [[{"name": "lookup", "arguments": {"key": "b"}}]],
                        "reply": "two {outputs}"}]}


def requests_made(dialect: str) -> int:
    """How many requests the two-turn conversation makes when nothing fails."""
    transcript, journal = asyncio.run(hold(dialect, TWO_TURNS, ["first", "second"]))
    assert transcript.status == "completed", transcript.render()
    return len(journal)


def assert_ended(transcript: Transcript) -> None:
    assert transcript.status in FINAL, transcript.render()
    if transcript.status == "completed":
        assert transcript.reply.startswith("two "), transcript.render()
    else:  # a typed error says why, never a hang
        assert isinstance(transcript.error, BackendError), transcript.render()
        assert not isinstance(transcript.error, TurnTimeoutError), transcript.render()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_each_request_refused_once_and_its_reply_lost_once_still_ends_the_conversation(
        dialect: str) -> None:
    count = requests_made(dialect)
    assert count >= 4

    async def sweep() -> list[Transcript]:
        ended = []
        for nth in range(1, count + 1):
            for after in (False, True):
                rule = {"nth": nth, "status": 502, "retry_after": 0.001,
                        "after_processing": after}
                try:
                    transcript, _ = await hold(dialect, TWO_TURNS, ["first", "second"],
                                               {"fail_requests": [rule]})
                except toolbridge.errors.ServeError as exc:  # recoveries exhausted: typed
                    assert exc.transcript is not None
                    transcript = exc.transcript
                    transcript.end("failed", exc)
                ended.append(transcript)
        return ended

    ended = asyncio.run(sweep())
    assert len(ended) == 2 * count
    for transcript in ended:
        assert_ended(transcript)
    assert sum(t.status == "completed" for t in ended) >= count // 2  # most recover


DEADLINE_HERE = 3.0
"""Long enough for every backend to reach the tool on a busy machine (the tool never answers)."""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_turn_past_the_deadline_ends_failed_with_a_typed_error(dialect: str) -> None:
    box = toolbridge.Toolbox()
    started = asyncio.Event()

    @box.tool
    async def lookup(key: str) -> str:
        """Never answers."""
        started.set()
        await asyncio.sleep(3600)
        return key

    async def run() -> Transcript:
        with emulator(dialect, script=TWO_TURNS) as emu:
            return await asyncio.wait_for(aconverse(
                box, dialect, ["first", "second"], options(dialect, emu.base_url),
                settings=DriverSettings(turn_timeout=DEADLINE_HERE)), 30)

    transcript = asyncio.run(run())
    assert started.is_set()
    assert transcript.status == "failed", transcript.render()
    assert isinstance(transcript.error, TurnTimeoutError)
    assert f"turn 1 did not end within turn_timeout={DEADLINE_HERE:g} s" in str(transcript.error)
    assert len(transcript.of_kind("user")) == 1  # the second message was never sent


def test_turn_timeout_must_be_positive() -> None:
    with pytest.raises(toolbridge.UsageError, match="turn_timeout must be a positive"):
        DriverSettings(turn_timeout=0)
    assert DriverSettings().turn_timeout == 600.0
    assert DriverSettings(turn_timeout=None).turn_timeout is None
