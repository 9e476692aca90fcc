"""The sync path's one-step claims on the memory store keep every store semantic."""

from __future__ import annotations

from typing import Any

import pytest

import toolbridge
from toolbridge import ToolCall
from toolbridge.store import MemoryStore, StoreCall, StoreKey


def calls(*specs: tuple[str, str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall.trusted(id=i, name=n, dialect="d", arguments=a, conversation="s", turn="t")
            for i, n, a in specs]


def toolbox(side_effects: bool = False) -> tuple[toolbridge.Toolbox, list[str]]:
    box, ran = toolbridge.Toolbox(), []

    @box.tool(inline=True)
    def echo(text: str) -> str:
        ran.append(text)
        return text

    @box.tool(inline=True, side_effects=side_effects)
    def stop(text: str) -> str:
        ran.append(text)
        raise KeyboardInterrupt

    return box, ran


def test_a_batch_is_claimed_run_in_order_and_replayed() -> None:
    box, ran = toolbox()
    payload = calls(("1", "echo", {"text": "a"}), ("2", "echo", {"text": "b"}))
    assert [r.output for r in box.execute(payload)] == ["a", "b"]
    assert [r.output for r in box.execute(payload)] == ["a", "b"] and ran == ["a", "b"]
    reused = box.execute(calls(("1", "echo", {"text": "x"}), ("2", "echo", {"text": "b"})))
    assert not reused[0].success and "already used" in (reused[0].error or "")
    assert reused[1].output == "b" and ran == ["a", "b"]


def test_an_interrupted_batch_stores_what_ran_and_frees_the_rest() -> None:
    box, ran = toolbox()
    payload = calls(("1", "echo", {"text": "a"}), ("2", "stop", {"text": "b"}),
                    ("3", "echo", {"text": "c"}))
    with pytest.raises(KeyboardInterrupt):
        box.execute(payload)
    assert ran == ["a", "b"]
    store = box.store
    assert isinstance(store, MemoryStore)
    done = store.get(StoreKey("d", "s", "t", "1"))
    assert done is not None and done.state == "completed"
    assert store.get(StoreKey("d", "s", "t", "2")) is None  # no side effects: may run again
    assert store.get(StoreKey("d", "s", "t", "3")) is None  # never started
    assert len(store) == 1


def test_an_interrupted_side_effect_is_abandoned_not_rerun() -> None:
    box, ran = toolbox(side_effects=True)
    payload = calls(("1", "stop", {"text": "b"}), ("2", "echo", {"text": "c"}))
    with pytest.raises(KeyboardInterrupt):
        box.execute(payload)
    store = box.store
    assert store is not None
    held = store.get(StoreKey("d", "s", "t", "1"))
    assert held is not None and held.state == "abandoned"
    again = box.execute(payload)
    assert not again[0].success and "unknown" in (again[0].error or "")
    assert again[1].output == "c" and ran == ["b", "c"]


def test_deferred_fingerprints_are_the_canonical_text() -> None:
    store = MemoryStore()
    nested = calls(("1", "echo", {"text": "a", "n": 1}), ("2", "echo", {"list": [1]}))
    keys = [StoreKey("d", "s", "t", c.id) for c in nested]
    first = store.claim([StoreCall(k, c.name, c.arguments) for k, c in zip(keys, nested,
                                                                            strict=True)])
    assert [c.state for c in first] == ["claimed", "claimed"] and first[0].owner
    nested[0].arguments["text"] = "changed later"  # the store kept its own copy
    nested[1].arguments["list"].append(2)  # nested: its text was fixed at the claim
    redelivered = calls(("1", "echo", {"n": 1, "text": "a"}), ("2", "echo", {"list": [1]}))
    again = store.claim([StoreCall(k, c.name, c.arguments) for k, c in zip(keys, redelivered,
                                                                            strict=True)])
    assert [c.state for c in again] == ["running", "running"]  # the same calls, not reused
    other = store.claim_one(keys[0], "echo", {"n": 1, "text": "b"})
    assert other.state == "reused"
