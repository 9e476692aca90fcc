"""The scripted model: strict null filling, misbehaviours and their checks, output order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbridge.testing import MISBEHAVIOURS, Script, ScriptError
from toolbridge.testing.emulators import ModelCall, ScriptedModel

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "unit": {"enum": ["c", "f"], "type": "string"},
    },
    "required": ["city"],
}
STRICT_WEATHER = {  # the strict form of WEATHER, as the Assistants adapter renders it
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "unit": {"anyOf": [{"enum": ["c", "f"], "type": "string"}, {"type": "null"}]},
        "to": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
        "stops": {"type": "array", "items": {"$ref": "#/$defs/Address"}},
    },
    "required": ["city", "days", "unit", "to", "stops"],
    "additionalProperties": False,
    "$defs": {"Address": {
        "type": "object",
        "properties": {"street": {"type": "string"},
                       "postcode": {"type": ["string", "null"]}},
        "required": ["street", "postcode"], "additionalProperties": False}},
}


def play(calls: list[dict[str, Any]], tools: dict[str, Any] | None = None, *,
         strict: tuple[str, ...] = (), rounds_before: int = 0, **options: Any
         ) -> list[ModelCall]:
    """The calls the model sends for a round of ``calls`` (after ``rounds_before`` rounds)."""
    before = [[{"name": "get_weather", "arguments": {"city": "Oslo"}}]] * rounds_before
    script = Script.load({"turns": [{"rounds": [*before, calls]}]})
    model = ScriptedModel(script, tools if tools is not None else {"get_weather": WEATHER},
                          strict=strict, **options)
    model.start_turn("hi")
    for _ in before:
        model.next_round()
    return model.next_round()


def test_strict_tools_get_null_for_every_absent_nullable_property() -> None:
    tools = {"get_weather": STRICT_WEATHER}
    (call,) = play([{"name": "get_weather", "arguments": {
        "city": "Lima", "to": {"street": "Main"}, "stops": [{"street": "A"}]}}],
        tools, strict=("get_weather",))
    assert call.arguments == {"city": "Lima", "days": None, "unit": None,
                              "to": {"street": "Main", "postcode": None},
                              "stops": [{"street": "A", "postcode": None}]}
    assert json.loads(call.arguments_text) == call.arguments
    # The same script on a tool that is not strict is sent as written.
    (plain,) = play([{"name": "get_weather", "arguments": {"city": "Lima"}}])
    assert plain.arguments == {"city": "Lima"} and plain.arguments_text == '{"city": "Lima"}'


def test_a_strict_tool_still_refuses_a_missing_required_argument() -> None:
    with pytest.raises(ScriptError, match="'stops' is a required property"):
        play([{"name": "get_weather", "arguments": {"city": "Lima"}}],
             {"get_weather": STRICT_WEATHER}, strict=("get_weather",))


def test_every_misbehaviour_is_described() -> None:
    assert set(MISBEHAVIOURS) == {"wrong_types", "invalid_enum", "broken_json",
                                  "unknown_tool", "hallucinated_id", "repeated_id"}


@pytest.mark.parametrize(("call", "message"), [
    ({"name": "get_weather", "arguments": {"city": 5}}, 'mark the call "misbehave"'),
    ({"name": "get_forecast", "arguments": {}}, '"misbehave": "unknown_tool"'),
    ({"name": "get_weather", "arguments": {"city": "Lima"}, "misbehave": "wrong_types"},
     "finds no type error"),
    ({"name": "get_weather", "arguments": {"city": "Lima", "unit": "k"},
      "misbehave": "wrong_types"}, "finds no type error"),
    ({"name": "get_weather", "arguments": {"city": "Lima", "days": "2"},
      "misbehave": "invalid_enum"}, "finds no enum error"),
    ({"name": "get_weather", "arguments": {"city": "Lima"}, "misbehave": "unknown_tool"},
     "but the session declares it"),
    ({"name": "get_weather", "arguments": {"city": "Lima"}, "misbehave": "hallucinated_id"},
     "turn's first round"),
])
def test_a_call_that_is_not_what_its_mark_says_is_a_script_error(
        call: dict[str, Any], message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        play([call])


def test_marked_calls_are_sent_as_written() -> None:
    calls = play([
        {"name": "get_weather", "arguments": {"city": 5}, "misbehave": "wrong_types"},
        {"name": "get_weather", "arguments": {"city": "Lima", "unit": "kelvin"},
         "misbehave": "invalid_enum"},
        {"name": "get_weather", "raw_arguments": "{city: Lima}", "misbehave": "broken_json"},
        {"name": "get_forecast", "arguments": {"x": 1}, "misbehave": "unknown_tool"},
    ])
    assert [c.arguments for c in calls] == [{"city": 5}, {"city": "Lima", "unit": "kelvin"},
                                            {}, {"x": 1}]
    assert calls[2].raw_arguments == calls[2].arguments_text == "{city: Lima}"
    assert [c.misbehave for c in calls] == ["wrong_types", "invalid_enum", "broken_json",
                                            "unknown_tool"]
    assert all(c.issued for c in calls) and len({c.id for c in calls}) == 4


def test_wrong_types_inside_a_nullable_strict_property() -> None:
    (call,) = play([{"name": "get_weather", "arguments": {
        "city": "Lima", "days": "two", "stops": []}, "misbehave": "wrong_types"}],
        {"get_weather": STRICT_WEATHER}, strict=("get_weather",))
    assert call.arguments["days"] == "two" and call.arguments["unit"] is None


def test_a_hallucinated_id_reuses_the_previous_rounds_first_id() -> None:
    script = Script.load({"turns": [{"rounds": [
        [{"name": "get_weather", "arguments": {"city": "Oslo"}},
         {"name": "get_weather", "arguments": {"city": "Rome"}}],
        [{"name": "get_weather", "arguments": {"city": "Lima"}, "misbehave": "hallucinated_id"},
         {"name": "get_weather", "arguments": {"city": "Baku"}}],
    ]}]})
    ids = iter(["c1", "c2", "c3"])
    model = ScriptedModel(script, {"get_weather": WEATHER}, new_id=lambda: next(ids))
    model.start_turn("hi")
    assert [c.id for c in model.next_round()] == ["c1", "c2"]
    reused, fresh = model.next_round()
    assert (reused.id, reused.issued, fresh.id, fresh.issued) == ("c1", False, "c3", True)


def test_a_repeated_id_is_the_rounds_first_id_in_the_same_round() -> None:
    script = Script.load({"turns": [{"rounds": [
        [{"name": "get_weather", "arguments": {"city": "Oslo"}},
         {"name": "get_weather", "arguments": {"city": "Rome"}, "misbehave": "repeated_id"},
         {"name": "get_weather", "arguments": {"city": "Baku"}}],
    ]}]})
    ids = iter(["c1", "c2"])
    model = ScriptedModel(script, {"get_weather": WEATHER}, new_id=lambda: next(ids))
    model.start_turn("hi")
    first, repeat, fresh = model.next_round()
    assert [(c.id, c.issued) for c in (first, repeat, fresh)] == [
        ("c1", True), ("c1", False), ("c2", True)]


def test_a_rounds_first_call_cannot_be_a_repeated_id() -> None:
    bad = {"name": "get_weather", "arguments": {"city": "Lima"}, "misbehave": "repeated_id"}
    with pytest.raises(ScriptError, match="first call cannot be repeated_id"):
        play([bad])


def test_one_hallucinated_id_per_round() -> None:
    bad = {"name": "get_weather", "arguments": {"city": "Lima"}, "misbehave": "hallucinated_id"}
    with pytest.raises(ScriptError, match="at most one hallucinated_id"):
        play([bad, bad], rounds_before=1)


def test_a_misbehaviour_the_wire_cannot_carry_names_why() -> None:
    call = {"name": "get_weather", "raw_arguments": "{", "misbehave": "broken_json"}
    with pytest.raises(ScriptError, match="cannot send: arguments are a Struct"):
        play([call], unsupported={"broken_json": "arguments are a Struct"})


@pytest.mark.parametrize(("call", "message"), [
    ({"name": "f", "misbehave": "broken_json"}, "needs raw_arguments"),
    ({"name": "f", "raw_arguments": "{}", "misbehave": "broken_json"}, "is a JSON object"),
    ({"name": "f", "raw_arguments": "{", "arguments": {"a": 1}, "misbehave": "broken_json"},
     "give only raw_arguments"),
    ({"name": "f", "raw_arguments": "{"}, 'goes with "misbehave": "broken_json" only'),
    ({"name": "f", "misbehave": "nonsense"}, "turns.0.rounds.0.0.misbehave"),
])
def test_malformed_marks_are_refused_when_the_script_loads(
        call: dict[str, Any], message: str) -> None:
    with pytest.raises(ScriptError, match=message) as caught:
        Script.load({"turns": [{"rounds": [[call]]}]})
    assert "errors.pydantic.dev" not in str(caught.value)


def test_outputs_are_listed_in_the_order_of_the_calls() -> None:
    script = Script.load({"turns": [{"rounds": [
        [{"name": "get_weather", "arguments": {"city": "Oslo"}},
         {"name": "get_weather", "arguments": {"city": "Rome"}}],
    ], "reply": "{outputs}"}]})
    model = ScriptedModel(script, {"get_weather": WEATHER})
    model.start_turn("hi")
    oslo, rome = model.next_round()
    model.record("rome", rome.id)  # answered first, listed second
    model.record("oslo", oslo.id)
    model.record("stray")
    assert model.next_round() == []
    assert model.reply() == '["oslo", "rome", "stray"]'
