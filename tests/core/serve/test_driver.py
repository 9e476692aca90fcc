"""The serve driver against the Backend seam's in-memory double (every kind of backend)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge.errors import ReplyLostError, ServeError
from toolbridge.http import RetryPolicy
from toolbridge.plugin import MAX_NESTING_DEPTH, Step
from toolbridge.serve import DriverSettings, Transcript, hold
from toolbridge.testing import ScriptedBackend, SeamFault

FAST = DriverSettings(recovery=RetryPolicy(max_attempts=4, backoff=0.001, max_delay=0.01))
KINDS = {  # the backends the seam must serve: how each gets its steps and takes answers
    "agents-like": {"streams": True, "partial_submit": True},
    "assistants-like": {},
    "ces-like": {"lists_pending": False},
}
SCRIPT = {"turns": [
    {"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}],
                [{"name": "charge", "arguments": {"amount": 2}},
                 {"name": "lookup", "arguments": {"key": "b"}}]],
     "reply": "done {outputs}"},
    {"rounds": [[{"name": "lookup", "arguments": {"key": "c"}}]], "reply": "again {outputs}"},
]}


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
        return f"charged {amount}"

    return box


def backend(box: toolbridge.Toolbox, kind: str, **options: Any) -> ScriptedBackend:
    return ScriptedBackend(SCRIPT, tools=list(box), **{**KINDS[kind], **options})


def drive(box: toolbridge.Toolbox, b: ScriptedBackend, messages: list[str] | None,
          settings: DriverSettings = FAST) -> Transcript:
    return asyncio.run(asyncio.wait_for(hold(box, b, messages, settings), 10))


def check_completed(t: Transcript, runs: dict[str, int], b: ScriptedBackend) -> None:
    assert t.status == "completed", t.render()
    assert t.error is None
    assert runs == {"lookup:a": 1, "charge": 1, "lookup:b": 1, "lookup:c": 1}
    assert sorted(b.accepted) == sorted(b.calls_issued) and len(b.calls_issued) == 4
    assert t.reply == 'again ["value of c"]'
    assert t.answered == 4


@pytest.mark.parametrize("kind", list(KINDS))
def test_two_turns_complete(kind: str) -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs)
    b = backend(box, kind)
    t = drive(box, b, ["first", "second"])
    check_completed(t, runs, b)
    kinds = [e.kind for e in t.entries]
    assert kinds[:3] == ["tools", "user", "call"] and kinds[-1] == "reply"
    assert kinds.count("reply") == 2 and kinds.count("user") == 2
    assert b.closed


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("fault", [
    SeamFault("submit", 1), SeamFault("submit", 2, status=502), SeamFault("state", 1),
])
def test_a_failed_request_is_recovered(kind: str, fault: SeamFault) -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs)
    faults = [fault] if fault.operation == "submit" else [SeamFault("submit", 1), fault]
    b = backend(box, kind, faults=faults)
    check_completed(drive(box, b, ["first", "second"]), runs, b)


@pytest.mark.parametrize("kind", ["agents-like", "assistants-like"])
def test_a_processed_then_lost_submit_is_seen_in_the_state(kind: str) -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs)
    b = backend(box, kind, faults=[SeamFault("submit", 2, lose_reply=True)])
    check_completed(drive(box, b, ["first", "second"]), runs, b)


def test_a_lost_reply_that_cannot_be_read_again_ends_failed_and_names_it() -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs)
    b = backend(box, "ces-like", faults=[SeamFault("submit", 1, lose_reply=True)])
    t = drive(box, b, ["first", "second"])
    assert t.status == "failed"
    assert isinstance(t.error, ReplyLostError) and "already answered" in str(t.error)
    assert runs == {"lookup:a": 1}  # nothing ran twice, nothing ran after the loss
    with pytest.raises(ReplyLostError) as info:
        t.raise_for_status()
    assert info.value.transcript is t
    assert t.entries[-1].kind == "note" and "failed" in t.entries[-1].text


def test_recoveries_are_bounded_and_the_transcript_is_attached() -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs)
    b = backend(box, "ces-like", faults=[SeamFault("submit", n) for n in range(1, 20)])
    with pytest.raises(ServeError, match="gave up after 4 recoveries") as info:
        drive(box, b, ["first"])
    assert isinstance(info.value.transcript, Transcript)
    assert info.value.transcript.of_kind("call")
    assert runs == {"lookup:a": 1}


def test_an_error_not_worth_retrying_ends_the_conversation_failed() -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs)
    b = backend(box, "assistants-like", faults=[SeamFault("submit", 1, status=400)])
    t = drive(box, b, ["first", "second"])
    assert t.status == "failed" and t.error is not None and t.error.status == 400
    assert len(t.of_kind("user")) == 1  # the second message was not sent


@pytest.mark.parametrize("kind", ["agents-like", "assistants-like"])
def test_a_user_message_that_arrived_before_its_send_failed_is_not_sent_again(
        kind: str) -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs)
    b = backend(box, kind, faults=[SeamFault("send", 2, lose_reply=True)])
    t = drive(box, b, ["first", "second"])
    assert t.status == "completed", t.entries[-1].text
    assert b.counts["send"] == 2 and b.service.messages == ["first", "second"]
    assert [e.text for e in t.of_kind("reply")][-1].startswith("again")
    assert runs["lookup:c"] == 1


@pytest.mark.parametrize("kind", ["agents-like", "assistants-like"])
def test_a_user_message_that_never_arrived_is_sent(kind: str) -> None:
    box = make_toolbox({})
    b = backend(box, kind, faults=[SeamFault("send", 1, status=503)])
    t = drive(box, b, ["first", "second"])
    assert t.status == "completed", t.entries[-1].text
    assert b.counts["send"] == 3 and b.service.messages == ["first", "second"]


def test_a_user_message_is_never_sent_twice_when_the_backend_cannot_tell() -> None:
    box = make_toolbox({})
    b = backend(box, "ces-like", faults=[SeamFault("send", 1, lose_reply=True)])
    t = drive(box, b, ["first", "second"])
    assert t.status == "failed" and b.counts["send"] == 1
    assert b.service.messages == ["first"]
    assert "sending the user message failed" in t.entries[-1].text


def test_a_send_refused_for_good_is_not_sent_again() -> None:
    box = make_toolbox({})
    b = backend(box, "assistants-like", faults=[SeamFault("send", 1, status=400)])
    t = drive(box, b, ["first"])
    assert t.status == "failed" and b.counts["send"] == 1 and "state" not in b.counts


def test_results_ready_together_are_submitted_together() -> None:
    script = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": k}}
                                     for k in "abcdef"]], "reply": "{outputs}"}]}
    box = make_toolbox({})
    b = ScriptedBackend(script, tools=list(box), streams=True, partial_submit=True)
    sizes: list[int] = []
    submit = b.submit

    async def slow_submit(step: Step, body: Any) -> Any:
        sizes.append(len(body["results"]))
        await asyncio.sleep(0.05)  # while this request is out, the other results get ready
        return await submit(step, body)

    b.submit = slow_submit  # type: ignore[method-assign]
    t = drive(box, b, ["go"])
    assert t.status == "completed" and sum(sizes) == 6
    assert len(sizes) < 6 and max(sizes) > 1, sizes


def test_a_pathological_argument_fails_alone() -> None:
    deep = "[" * 1000 + "]" * 1000
    runs: dict[str, int] = {}
    box = make_toolbox(runs)

    class Deep(ScriptedBackend):
        def _advance(self) -> Step:
            step = super()._advance()
            for call in self.service.pending.values():
                if call["arguments"] == {"key": "b"}:
                    call["arguments"] = '{"key": "b", "x": ' + deep + "}"
            return step

    b = Deep(SCRIPT, tools=list(box))
    t = drive(box, b, ["first", "second"])
    assert t.status == "completed"
    bad = [e for e in t.of_kind("result") if e.text.startswith("error")]
    assert len(bad) == 1 and f"more than {MAX_NESTING_DEPTH} levels" in bad[0].text
    assert runs == {"lookup:a": 1, "charge": 1, "lookup:c": 1}


def test_a_looping_agent_ends_incomplete_at_the_round_bound() -> None:
    script = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": str(i)}}]
                                    for i in range(5)]}]}
    box = make_toolbox({})
    b = ScriptedBackend(script, tools=list(box))
    t = drive(box, b, ["go"], DriverSettings(max_rounds=3))
    assert t.status == "incomplete" and "more than 3 rounds" in str(t.error)


def test_actions_left_to_the_caller_end_the_turn_incomplete() -> None:
    box = make_toolbox({})

    class Approval(ScriptedBackend):
        """After the first round the model asks for an approval, not a function call."""

        def _advance(self) -> Step:
            if self.service.accepted:
                return Step("requires_action", {"conversation": self.conversation,
                                                "turn": "turn-1", "calls": [],
                                                "unhandled": [{"type": "approval"}]})
            return super()._advance()

    b = Approval(SCRIPT, tools=list(box))
    t = drive(box, b, ["first", "second"])
    assert t.status == "incomplete" and "approval" in t.entries[-1].text
    assert t.entries[-1].data == [{"type": "approval"}]


def test_a_call_that_cannot_finish_before_the_deadline_is_not_started() -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs, timeout=30)

    class Expiring(ScriptedBackend):
        def _now(self) -> Step:
            step = super()._now()
            return Step(step.status, step.payload, step.reply, deadline=__import__(
                "time").time() + 10, margin=1) if step.payload else step

    b = Expiring(SCRIPT, tools=list(box))
    t = drive(box, b, ["first"])
    assert t.status == "completed" and runs == {}
    assert all("was not started" in e.text for e in t.of_kind("result"))


@pytest.mark.parametrize("phase", ["before-submit", "before-resend"])
def test_a_restarted_driver_resumes_from_the_checkpoint(tmp_path: Path, phase: str) -> None:
    """The driver is cancelled after the second round's tools ran: before their answer went
    out, or after it went out but before its reply came back. A new driver with the same
    store resumes from the checkpoint: nothing runs twice."""
    runs: dict[str, int] = {}
    store = toolbridge.open_store(f"sqlite:///{tmp_path / 'results.db'}")
    box = make_toolbox(runs, store=store)
    b = backend(box, "ces-like")
    submit = b.submit
    submits = 0
    driver: asyncio.Task[Transcript] | None = None

    async def crash(step: Step, body: Any) -> Any:
        nonlocal submits
        submits += 1
        if submits == 2:  # the second round: `charge` (side effects) and lookup b ran
            if phase == "before-resend":
                await submit(step, body)  # delivered, but the driver dies before the reply
            assert driver is not None
            driver.cancel()
            await asyncio.sleep(5)
        return await submit(step, body)

    async def first_driver() -> None:
        nonlocal driver
        driver = asyncio.create_task(hold(box, b, ["first", "second"], FAST))
        with pytest.raises(asyncio.CancelledError):
            await driver

    b.submit = crash  # type: ignore[method-assign]
    asyncio.run(asyncio.wait_for(first_driver(), 10))
    records = store.records()
    assert len(records.list("toolbridge.serve")) == 1
    assert runs == {"lookup:a": 1, "charge": 1, "lookup:b": 1}
    b.submit = submit  # type: ignore[method-assign]
    b.closed = False
    t = drive(box, b, ["first", "second"])
    if phase == "before-resend":  # the reply that carried the next step died with the driver
        assert t.status == "failed" and isinstance(t.error, ReplyLostError)
        assert runs == {"lookup:a": 1, "charge": 1, "lookup:b": 1}
    else:
        assert t.status == "completed", t.render()
        assert runs == {"lookup:a": 1, "charge": 1, "lookup:b": 1, "lookup:c": 1}
        assert [e.text for e in t.of_kind("user")] == ["second"]  # "first" finished above
    assert records.list("toolbridge.serve") == {}
    store.close()


def test_serving_answers_what_waits_until_idle() -> None:
    runs: dict[str, int] = {}
    box = make_toolbox(runs)
    for kind in ("agents-like", "assistants-like"):
        b = backend(box, kind)
        asyncio.run(b.send("first"))  # someone else started the turn
        t = drive(box, b, None)
        assert t.status == "completed", t.render()
        assert sorted(b.accepted) == sorted(b.calls_issued)


def test_progress_is_reported_per_answered_call() -> None:
    seen: list[tuple[str, str, bool]] = []
    box = make_toolbox({})
    settings = DriverSettings(on_answer=lambda t, r, s: seen.append(
        (t.conversation, r.call.name, r.success)))
    t = drive(box, backend(box, "assistants-like"), ["first", "second"], settings)
    assert t.status == "completed" and len(seen) == 4
    assert {c for c, _, _ in seen} == {"conv-1"}


def test_results_taken_for_a_submission_are_being_sent_before_their_checkpoint() -> None:
    """A step read while a submission's checkpoint is being saved lists its calls: they are
    being sent, not new (they would run again and be submitted twice)."""
    from toolbridge.serve._calls import CallTracker

    box = make_toolbox({})
    tracker = CallTracker(backend(box, "ces-like"))
    call = toolbridge.ToolCall(id="c1", name="lookup", arguments={"key": "a"}, dialect="d",
                               conversation="s", turn="t")
    step = Step("requires_action", payload={})
    tracker.adopt(step, [("t", "c1")], True)
    tracker.start([call])
    tracker.take([toolbridge.ToolResult.ok(call, "value of a")])
    assert tracker.submittable()
    tracker.batch()  # taken for the submission: the checkpoint is saved next, then it is sent
    assert tracker.new(step, [call], [("t", "c1")]) == []
    tracker.sent([("t", "c1")], landed=False)  # the submission failed: the call is new again
    assert tracker.new(step, [call], [("t", "c1")]) == [call]


@pytest.mark.parametrize("kind", ["agents-like", "assistants-like"])  # ces-like lists nothing
def test_serving_a_waiting_conversation_ends_within_the_turn_deadline(kind: str) -> None:
    from toolbridge.errors import TurnTimeoutError

    box = toolbridge.Toolbox()

    @box.tool
    async def lookup(key: str) -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return key

    b = backend(box, kind)

    async def run() -> Transcript:
        await b.send("go")  # the conversation now waits for lookup's result
        if b.streams:
            b._events.get_nowait()  # the step it delivered: serve resumes it afresh
        return await asyncio.wait_for(hold(box, b, None, DriverSettings(turn_timeout=0.3)), 30)

    transcript = asyncio.run(run())
    assert transcript.status == "failed", transcript.render()
    assert isinstance(transcript.error, TurnTimeoutError)
