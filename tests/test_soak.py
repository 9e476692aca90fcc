"""Soak: many conversations on the three dialects at once, random faults, one SQLite store.

Counted, and all must be 0: lost results (a handler ran but the backend never took its
result), duplicate side effects (a handler ran twice for one call: each tool writes a
ledger), user messages stored twice (each emulator's own record, where docs/serving.md's
recovery table says never), unhandled exceptions (anything the driver did not turn into a
typed outcome), and hangs (conversations still running when none has ended for `STALL`
seconds). A conversation may end ``failed`` only with a typed error (a lost CES reply, a user
message whose sending failed), and only because of a fault the soak injected (`injected_cause`).

Default: 150 conversations, 15 per dialect with and without stream faults, each emulator
failing about one request in 25 and at least one of every kind (each status, before and after
processing); ``TOOLBRIDGE_SLOW_SCALE=N`` runs 150 x N, ``TOOLBRIDGE_SOAK_CONVERSATIONS=2000``
an exact number.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import random
import re
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_message_once import recovery_table

import toolbridge
from toolbridge.http import RetryPolicy
from toolbridge.serve import DriverSettings, Job, Transcript, Worker, aconverse
from toolbridge.testing import emulated_options, emulator, installed_dialects

SCALE = int(os.environ.get("TOOLBRIDGE_SLOW_SCALE", "1"))
CONVERSATIONS = int(os.environ.get("TOOLBRIDGE_SOAK_CONVERSATIONS", str(150 * SCALE)))
DIALECTS = installed_dialects()
FAST = RetryPolicy(max_attempts=4, backoff=0.002, max_delay=0.02)
SCRIPT = {"turns": [
    {"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}],
                [{"name": "charge", "arguments": {"amount": 2}},
                 {"name": "lookup", "arguments": {"key": "b"}}]],
     "reply": "done {outputs}"},
    {"rounds": [[{"name": "charge", "arguments": {"amount": 5}}]], "reply": "again {outputs}"},
    {"reply": "bye"},  # a later turn answered without calls (it once hung on Agents)
]}
MESSAGES = ("first", "second", "third")
FAILURES = [(status, after) for status in (429, 500, 502, 503) for after in (False, True)]
"""Every kind of failed request: each status, before or after the request is processed."""
STALL = 30.0
"""Seconds without any conversation ending that count as a hang."""


class Ledger:
    """What the tools did: one line per handler run, by call id."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: Counter[tuple[str, str]] = Counter()

    def record(self, context: toolbridge.ToolContext) -> None:
        with self.lock:
            self.runs[(context.dialect, context.call_id)] += 1


def make_toolbox(ledger: Ledger, store: str) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(store=store, timeout=10)

    @box.tool
    def lookup(key: str, context: toolbridge.ToolContext) -> str:
        """Look a key up."""
        ledger.record(context)
        return f"value of {key}"

    @box.tool(side_effects=True)
    async def charge(amount: int, context: toolbridge.ToolContext) -> str:
        """Charge an amount."""
        ledger.record(context)
        await asyncio.sleep(random.random() / 500)
        return f"charged {amount}"

    return box


def requests_per_conversation(dialect: str) -> int:
    """Four fifths of the requests a conversation adds when nothing fails (measured on its
    emulator: a second conversation's, without the first one's set-up), so that at least that
    many per conversation reach it and every fault injected lands."""
    async def plain() -> int:
        with emulator(dialect, script=SCRIPT) as emu:
            options = emulated_options(dialect, emu.base_url).model_copy(
                update={"retry": FAST})
            made = []
            for _ in range(2):
                done = await aconverse(make_toolbox(Ledger(), "memory://"), dialect,
                                       list(MESSAGES), options)
                assert done.status == "completed", done.render()
                made.append(len(emu.journal))
            return max(2, (made[1] - made[0]) * 4 // 5)

    return asyncio.run(plain())


def faults(dialect: str, rng: random.Random, conversations: int, stream_faults: bool
           ) -> dict[str, Any]:
    """About one request in 25 fails, and at least one of every kind (`FAILURES`), plus
    stream faults."""
    count = conversations * requests_per_conversation(dialect)
    chosen = sorted(rng.sample(range(2, count), k=max(len(FAILURES), count // 25)))
    kinds = rng.sample(FAILURES, k=len(FAILURES))
    rules = [{"nth": n, "status": status, "retry_after": 0.001, "after_processing": after}
             for n, (status, after) in zip(chosen, itertools.cycle(kinds))]
    given: dict[str, Any] = {"fail_requests": rules, "latency_ms": rng.choice([0, 1, 2])}
    if stream_faults and dialect != "google-ces":
        given.update(drop_stream_after=rng.randint(3, 9), duplicate_events=rng.randint(2, 6))
        if dialect == "gemini":  # its chunks carry no ids: a repeated one is new content
            del given["duplicate_events"]
        if dialect == "openai-agents":
            given["registration_race"] = True
    return given


class Unhandled(logging.Handler):
    """Every log record carrying an exception: the driver logs nothing with a traceback
    unless something escaped its typed outcomes."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record)


@contextlib.contextmanager
def watching() -> Iterator[Unhandled]:
    handler = Unhandled()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


async def soak_one(dialect: str, box: toolbridge.Toolbox, emu: Any, count: int,
                   stream: bool) -> tuple[list[Transcript], int]:
    options: Any = emulated_options(dialect, emu.base_url)
    extra: dict[str, Any] = {"retry": FAST}
    if dialect == "openai-agents":
        extra["race_delays"] = (0.002, 0.005, 0.01)
    if dialect == "openai-assistants":
        extra.update(stream=stream, poll_interval=0.005)
    if dialect in ("gemini", "gemini-interactions"):  # stream faults apply to streamed replies
        extra["stream"] = stream
    options = options.model_copy(update=extra)
    ended: list[Transcript] = []
    settings = DriverSettings(keep=False, recovery=RetryPolicy(max_attempts=8, backoff=0.002,
                                                               max_delay=0.02))
    worker = Worker(box, dialect, options, concurrency=12, settings=settings,
                    on_done=ended.append)
    jobs = [Job(None, MESSAGES) for _ in range(count)]
    running = asyncio.create_task(worker.run(jobs))
    seen, quiet = 0, 0.0
    while not running.done() and quiet < STALL:  # a hang: no conversation ends for STALL s
        await asyncio.wait([running], timeout=0.5)
        quiet = 0.0 if len(ended) > seen else quiet + 0.5
        seen = len(ended)
    if not running.done():
        running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    return ended, count - len(ended)


def resource(entry: Any) -> str:
    """The resource a request acted on: its path without the version and the method suffix,
    with the id a create names in its query (``POST .../tools?toolId=lookup``)."""
    name = entry.path.removeprefix("/v1/").partition(":")[0]
    query = dict(part.partition("=")[::2] for part in entry.query.split("&") if part)
    ids = [v for k, v in query.items() if k.endswith("Id")]
    return "/".join([name, *ids])


def injected_cause(transcript: Transcript, emu: Any, rules: list[dict[str, Any]]) -> bool:
    """Whether the conversation failed because of a fault the soak injected: the error names
    an injected request, or it is what a retry meets after a reply was dropped on purpose
    (the journal has that dropped reply for the resource the error names, or for the
    conversation itself: a CES message resent after a 503 that had acted finds its calls
    pending)."""
    error = transcript.error
    text = f"{error} {json.dumps(getattr(error, 'body', None))}"
    numbers = {int(n) for n in re.findall(r"injected failure of request (\d+)", text)}
    if numbers:
        return numbers <= {rule["nth"] for rule in rules}
    dropped = [resource(e) for e in emu.journal.entries() if e.dropped is not None]
    conversation = transcript.conversation
    return any(r in text or (conversation and conversation in r) for r in dropped)


@pytest.mark.slow
def test_soak(tmp_path: Path) -> None:
    rng = random.Random(13)
    ledger = Ledger()
    box = make_toolbox(ledger, f"sqlite:///{tmp_path / 'results.db'}")
    per_dialect = max(CONVERSATIONS // (2 * len(DIALECTS)), 1)
    report: dict[str, Any] = {}
    lost: list[tuple[str, str]] = []
    hangs = 0
    outcomes: Counter[str] = Counter()
    uncaused: list[str] = []
    injected = {(d, s): faults(d, rng, per_dialect, s) for d in DIALECTS for s in (False, True)}
    with watching() as unhandled, contextlib.ExitStack() as stack:
        emulators = {key: stack.enter_context(emulator(key[0], script=SCRIPT, faults=given))
                     for key, given in injected.items()}

        async def everything() -> list[tuple[list[Transcript], int]]:
            return list(await asyncio.gather(*(
                soak_one(d, box, emu, per_dialect, stream) for (d, stream), emu in
                emulators.items())))

        results = asyncio.run(everything())
        for key, emu in emulators.items():  # every failure injected was a request's
            last = max(rule["nth"] for rule in injected[key]["fail_requests"])
            assert len(emu.journal) >= last, (key, len(emu.journal), last)
        for dialect in DIALECTS:  # a call run in a conversation that ended
            took = set().union(*(emu.state.results_received()
                                 for (d, _), emu in emulators.items() if d == dialect))
            lost += [(dialect, c) for (d, c) in ledger.runs if d == dialect and c not in took]
        for ((dialect, stream), emu), (ended, hung) in zip(emulators.items(), results,
                                                           strict=True):
            hangs += hung
            for t in ended:
                kind = t.status if t.error is None else f"{t.status}:{type(t.error).__name__}"
                outcomes[f"{dialect} {kind}"] += 1
            for t in ended:
                assert t.status in ("completed", "failed"), t.render()
                if t.status == "completed":  # every turn ended, the last with its own reply
                    assert t.reply == "bye", t.render()
                if t.status == "failed":  # typed, and never a bare crash of the driver
                    assert isinstance(t.error, toolbridge.BackendError), t.render()
                    assert "unexpected" not in str(t.error), t.render()
                    rules = injected[dialect, stream]["fail_requests"]
                    if not injected_cause(t, emu, rules):
                        uncaused.append(t.render())
    windows = recovery_table()
    sent_twice = [(d, texts) for (d, _), emu in emulators.items()
                  if windows[d].startswith("never")
                  for texts in emu.state.messages_received().values()
                  if list(texts) != list(MESSAGES[:len(texts)])]  # each once, in order
    duplicates = {k: n for k, n in ledger.runs.items() if n > 1}
    report = {"conversations": per_dialect * 2 * len(DIALECTS), "lost": len(lost),
              "duplicates": len(duplicates), "sent_twice": len(sent_twice),
              "unhandled": len(unhandled.records),
              "hangs": hangs, "outcomes": dict(sorted(outcomes.items()))}
    print(report)
    assert lost == [], report
    assert duplicates == {}, report
    assert sent_twice == [], (report, sent_twice[:3])
    assert unhandled.records == [], [r.getMessage() for r in unhandled.records[:3]]
    assert hangs == 0, report
    assert uncaused == [], uncaused[:3]  # every failure is a fault the soak injected
    completed = sum(n for k, n in outcomes.items() if k.endswith(" completed"))
    assert completed >= 0.8 * report["conversations"], report  # faults are the exception
