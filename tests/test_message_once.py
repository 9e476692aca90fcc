"""A user message reaches the backend once, on every built-in dialect, whatever is lost.

A sweep over every request of a two-turn conversation: each one processed and its reply lost
(HTTP 500 after the backend stored it), and each refused before it was processed. What the
backend took is counted from each emulator's own record (`Emulator.messages_received`,
never from our client): every user message is stored once, in one conversation, and the
conversation ends completed or failed with a typed error (where the backend cannot tell
whether a message arrived: the window docs/serving.md's recovery table names).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from test_turn_endings import (
    DEADLINE,
    SETTINGS,
    TWO_TURNS,
    assert_ended,
    make_toolbox,
    options,
)

import toolbridge
from toolbridge.serve import Transcript, aconverse
from toolbridge.testing import emulator, installed_dialects

DIALECTS = installed_dialects()
MESSAGES = ["first", "second"]


async def hold(dialect: str, faults: dict[str, Any] | None = None
               ) -> tuple[Transcript, dict[str, list[str]], int]:
    """The transcript, what the backend stored per conversation, and the requests made."""
    with emulator(dialect, script=TWO_TURNS, faults=faults) as emu:
        try:
            transcript = await asyncio.wait_for(
                aconverse(make_toolbox(), dialect, MESSAGES, options(dialect, emu.base_url),
                          settings=SETTINGS), 2 * DEADLINE * len(MESSAGES))
        except toolbridge.errors.ServeError as exc:  # recoveries exhausted: typed
            assert exc.transcript is not None
            transcript = exc.transcript
            transcript.end("failed", exc)
        return transcript, emu.state.messages_received(), len(emu.journal)


def stored_once(received: dict[str, list[str]], transcript: Transcript) -> None:
    """Each message at most once, all in one conversation, and in order."""
    counts = Counter(text for texts in received.values() for text in texts)
    assert all(n == 1 for n in counts.values()), (received, transcript.render())
    assert len([c for c, texts in received.items() if texts]) <= 1, received
    for texts in received.values():
        assert texts == MESSAGES[:len(texts)], received


@pytest.mark.parametrize("after", [True, False], ids=["reply-lost", "refused"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_request_failing_once_stores_each_message_once(dialect: str,
                                                             after: bool) -> None:
    plain, received, count = asyncio.run(hold(dialect))
    assert plain.status == "completed", plain.render()
    assert sorted(t for texts in received.values() for t in texts) == sorted(MESSAGES)

    async def sweep() -> list[tuple[Transcript, dict[str, list[str]]]]:
        found = []
        for nth in range(1, count + 1):
            rule = {"nth": nth, "status": 500, "after_processing": after}
            transcript, stored, _ = await hold(dialect, {"fail_requests": [rule]})
            found.append((transcript, stored))
        return found

    for transcript, stored in asyncio.run(sweep()):
        assert_ended(transcript)
        stored_once(stored, transcript)
