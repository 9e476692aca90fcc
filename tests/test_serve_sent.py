"""`Backend.sent`: after a send whose outcome is unknown, each dialect tells whether the user
message arrived, from what its service lists; the driver then continues the turn it started
or sends it (never twice). Real HTTP to the emulators.

The end-to-end case loses the reply of the request that carries the second user message
(the emulator processes it, then answers 503), with the client's retries off so the driver
sees the failure: the turn completes, the message is in the conversation once.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolbridge
from toolbridge.http import RetryPolicy
from toolbridge.plugin import capabilities
from toolbridge.serve import DriverSettings, aconverse, hold
from toolbridge.testing import emulated_options, emulator

ONCE = RetryPolicy(max_attempts=1, backoff=0.005, max_delay=0.05)
SETTINGS = DriverSettings(recovery=RetryPolicy(max_attempts=5, backoff=0.005, max_delay=0.05))
SCRIPT = {"turns": [
    {"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}]], "reply": "first {outputs}"},
    {"rounds": [[{"name": "lookup", "arguments": {"key": "b"}}]], "reply": "second {outputs}"},
]}
EXPECTED: dict[str, tuple[bool | None, bool | None]] = {
    # dialect: (sent(the latest message), sent(another message))
    "openai-agents": (True, False), "openai-assistants": (True, False),
    "openai-responses": (True, False), "openai-chat": (False, False), "google-ces": (None, None),
    "gemini": (False, False),
    "anthropic-sessions": (True, False),
}
SECOND_MESSAGE = {  # the request that carries the second user message
    "openai-agents": "/events", "openai-assistants": "/messages", "openai-responses": "/responses",
    "anthropic-sessions": "/events",
}


def make_toolbox(runs: dict[str, int]) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        runs[key] = runs.get(key, 0) + 1
        return f"value of {key}"

    return box


def options(dialect: str, emu: Any, retry: RetryPolicy | None = None) -> Any:
    given = emulated_options(dialect, emu.base_url)
    return given.model_copy(update={"retry": retry}) if retry else given


@pytest.mark.parametrize("dialect", sorted(EXPECTED))
async def test_a_rebuilt_backend_tells_whether_the_latest_message_arrived(dialect: str) -> None:
    box = make_toolbox({})
    d = toolbridge.get_dialect(dialect)
    with emulator(dialect, script=SCRIPT) as emu:
        async with capabilities().serving(d.name).connect(options(dialect, emu), list(box)) as conn:
            first = conn.backend(None)
            assert (await hold(box, first, ["hello"], SETTINGS)).status == "completed"
            cursor = first.checkpoint()  # what the workflow holds when it sends "again"
            sending = conn.backend(first.conversation)
            sending.restore(cursor)
            await sending.send("again")  # its worker dies before telling anyone
            await sending.aclose()
            rebuilt = conn.backend(first.conversation)  # another worker, from the cursor
            rebuilt.restore(cursor)
            found = (await rebuilt.sent("again"), await rebuilt.sent("hello"))
            step = None
            if found[0]:
                step = await rebuilt.resume() or await rebuilt.next()
            await rebuilt.aclose()
    assert found == EXPECTED[dialect]
    if step is not None:  # the turn "again" started goes on: its call waits
        pending = rebuilt.dialect.read_calls(step.payload or {})
        assert step.status == "requires_action" and pending.calls[0].arguments == {"key": "b"}


@pytest.mark.parametrize("dialect", sorted(SECOND_MESSAGE))
async def test_a_message_whose_reply_was_lost_is_not_sent_again(dialect: str) -> None:
    runs: dict[str, int] = {}
    faults = {"fail_requests": [{"nth": 1, "method": "POST", "matching": "again",  # its first
                                 "status": 503, "after_processing": True}]}  # carrier fails
    with emulator(dialect, script=SCRIPT, faults=faults) as emu:
        transcript = await aconverse(make_toolbox(runs), dialect, ["go", "again"],
                                     options(dialect, emu, ONCE), settings=SETTINGS)
        carried = [e for e in emu.journal.entries("POST") if "again" in json.dumps(e.body)]
    assert transcript.status == "completed", transcript.entries[-1].text
    # Taken once: the request whose reply was lost (a client's retry of it is refused).
    assert [e.status for e in carried if e.status != 400] == [503]
    assert transcript.entries[-1].text.startswith("second")
    assert runs == {"a": 1, "b": 1}
