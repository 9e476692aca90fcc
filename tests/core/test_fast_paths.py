"""The hot path's shortcuts build exactly what the validating code builds."""

from __future__ import annotations

import datetime
import json
import os
from typing import Any

import pytest
from pydantic import ValidationError

import toolbridge
from toolbridge import Correlation, ToolCall, ToolResult
from toolbridge.model import new_result
from toolbridge.store import MemoryStore, StoredResult, StoreKey, fingerprint, new_owner
from toolbridge.store._base import digest, fingerprint_digest


class Ids(Correlation):
    session_id: str
    call_id: str


def test_trusted_call_equals_the_validated_one() -> None:
    ids = Ids(session_id="s", call_id="c")
    fields: dict[str, Any] = {
        "id": "c", "name": "get", "arguments": {"a": [1, {"b": None}]}, "raw_arguments": "{}",
        "argument_error": None, "dialect": "d", "conversation": "s", "turn": "t",
        "correlation": ids,
    }
    trusted, checked = ToolCall.trusted(**fields), ToolCall(**fields)
    assert trusted == checked
    assert trusted.model_dump() == checked.model_dump()
    assert trusted.model_dump_json() == checked.model_dump_json()
    assert repr(trusted) == repr(checked)
    assert trusted.model_copy(update={"turn": "u"}) == checked.model_copy(update={"turn": "u"})
    with pytest.raises(ValidationError):
        trusted.id = "other"  # type: ignore[misc]  # still frozen


def test_trusted_call_defaults_match() -> None:
    trusted = ToolCall.trusted(id="c", name="get", dialect="d", arguments={})
    assert trusted == ToolCall(id="c", name="get", dialect="d")
    assert type(trusted.correlation) is Correlation


def test_trusted_correlation_equals_the_validated_one() -> None:
    trusted = Ids.trusted(session_id="s", call_id="c")
    checked = Ids(session_id="s", call_id="c")
    assert trusted == checked and type(trusted) is Ids
    assert trusted.model_dump() == checked.model_dump() == {"session_id": "s", "call_id": "c"}
    assert trusted.model_extra == checked.model_extra == {}
    call = ToolCall.trusted(id="c", name="n", dialect="d", arguments={}, correlation=trusted)
    assert call.model_dump()["correlation"] == {"session_id": "s", "call_id": "c"}


def test_trusted_correlation_validates_other_field_sets() -> None:
    with pytest.raises(ValidationError):  # a missing field is not trusted
        Ids.trusted(session_id="s")
    extra = Ids.trusted(session_id="s", call_id="c", url="u")  # an extra goes to model_extra
    assert extra == Ids(session_id="s", call_id="c", url="u") and extra.model_extra == {"url": "u"}


def test_new_result_equals_the_validated_one() -> None:
    call = ToolCall(id="c", name="n", dialect="d")
    assert new_result(call, True, {"x": 1}, None) == ToolResult(call=call, success=True,
                                                                output={"x": 1})
    assert ToolResult.failed(call, "no") == ToolResult(call=call, success=False, error="no")


@pytest.mark.parametrize("arguments", [
    {}, {"b": 1, "a": [1.5, None, "é", True]}, {"z": {"y": {"x": float("nan")}}},
    {"when": datetime.date(2024, 1, 2)},
    {"b": [{"d": 1, "c": [{"f": 2, "e": {"h": None, "g": 1e16}}]}], "a": ({"y": 1, "x": 2},)},
    {"list": [[{"b": 1, "a": 2}], "s", 3, [[]]], "flat": [1, 2]},
])
def test_fingerprint_is_the_canonical_json(arguments: dict[str, Any]) -> None:
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str,
                      ensure_ascii=False)
    assert fingerprint("n", arguments) == f"n\0{text}"
    assert fingerprint("n", dict(reversed(arguments.items()))) == f"n\0{text}"  # any order
    assert fingerprint_digest("n", arguments) == digest(f"n\0{text}")  # what SQL stores keep


def test_memory_store_eviction_keeps_calls_in_flight_and_stays_bounded() -> None:
    store = MemoryStore(max_entries=5)
    running = StoreKey("d", "c", "t", "running")
    assert store.claim_one(running, "t", {}).state == "claimed"
    for i in range(50):
        key = StoreKey("d", "c", "t", str(i))
        store.complete(key, store.claim_one(key, "t", {}).owner, StoredResult(True, i))
    assert len(store) == 5
    held = store.get(running)
    assert held is not None and held.state == "running"
    assert store.get(StoreKey("d", "c", "t", "49")) is not None
    assert store.get(StoreKey("d", "c", "t", "0")) is None


def test_owner_ids_are_unique_and_name_this_process() -> None:
    first, second = new_owner(), new_owner()
    assert first != second and f":{os.getpid()}:" in first


def test_a_call_id_reused_for_other_arguments_is_still_refused() -> None:
    box = toolbridge.Toolbox()

    @box.tool(inline=True)
    def echo(text: str) -> str:
        return text

    def call(text: str) -> ToolCall:
        return ToolCall.trusted(id="c1", name="echo", dialect="d", arguments={"text": text},
                                conversation="s", turn="t")

    assert box.execute([call("a")])[0].output == "a"
    assert box.execute([call("a")])[0].output == "a"  # replayed from the store
    reused = box.execute([call("b")])[0]
    assert not reused.success and "already used" in (reused.error or "")
