"""A scripted model that misbehaves, on every built-in emulator, end to end through toolbridge.

Each kind of misbehaviour is sent as a real model would send it; toolbridge answers the bad
call with an error result the model can act on, the call is not run, and the conversation
goes on to its next round and its reply.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest

from toolbridge import Toolbox, Transcript, get_dialect
from toolbridge.plugin import capabilities
from toolbridge.testing import converse, installed_dialects

BUILT_IN = installed_dialects()
KEEPS_PENDING = [s.dialect for s in capabilities().serve_backends() if s.waits
                 and s.dialect in BUILT_IN]
"""Backends that keep a conversation's pending calls (Chat Completions keeps none)."""


def test_the_built_in_dialects_are_installed() -> None:
    assert {"google-ces", "openai-agents", "openai-assistants", "openai-chat",
            "openai-responses"} <= set(BUILT_IN)


def make_toolbox() -> tuple[Toolbox, list[tuple[str, Any]]]:
    ran: list[tuple[str, Any]] = []
    toolbox = Toolbox()

    @toolbox.tool
    def get_weather(city: str, days: int = 1, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
        """Forecast for a city."""
        ran.append(("get_weather", city))
        return {"city": city, "days": days, "unit": unit}

    @toolbox.tool(side_effects=True)
    def create_ticket(subject: str) -> str:
        """Open a ticket."""
        ran.append(("create_ticket", subject))
        return f"ticket: {subject}"

    return toolbox, ran


GOOD = {"name": "get_weather", "arguments": {"city": "Oslo"}}
"""The next round's call: it shows that the conversation continued."""


def script(*rounds: list[dict[str, Any]]) -> dict[str, Any]:
    return {"turns": [{"rounds": [*rounds, [GOOD]], "reply": "outputs: {outputs}"}]}


def results(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.of_kind("result")]


def received(transcript: Transcript) -> list[Any]:
    """The outputs the emulated model received, as its reply lists them."""
    reply = transcript.reply
    assert reply.startswith("outputs: "), transcript.render()
    return list(json.loads(reply.removeprefix("outputs: ")))


def error_of(output: Any) -> str:
    """The error text of an output as each backend's model reads it."""
    if isinstance(output, dict):  # CES: response.error
        return str(output.get("error", ""))
    if isinstance(output, str) and output.startswith("{"):  # Assistants: {"error": ...} text
        return str(json.loads(output).get("error", ""))
    return str(output)  # Agents: the error field


def assert_continued(transcript: Transcript, ran: list[tuple[str, Any]], bad: int = 1) -> None:
    outputs = received(transcript)
    assert len(outputs) == bad + 1, transcript.render()
    assert "Oslo" in json.dumps(outputs[-1]), transcript.render()
    assert ("get_weather", "Oslo") in ran
    assert transcript.status == "completed", transcript.render()


BAD_CALLS: dict[str, tuple[dict[str, Any], str]] = {
    "wrong_types": ({"name": "get_weather", "arguments": {"city": "Lima", "days": "three"},
                     "misbehave": "wrong_types"}, "invalid arguments for get_weather"),
    "invalid_enum": ({"name": "get_weather", "arguments": {"city": "Lima", "unit": "kelvin"},
                      "misbehave": "invalid_enum"}, "invalid arguments for get_weather"),
    "broken_json": ({"name": "get_weather", "raw_arguments": '{"city": "Lima", "days": ',
                     "misbehave": "broken_json"}, "not valid JSON"),
    "unknown_tool": ({"name": "get_forecast", "arguments": {"city": "Lima"},
                      "misbehave": "unknown_tool"}, "unknown tool 'get_forecast'"),
}


STRUCT_ARGUMENTS = {"anthropic-sessions", "gemini", "gemini-interactions", "google-ces"}
"""The wires whose calls carry their arguments as a JSON object, never as text."""
EXPRESSIBLE = [(d, k) for d in BUILT_IN for k in sorted(BAD_CALLS)
               if not (d in STRUCT_ARGUMENTS and k == "broken_json")  # see test_broken_json_..
               and (d, k) != ("anthropic-messages", "broken_json")]  # ..._when_streamed


@pytest.mark.parametrize(("dialect", "kind"), EXPRESSIBLE)
def test_a_bad_call_gets_an_error_result_and_the_conversation_goes_on(
        dialect: str, kind: str) -> None:
    call, expected = BAD_CALLS[kind]
    toolbox, ran = make_toolbox()
    transcript = converse(toolbox, dialect, ["Weather?"], script=script([call]))
    assert expected in results(transcript)[0], transcript.render()
    assert expected in error_of(received(transcript)[0])  # what the model was told
    assert ("get_weather", "Lima") not in ran  # the bad call never reached the handler
    assert_continued(transcript, ran)


@pytest.mark.parametrize("dialect", BUILT_IN)
def test_a_bad_call_does_not_sink_its_parallel_neighbour(dialect: str) -> None:
    call, _ = BAD_CALLS["wrong_types"]
    neighbour = {"name": "create_ticket", "arguments": {"subject": "late"}}
    toolbox, ran = make_toolbox()
    transcript = converse(toolbox, dialect, ["Weather?"], script=script([call, neighbour]))
    outputs = received(transcript)
    assert "invalid arguments" in error_of(outputs[0])
    assert outputs[1] == "ticket: late" and ran.count(("create_ticket", "late")) == 1
    assert_continued(transcript, ran, bad=2)


@pytest.mark.parametrize("dialect", sorted(STRUCT_ARGUMENTS & set(BUILT_IN)))
def test_broken_json_on_struct_arguments_is_a_script_error(dialect: str) -> None:
    toolbox, _ = make_toolbox()
    transcript = converse(toolbox, dialect, ["Weather?"],
                          script=script([BAD_CALLS["broken_json"][0]]))
    assert transcript.status == "failed", transcript.render()
    assert "cannot be expressed" in str(transcript.error)
    assert "emulator script error" in str(transcript.error)


def test_broken_json_on_anthropic_messages_only_when_streamed() -> None:
    """A message that is not streamed carries each tool input as an object; streamed, the
    input's JSON pieces (input_json_delta) can be broken, and toolbridge answers the call."""
    call, expected = BAD_CALLS["broken_json"]
    toolbox, _ = make_toolbox()
    transcript = converse(toolbox, "anthropic-messages", ["Weather?"], script=script([call]))
    assert transcript.status == "failed", transcript.render()
    assert "input_json_delta" in str(transcript.error)
    toolbox, ran = make_toolbox()
    transcript = converse(toolbox, "anthropic-messages", ["Weather?"], script=script([call]),
                          stream=True)
    assert expected in results(transcript)[0], transcript.render()
    assert expected in error_of(received(transcript)[0])
    assert ("get_weather", "Lima") not in ran
    assert_continued(transcript, ran)


def test_a_hallucinated_id_on_chat_is_a_script_error() -> None:
    """Chat Completions has no server-side calls: an id used again is a new call there."""
    toolbox, _ = make_toolbox()
    reused = {"name": "create_ticket", "arguments": {"subject": "twice"},
              "misbehave": "hallucinated_id"}
    transcript = converse(toolbox, "openai-chat", ["Ticket?"], script=script(
        [{"name": "create_ticket", "arguments": {"subject": "late"}}], [reused]))
    assert transcript.status == "failed", transcript.render()
    assert "reuse_call_ids" in str(transcript.error)


@pytest.mark.parametrize("dialect", KEEPS_PENDING)
def test_a_hallucinated_id_never_runs_a_second_call_under_an_answered_id(dialect: str) -> None:
    first = {"name": "create_ticket", "arguments": {"subject": "late"}}
    reused = {"name": "create_ticket", "arguments": {"subject": "twice"},
              "misbehave": "hallucinated_id"}
    neighbour = {"name": "create_ticket", "arguments": {"subject": "other"}}
    toolbox, ran = make_toolbox()
    transcript = converse(toolbox, dialect, ["Ticket?"],
                          script=script([first], [reused, neighbour]))
    assert ("create_ticket", "twice") not in ran
    assert ran.count(("create_ticket", "late")) == ran.count(("create_ticket", "other")) == 1
    outputs = received(transcript)
    if dialect in ("openai-agents", "openai-responses", "anthropic-sessions",
                   "gemini-interactions"):
        # Listed, never registered as pending: toolbridge already answered that (turn, call
        # id) and sends nothing for it; the turn goes on once the issued call is answered.
        # (Responses: the conversation already holds that call id's output; sessions: the
        # event id's result was taken; Interactions: the chain already holds that call id's
        # function_result.)
        assert outputs[:2] == ["ticket: late", "ticket: other"], transcript.render()
        assert "twice" not in json.dumps(results(transcript))
        notes = transcript.of_kind("note")
        assert [(n.call, n.tool, n.text) for n in notes] == [
            (transcript.of_kind("call")[0].call, "create_ticket", "not answered: its id was "
             "answered before in this turn, and the backend takes one result per id")]
        assert_continued(transcript, ran, bad=2)
    else:
        # The service waits for what it lists: the toolbox's store knows the id for another
        # call, so it answers an error result without running it.
        assert outputs[0] == "ticket: late" and outputs[2] == "ticket: other"
        assert "already used in this turn for a different call" in error_of(outputs[1])
        assert_continued(transcript, ran, bad=3)


CARRIES_REPEATS = {d for d in BUILT_IN if get_dialect(d).limits.repeated_result_ids}
"""The wires that take one result per listed call, a repeated id too
(`DialectLimits.repeated_result_ids`); the others match results to calls by id."""


@pytest.mark.parametrize("dialect", BUILT_IN)
def test_a_repeated_id_in_one_message_sinks_none_of_its_neighbours(dialect: str) -> None:
    first = {"name": "create_ticket", "arguments": {"subject": "first"}}
    repeat = {"name": "create_ticket", "arguments": {"subject": "again"},
              "misbehave": "repeated_id"}
    neighbour = {"name": "create_ticket", "arguments": {"subject": "other"}}
    toolbox, ran = make_toolbox()
    transcript = converse(toolbox, dialect, ["Tickets?"],
                          script=script([first, repeat, neighbour]))
    assert transcript.status == "completed", transcript.render()
    assert ran.count(("create_ticket", "first")) == ran.count(("create_ticket", "other")) == 1
    assert ("create_ticket", "again") not in ran
    outputs = received(transcript)
    if dialect in CARRIES_REPEATS:  # the repeat got its own error result
        assert outputs[:3] == ["ticket: first", outputs[1], "ticket: other"]
        assert "repeats the id of an earlier call" in error_of(outputs[1])
        assert_continued(transcript, ran, bad=3)
    else:  # answered once, by the first call's result; the transcript says so
        assert outputs[:2] == ["ticket: first", "ticket: other"], transcript.render()
        assert [n.text for n in transcript.of_kind("note")] == [
            "not sent: its id repeats an earlier call's, and the backend takes one result per "
            "id (the earlier call's answers it)"]
        assert_continued(transcript, ran, bad=2)


@pytest.mark.parametrize("dialect", BUILT_IN)
def test_a_repeated_id_naming_another_tool_is_answered_as_the_wire_matches_results(
        dialect: str) -> None:
    """CES matches a ToolResponse to its call by id and tool: the repeat gets its own error
    response (naming its own tool) and the turn goes on; elsewhere as for the same tool."""
    first = {"name": "create_ticket", "arguments": {"subject": "first"}}
    other_tool = {"name": "get_weather", "arguments": {"city": "Lima"}, "misbehave": "repeated_id"}
    toolbox, ran = make_toolbox()
    transcript = converse(toolbox, dialect, ["Ticket?"], script=script([first, other_tool]))
    assert transcript.status == "completed", transcript.render()
    assert ("get_weather", "Lima") not in ran and ran.count(("create_ticket", "first")) == 1
    outputs = received(transcript)
    if dialect in CARRIES_REPEATS or dialect == "google-ces":
        assert outputs[0] == "ticket: first", transcript.render()
        assert "repeats the id of an earlier call" in error_of(outputs[1])
        sent = transcript.of_kind("result")
        assert [r.tool for r in sent[:2]] == ["create_ticket", "get_weather"]
        assert sent[0].call == sent[1].call
        assert_continued(transcript, ran, bad=2)
    else:
        assert outputs[0] == "ticket: first", transcript.render()
        assert_continued(transcript, ran, bad=1)
