"""Every fault each emulator offers, on every dialect, through the one serve driver.

Each case holds the same two-round conversation (a side-effecting tool in the second round)
over real HTTP; a fault aimed at "the request that carries results" is placed by a probe run
that finds that request's number in the journal. What must hold: the conversation completes
(or, where the backend offers no way to recover, ends ``failed`` with a typed error naming the
lost reply), and no handler runs twice.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge.errors import ReplyLostError
from toolbridge.http import RetryPolicy
from toolbridge.plugin import Step
from toolbridge.serve import DriverSettings, aanswer_pending, aconverse
from toolbridge.testing import emulated_options, emulator, installed_dialects

FAST = RetryPolicy(max_attempts=4, backoff=0.005, max_delay=0.05)
SETTINGS = DriverSettings(recovery=RetryPolicy(max_attempts=5, backoff=0.005, max_delay=0.05))
SCRIPT = {"turns": [{"rounds": [
    [{"name": "lookup", "arguments": {"key": "a"}}],
    [{"name": "charge", "arguments": {"amount": 3}}, {"name": "lookup", "arguments": {"key": "b"}}],
], "reply": "done {outputs}"}]}
DIALECTS = installed_dialects()


def make_toolbox(runs: dict[str, int], **options: Any) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(**options)

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        runs[f"lookup:{key}"] = runs.get(f"lookup:{key}", 0) + 1
        return f"value of {key}"

    @box.tool(side_effects=True)
    async def charge(amount: int) -> str:
        """Charge an amount."""
        runs["charge"] = runs.get("charge", 0) + 1
        await asyncio.sleep(0)
        return f"charged {amount}"

    return box


def options(dialect: str, emu: Any, **extra: Any) -> Any:
    given = emulated_options(dialect, emu.base_url)
    return given.model_copy(update={"retry": FAST, **extra})


def result_requests(dialect: str, **extra: Any) -> list[int]:
    """The numbers of the requests that carry results, in a run without faults (from the
    emulator's own record of what it took)."""
    with emulator(dialect, script=SCRIPT) as emu:
        transcript = asyncio.run(aconverse(make_toolbox({}), dialect, ["go"],
                                           options(dialect, emu, **extra), settings=SETTINGS))
        assert transcript.status == "completed"
        return emu.state.intake.result_requests()


def hold(dialect: str, faults: dict[str, Any], **extra: Any
         ) -> tuple[toolbridge.Transcript, dict[str, int], Any]:
    runs: dict[str, int] = {}
    with emulator(dialect, script=SCRIPT, faults=faults) as emu:
        transcript = asyncio.run(asyncio.wait_for(aconverse(
            make_toolbox(runs), dialect, ["go"], options(dialect, emu, **extra),
            settings=SETTINGS), 30))
        journal = emu.journal.entries()
    return transcript, runs, journal


def check_completed(transcript: toolbridge.Transcript, runs: dict[str, int]) -> None:
    assert transcript.status == "completed", transcript.render()
    assert runs == {"lookup:a": 1, "charge": 1, "lookup:b": 1}
    assert transcript.reply.startswith("done ") and "charged 3" in transcript.reply


STREAM_FAULTS = [{"drop_stream_after": 2}, {"drop_stream_after": 4}, {"duplicate_events": 1},
                 {"duplicate_events": 3}]


@pytest.mark.parametrize("faults", [{"latency_ms": 15}, *STREAM_FAULTS],
                         ids=lambda f: next(iter(f)) + f"={next(iter(f.values()))}")
@pytest.mark.parametrize("dialect", DIALECTS)
def test_shared_faults(dialect: str, faults: dict[str, Any]) -> None:
    if dialect == "google-ces" and "latency_ms" not in faults:
        with pytest.raises(toolbridge.UsageError, match="unknown fault"):
            hold(dialect, faults)  # CES streams nothing: it refuses stream faults
        return
    check_completed(*hold(dialect, faults)[:2])


def test_agents_registration_race() -> None:
    transcript, runs, journal = hold("openai-agents", {"registration_race": True})
    check_completed(transcript, runs)
    assert 400 in [e.status for e in journal if e.method == "POST"]


@pytest.mark.parametrize("stream", [True, False])
def test_assistants_expiry(stream: bool) -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs)

    @box.tool
    def slow() -> str:
        """Takes too long."""
        time.sleep(0.6)
        return "late"

    script = {"turns": [{"rounds": [[{"name": "slow", "arguments": {}}]], "reply": "x"}]}
    with emulator("openai-assistants", script=script, faults={"expire_after": 0.4}) as emu:
        transcript = asyncio.run(aconverse(box, "openai-assistants", ["go"], options(
            "openai-assistants", emu, stream=stream, expiry_margin=0)))
    assert transcript.status == "expired" and "expired" in str(transcript.error)


@pytest.mark.parametrize("status", [500, 502])
@pytest.mark.parametrize("which", [0, 1], ids=["first-results", "second-results"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_failed_request_that_carries_results(dialect: str, which: int, status: int) -> None:
    nth = result_requests(dialect)[which]
    transcript, runs, journal = hold(dialect, {"fail_requests": [{"nth": nth,
                                                                  "status": status}]})
    check_completed(transcript, runs)
    assert journal[nth - 1].status == status  # the request that carried them, unfaulted


@pytest.mark.parametrize("which", [0, 1], ids=["first-results", "second-results"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_processed_request_whose_reply_is_dropped(dialect: str, which: int) -> None:
    """The results were accepted but the answer never came back. Agents (idempotency key) and
    Assistants (the run shows it moved on) recover; CES cannot read the lost reply again."""
    nth = result_requests(dialect)[which]
    transcript, runs, journal = hold(dialect, {"fail_requests": [
        {"nth": nth, "status": 500, "after_processing": True}]})
    assert journal[nth - 1].dropped is not None
    if dialect != "google-ces":
        check_completed(transcript, runs)
        return
    assert transcript.status == "failed" and isinstance(transcript.error, ReplyLostError)
    assert "lost" in str(transcript.error) and "failed" in transcript.entries[-1].text
    assert all(n == 1 for n in runs.values())  # nothing ran twice
    with pytest.raises(ReplyLostError):
        transcript.raise_for_status()


@pytest.mark.parametrize("stream", [True, False])
def test_assistants_without_streaming_under_result_faults(stream: bool) -> None:
    nth = result_requests("openai-assistants", stream=stream)[1]
    for rule in ({"nth": nth, "status": 502}, {"nth": nth, "status": 500,
                                               "after_processing": True}):
        transcript, runs, _ = hold("openai-assistants", {"fail_requests": [rule]},
                                   stream=stream)
        check_completed(transcript, runs)


# Responses and Chat resume differently (a conversation's items; the checkpointed message
# list): tests/adapters/openai_{responses,chat}/test_*_serve.py::test_a_successor_*.
BACKEND_CLASSES = {
    "openai-agents": "toolbridge_openai_agents.backend.AgentsBackend",
    "openai-assistants": "toolbridge_openai_assistants.backend.AssistantsBackend",
    "google-ces": "toolbridge_google_ces.backend.CesBackend",
    "anthropic-sessions": "toolbridge_anthropic_sessions.backend.SessionsBackend"}


@pytest.mark.parametrize("dialect", sorted(BACKEND_CLASSES))
def test_a_driver_stopped_between_the_tools_and_the_submit_resumes(
        dialect: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second round's tools ran (one with side effects); the driver is cancelled before
    their answer is sent. A new driver, with the same durable store, picks the conversation
    up: the stored results are sent, nothing runs twice."""
    backend_class: Any = BACKEND_CLASSES[dialect]
    module, _, name = backend_class.rpartition(".")
    cls = getattr(__import__(module, fromlist=[name]), name)
    submit = cls.submit
    driver: list[asyncio.Task[Any]] = []

    async def stop_on_second_round(self: Any, step: Step, body: Any) -> Any:
        if carries_charge(body):
            driver[0].cancel()
            await asyncio.sleep(10)
        return await submit(self, step, body)

    runs: dict[str, int] = {}
    store = f"sqlite:///{tmp_path / 'results.db'}"
    with emulator(dialect, script=SCRIPT) as emu:
        opts = options(dialect, emu)

        async def first() -> Any:
            driver.append(asyncio.create_task(aconverse(
                make_toolbox(runs, store=store), dialect, ["go"], opts, settings=SETTINGS)))
            with pytest.raises(asyncio.CancelledError):
                await driver[0]

        monkeypatch.setattr(cls, "submit", stop_on_second_round)
        asyncio.run(asyncio.wait_for(first(), 30))
        monkeypatch.setattr(cls, "submit", submit)
        # charge ran (Agents submits each result as it is ready: lookup b may not have)
        assert runs["lookup:a"] == runs["charge"] == 1 and runs.get("lookup:b", 0) <= 1
        box = make_toolbox(runs, store=store)
        if dialect in ("openai-agents", "anthropic-sessions"):  # serve the session
            [session] = emu.state.sessions
            transcript = asyncio.run(aanswer_pending(box, dialect, opts, conversation=session,
                                                     settings=SETTINGS))
        elif dialect == "openai-assistants":
            [(run_id, run)] = emu.state.service.runs.items()
            transcript = asyncio.run(aanswer_pending(box, dialect, opts.model_copy(update={
                "thread_id": run.run["thread_id"], "run_id": run_id}), settings=SETTINGS))
        else:
            [session] = emu.state.sessions
            transcript = asyncio.run(aconverse(box, dialect, ["go"], opts.model_copy(
                update={"session": session}), settings=SETTINGS))
    assert transcript.status == "completed", transcript.render()
    # The side-effecting call never runs twice; a plain one cut off mid-run may run again.
    assert runs["charge"] == 1 and runs["lookup:a"] == 1 and runs["lookup:b"] in (1, 2)
    assert "charged 3" in transcript.reply, transcript.render()


def carries_charge(body: Any) -> bool:
    return "charged 3" in str(body)
