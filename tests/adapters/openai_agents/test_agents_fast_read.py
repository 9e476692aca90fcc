"""`read_calls` builds calls without pydantic validation: same calls, same errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents_support import payload

import toolbridge
from toolbridge import ToolCall

DIALECT = "openai-agents"


def read(data: Any) -> tuple[ToolCall, ...]:
    return toolbridge.get_dialect(DIALECT).read_calls(data).calls


def validated(action: dict[str, Any], session_id: str) -> ToolCall:
    """The call as the validating constructors build it (the reference for the fast path)."""
    raw = action["arguments"] if isinstance(action["arguments"], str) else None
    arguments = action["arguments"] if raw is None else json.loads(raw)
    return ToolCall(
        id=action["call_id"], name=action["name"], arguments=arguments, raw_arguments=raw,
        dialect=DIALECT, conversation=session_id, turn=action["turn_id"],
    )


@pytest.mark.parametrize("name", ["session.retrieve.response", "requires-action.event"])
def test_calls_equal_the_validated_ones(name: str) -> None:
    data = payload(name)
    session = data.get("session", data)
    session["required_actions"][0]["arguments"] = '{"customer_id": "123"}'  # text form too
    calls = read(data)
    expected = [validated(a, session["id"]) for a in session["required_actions"]]
    assert list(calls) == expected
    assert [c.model_dump() for c in calls] == [c.model_dump() for c in expected]
    assert all(type(c.correlation) is toolbridge.Correlation for c in calls)


def test_arguments_are_copied_from_the_payload() -> None:
    data = payload("session.retrieve.response")
    call = read(data)[0]
    data["required_actions"][0]["arguments"]["customer_id"] = "changed"
    assert call.arguments == {"customer_id": "123"}


@pytest.mark.parametrize(("field", "value"), [
    ("call_id", 7), ("call_id", ""), ("turn_id", None), ("turn_id", ["t"]), ("name", ""),
    ("name", {"n": 1}),
])
def test_malformed_ids_still_name_the_field(field: str, value: Any) -> None:
    data = payload("session.retrieve.response")
    data["required_actions"][1][field] = value
    with pytest.raises(toolbridge.WireFormatError) as info:
        read(data)
    assert info.value.field == f"required_actions[1].{field}"
    assert info.value.dialect == DIALECT and info.value.body is data


def test_an_action_that_is_not_an_object_names_its_index() -> None:
    data = payload("requires-action.event")
    data["session"]["required_actions"].append("call_9")
    with pytest.raises(toolbridge.WireFormatError) as info:
        read(data)
    assert info.value.field == "session.required_actions[2]"


@pytest.mark.parametrize(("session_id", "where"), [(None, "id"), (3, "id")])
def test_a_bad_session_id_names_the_field(session_id: Any, where: str) -> None:
    data = payload("session.retrieve.response")
    data["id"] = session_id
    with pytest.raises(toolbridge.WireFormatError) as info:
        read(data)
    assert info.value.field == where
