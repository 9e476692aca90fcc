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
from pathlib import Path
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
DOCS = Path(__file__).parents[1] / "docs" / "serving.md"


def recovery_rows() -> dict[str, list[str]]:
    """docs/serving.md's recovery table: dialect -> its other columns (what ``sent`` reads,
    then what the driver does, when a message may be stored twice)."""
    text = DOCS.read_text().split("<!-- recovery-table:", 1)[1]
    lines = text.splitlines()[1:]
    table = lines[:next(i for i, line in enumerate(lines) if not line.startswith("|"))]
    rows = [line for line in table if line.startswith("| `")]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    return {c[0].strip("`"): c[1:] for c in cells}


def recovery_table() -> dict[str, str]:
    """The recovery table's last column per dialect (when a message may be stored twice:
    ``never``, or the window)."""
    return {dialect: row[-1] for dialect, row in recovery_rows().items()}


def test_the_recovery_table_names_every_dialect() -> None:
    assert set(recovery_table()) == set(DIALECTS)


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


def stored_again_in_its_window(received: dict[str, list[str]], lost: int | None,
                               transcript: Transcript) -> None:
    """The table's window (a stateless backend): only the message whose request's reply was
    lost (``lost``: its index) is stored twice, right after itself; the others once."""
    texts = [t for found in received.values() for t in found]
    expected = [m for i, m in enumerate(MESSAGES) for _ in range(2 if i == lost else 1)]
    assert texts == expected[:len(texts)], (received, transcript.render())


@pytest.mark.parametrize("after", [True, False], ids=["reply-lost", "refused"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_request_failing_once_stores_each_message_once(dialect: str,
                                                             after: bool) -> None:
    plain, received, count = asyncio.run(hold(dialect))
    assert plain.status == "completed", plain.render()
    assert sorted(t for texts in received.values() for t in texts) == sorted(MESSAGES)

    carrying = emu_message_requests(dialect)
    window = recovery_table()[dialect]

    async def sweep() -> list[tuple[int, Transcript, dict[str, list[str]]]]:
        found = []
        for nth in range(1, count + 1):
            rule = {"nth": nth, "status": 500, "after_processing": after}
            transcript, stored, _ = await hold(dialect, {"fail_requests": [rule]})
            found.append((nth, transcript, stored))
        return found

    for nth, transcript, stored in asyncio.run(sweep()):
        assert_ended(transcript)
        if not (after and window.startswith("when a request's reply is lost")):
            stored_once(stored, transcript)  # a 500 is never sent again
        else:  # the window the table names: a lost reply's request goes again
            lost = carrying.index(nth) if nth in carrying else None
            stored_again_in_its_window(stored, lost, transcript)


def emu_message_requests(dialect: str, store: str | None = None) -> list[int]:
    """The numbers of the requests that carried the messages, unfaulted (``store``: held
    under a key, with the records in it, as the killed driver does)."""
    async def plain() -> list[int]:
        box = make_toolbox() if store is None else stored_toolbox(store)
        with emulator(dialect, script=TWO_TURNS) as emu:
            await aconverse(box, dialect, MESSAGES, options(dialect, emu.base_url),
                            settings=SETTINGS, key=None if store is None else "plain")
            return emu.state.intake.message_requests()

    return asyncio.run(plain())


def stored_toolbox(store: str) -> toolbridge.Toolbox:
    """`make_toolbox`'s tool, with results (and records) in ``store``."""
    box = toolbridge.Toolbox(store=store)

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key.upper()

    return box


DRIVER = """
import asyncio, json, sys
from test_message_once import stored_toolbox
from test_turn_endings import SETTINGS, options
from toolbridge.serve import aconverse

dialect, base_url, store, key = sys.argv[1:5]
asyncio.run(aconverse(stored_toolbox(store), dialect, json.loads(sys.argv[5]),
                      options(dialect, base_url), settings=SETTINGS, key=key))
"""


@pytest.mark.parametrize("which", [0, 1], ids=["first-send", "later-send"])
@pytest.mark.parametrize("dialect", ["openai-agents", "openai-assistants",
                                     "openai-responses"])
def test_a_driver_killed_while_the_backend_takes_a_message_is_followed_under_its_key(
        dialect: str, which: int, tmp_path: Path) -> None:
    """A driver process holding a new conversation under a key of the caller's is SIGKILLed
    after the backend stored a message and before its reply came back (the emulator holds
    it); a new driver with the same key and store goes on with that conversation: each
    message is stored once, in one conversation, counted from the emulator's record."""
    import contextlib
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    for attempt in range(5):  # a stream's reconnects may number the requests differently
        nth = emu_message_requests(dialect, f"sqlite:///{tmp_path / f'plain-{attempt}.db'}"
                                   )[which]
        store = f"sqlite:///{tmp_path / f'store-{attempt}.db'}"
        held = {"nth": nth, "status": 500, "after_processing": True, "hold": 60}
        stack = contextlib.ExitStack()
        emu = stack.enter_context(emulator(dialect, script=TWO_TURNS,
                                           faults={"fail_requests": [held]}))
        driver = subprocess.Popen([sys.executable, "-c", DRIVER, dialect, emu.base_url, store,
                                   "order-1", json.dumps(MESSAGES)], env=env)
        try:
            deadline = time.monotonic() + 60
            while not any(e.dropped is not None for e in emu.journal.entries()):
                assert driver.poll() is None and time.monotonic() < deadline
                time.sleep(0.02)
        finally:
            driver.send_signal(signal.SIGKILL)
            driver.wait()
        if emu.state.intake.message_requests()[which:which + 1] == [nth]:
            break  # the held request is the message's
        stack.close()
    else:
        pytest.fail("the held request was never the message's")
    with stack:
        box = stored_toolbox(store)
        transcript = asyncio.run(aconverse(box, dialect, MESSAGES,
                                           options(dialect, emu.base_url), settings=SETTINGS,
                                           key="order-1"))
        assert transcript.status == "completed", transcript.render()
        assert transcript.reply.startswith("two "), transcript.render()
        stored = emu.state.messages_received()
        assert [texts for texts in stored.values() if texts] == [MESSAGES], stored
        records = box.store.records() if box.store is not None else None
        assert records is not None and records.list("toolbridge.serve", f"{dialect}/key/") == {}
        box.close()
