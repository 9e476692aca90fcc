"""The transcript is an audit trail: under every misbehaviour a script offers, on every built-in
dialect, it holds a line per call the model made and a line per result the backend received,
each naming its call, and `Transcript.answered` is what the emulator's journal shows it took.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, Literal

import pytest

import toolbridge
from toolbridge.serve import Transcript, aconverse
from toolbridge.testing import MISBEHAVIOURS, emulated_options, emulator, installed_dialects

DIALECTS = installed_dialects()
GOOD = {"name": "lookup", "arguments": {"key": "z"}}
FIRST = {"name": "lookup", "arguments": {"key": "a"}}
BAD: dict[str, dict[str, Any]] = {
    "wrong_types": {"name": "lookup", "arguments": {"key": 3}, "misbehave": "wrong_types"},
    "invalid_enum": {"name": "pick", "arguments": {"colour": "mauve"},
                     "misbehave": "invalid_enum"},
    "broken_json": {"name": "lookup", "raw_arguments": '{"key": ', "misbehave": "broken_json"},
    "unknown_tool": {"name": "missing", "arguments": {}, "misbehave": "unknown_tool"},
    "hallucinated_id": {"name": "pick", "arguments": {"colour": "red"},
                        "misbehave": "hallucinated_id"},
    "repeated_id": {"name": "pick", "arguments": {"colour": "red"}, "misbehave": "repeated_id"},
}
"""One call of each kind (another tool than the call it repeats, for the id misbehaviours)."""
CANNOT = {("gemini", "broken_json"), ("gemini-interactions", "broken_json"),
          ("google-ces", "broken_json"), ("openai-chat", "hallucinated_id"),
          ("anthropic-messages", "hallucinated_id"),
          ("anthropic-sessions", "broken_json"),  # an input is an object
          ("anthropic-messages", "broken_json")}  # not streamed, an input is an object
"""Misbehaviours the wire cannot express (the emulator reports a script error)."""


def test_every_misbehaviour_is_covered() -> None:
    assert set(BAD) == set(MISBEHAVIOURS)


def make_toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key.upper()

    @box.tool
    def pick(colour: Literal["red", "blue"]) -> str:
        """Pick a colour."""
        return colour

    return box


def script(kind: str) -> dict[str, Any]:
    """Two rounds with the bad call beside a good one, then a round that shows the turn went
    on; the id misbehaviours reuse the first call's id (of this round or the last)."""
    rounds: list[list[dict[str, Any]]] = [[FIRST], [BAD[kind], GOOD], [GOOD]]
    if kind == "repeated_id":
        rounds = [[FIRST, BAD[kind], GOOD], [GOOD]]
    return {"turns": [{"rounds": rounds, "reply": "outputs {outputs}"}]}


async def hold(dialect: str, kind: str) -> tuple[Transcript, list[str]]:
    with emulator(dialect, script=script(kind)) as emu:
        options = emulated_options(dialect, emu.base_url)
        transcript = await asyncio.wait_for(
            aconverse(make_toolbox(), dialect, ["go"], options), 30)
        return transcript, emu.state.results_received()


@pytest.mark.parametrize(("dialect", "kind"), [(d, k) for d in DIALECTS for k in sorted(BAD)
                                               if (d, k) not in CANNOT])
def test_the_transcript_shows_every_call_and_every_result_the_backend_received(
        dialect: str, kind: str) -> None:
    transcript, took = asyncio.run(hold(dialect, kind))
    assert transcript.status == "completed", transcript.render()
    made = sum(len(r) for r in script(kind)["turns"][0]["rounds"])
    calls, results = transcript.of_kind("call"), transcript.of_kind("result")
    assert len(calls) == made, transcript.render()  # every call the model made has its line
    assert Counter(r.call for r in results) == Counter(took), transcript.render()
    assert transcript.answered == len(took) == len(results)
    # each line names its call (id and tool), in the entry, the rendering and to_dict()
    names = {c.call: c.tool for c in calls}
    rendered = transcript.render()
    for line in results:
        assert line.tool == names[line.call] or kind in ("hallucinated_id", "repeated_id")
        assert f"{line.tool} [{line.call}]: {line.text}" in rendered
    dumped = [e for e in transcript.to_dict()["entries"] if e["kind"] == "result"]
    assert [(e["call"], e["tool"], e["data"]["id"], e["data"]["name"]) for e in dumped] == [
        (r.call, r.tool, r.call, r.tool) for r in results]
    # a listed call nothing went back for says why
    unsent = len(calls) - len(results)
    notes = [n for n in transcript.of_kind("note") if n.call]
    assert len(notes) == unsent, rendered
    # the bad call's error went back and the turn went on to its last round
    assert transcript.reply.startswith("outputs "), rendered
    assert transcript.reply.count('"Z"') == 2, rendered
