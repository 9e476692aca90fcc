"""One pathological argument string among good calls, on both OpenAI dialects: that call gets
an error result, the others are answered; through `handle` and through the serve driver
against the emulators (the stream and the conversation go on)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import toolbridge
from toolbridge.plugin import MAX_ARGUMENT_BYTES
from toolbridge.serve import converse
from toolbridge.testing import emulated_options, emulator
from toolbridge_openai_agents._emulator_session import EmuSession
from toolbridge_openai_assistants._emulator_state import EmulatedService

DEEP = '{"city": ' + "[" * 1000 + '"Lima"' + "]" * 1000 + "}"
"""Valid JSON, nested 1,000 deep: `json.loads` hits Python's recursion limit."""
HUGE = '{"city": "' + "x" * (MAX_ARGUMENT_BYTES + 1) + '"}'
SCRIPT = {"turns": [{"rounds": [[{"name": "weather", "arguments": {"city": c}}
                                 for c in ("Paris", "DEEP", "Oslo", "HUGE")]],
                     "reply": "{outputs}"}]}


def toolbox(runs: list[str]) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def weather(city: str) -> str:
        """Weather in a city."""
        runs.append(city)
        return f"sunny in {city}"

    return box


def agents_session(arguments: list[Any]) -> dict[str, Any]:
    return {"id": "sess_1", "object": "agent.session", "status": "requires_action",
            "required_actions": [{"type": "function_call", "turn_id": "turn_1",
                                  "call_id": f"call_{i}", "name": "weather", "arguments": a}
                                 for i, a in enumerate(arguments)]}


def assistants_run(arguments: list[str]) -> dict[str, Any]:
    return {"id": "run_1", "object": "thread.run", "thread_id": "thread_1",
            "status": "requires_action", "required_action": {
                "type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": [
                    {"id": f"call_{i}", "type": "function",
                     "function": {"name": "weather", "arguments": a}}
                    for i, a in enumerate(arguments)]}}}


def outcomes(dialect: str, body: dict[str, Any]) -> list[tuple[bool, str]]:
    if dialect == "openai-agents":
        return [(e["success"], e.get("output") or e.get("error", "")) for e in body["events"]]
    return [("error" not in o["output"], o["output"]) for o in body["tool_outputs"]]


@pytest.mark.parametrize("dialect", ["openai-agents", "openai-assistants"])
def test_handle_answers_the_good_calls(dialect: str) -> None:
    runs: list[str] = []
    box = toolbox(runs)
    arguments = ['{"city": "Paris"}', DEEP, {"city": "Oslo"} if dialect == "openai-agents"
                 else '{"city": "Oslo"}', HUGE]
    payload = (agents_session(arguments) if dialect == "openai-agents"
               else assistants_run([str(a) for a in arguments]))
    for body in (box.handle(dialect, payload), asyncio.run(box.ahandle(dialect, payload))):
        got = outcomes(dialect, body)
        assert [ok for ok, _ in got] == [True, False, True, False]
        assert "sunny in Paris" in got[0][1] and "sunny in Oslo" in got[2][1]
        assert "more than 200 levels" in got[1][1] and "byte limit" in got[3][1]
    assert sorted(runs) == ["Oslo", "Paris"]  # each once (they may overlap); the second
    # delivery is answered from the store


def _poison(arguments: dict[str, Any]) -> Any:
    city = arguments.get("city")
    return DEEP if city == "DEEP" else HUGE if city == "HUGE" else None


@pytest.mark.parametrize("dialect", ["openai-agents", "openai-assistants"])
def test_the_served_conversation_goes_on(dialect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulated model sends the pathological strings (patched into its calls here): the
    conversation completes, the bad calls' errors reach the model, the good ones run."""
    if dialect == "openai-agents":
        emit = EmuSession._session_event

        def poisoned(self: EmuSession, status: str) -> None:
            for action in self.required_actions:
                arguments = action.get("arguments")
                bad = _poison(arguments) if isinstance(arguments, dict) else None
                if bad is not None:
                    action["arguments"] = bad
            emit(self, status)

        monkeypatch.setattr(EmuSession, "_session_event", poisoned)
    else:
        next_round = EmulatedService._next_round

        def poisoned_run(self: EmulatedService, state: Any) -> Any:
            events = next_round(self, state)
            action = state.run.get("required_action") or {}
            for call in action.get("submit_tool_outputs", {}).get("tool_calls", []):
                bad = _poison(json.loads(call["function"]["arguments"]))
                if bad is not None:
                    call["function"]["arguments"] = bad
            return [(name, {**data, "required_action": action} if name.endswith(
                "requires_action") else data) for name, data in events]

        monkeypatch.setattr(EmulatedService, "_next_round", poisoned_run)
    runs: list[str] = []
    with emulator(dialect, script=SCRIPT) as emu:
        transcript = converse(toolbox(runs), dialect, ["weather please"],
                              emulated_options(dialect,
                                  emu.base_url))
    assert transcript.status == "completed", transcript.render()
    assert sorted(runs) == ["Oslo", "Paris"]
    results = [e.text for e in transcript.of_kind("result")]
    assert sum(t.startswith("error: ") for t in results) == 2
    outputs = json.loads(transcript.reply)
    assert sum("sunny in" in str(o) for o in outputs) == 2
    assert any("more than 200 levels" in str(o) for o in outputs)
