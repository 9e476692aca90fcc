"""`MemoryStore`'s per-payload record: columns in, one record per turn, every promise kept."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any

import pytest

from toolbridge import Toolbox, ToolCall
from toolbridge.store import MemoryStore, ResultStore, StoreCall, StoredResult, StoreKey, end_owner


@dataclass
class Fields:
    """A result as `complete_claimed` reads it (the runtime hands its own records)."""

    success: bool
    output: Any = None
    error: str | None = None
    text: str | None = None


def keys_of(turn: str, *ids: str, conversation: str = "s") -> list[StoreKey]:
    return [StoreKey("d", conversation, turn, i) for i in ids]


def claimed(store: ResultStore, keys: list[StoreKey], arguments: list[dict[str, Any]] | None
            = None) -> str:
    claims = store.claim_new(keys, ["echo"] * len(keys), arguments or [{}] * len(keys))
    assert [c.state for c in claims] == ["claimed"] * len(keys)
    assert len({c.owner for c in claims}) == 1
    return claims[0].owner


def test_a_payload_is_claimed_and_completed_as_columns() -> None:
    store = MemoryStore()
    keys = keys_of("t", "1", "2", "3")
    owner = claimed(store, keys, [{"n": 1}, {"n": 2}, {"n": 3}])
    assert len(store) == 3
    applied = store.complete_claimed(owner, keys, [Fields(True, {"n": i}, None, f'{{"n":{i}}}')
                                                   for i in (1, 2, 3)])
    assert applied == [True] * 3
    found = store.lookup(keys)
    assert [f.result for f in found if f] == [StoredResult(True, {"n": i}) for i in (1, 2, 3)]
    again = store.claim([StoreCall(keys[0], "echo", {"n": 1}),
                         StoreCall(keys[1], "echo", {"n": 9}), StoreCall(keys[2], "other",
                                                                         {"n": 3})])
    assert [c.state for c in again] == ["completed", "reused", "reused"]
    assert store.complete_claimed(owner, keys, [Fields(True)] * 3) == [False] * 3  # once only
    end_owner(owner)


def test_payloads_of_one_turn_each_keep_their_record() -> None:
    """A turn several payloads share (CES, MCP): each payload is a batch beside the others,
    and a call id the turn holds is answered from it, not claimed again."""
    store = MemoryStore()
    first, second = keys_of("", "a", "b"), keys_of("", "c", "d")
    owners = [claimed(store, first), claimed(store, second)]
    assert len(store) == 4
    assert store.complete_claimed(owners[1], second, [Fields(True, "c"), Fields(True, "d")]) == [
        True, True]
    assert store.complete_claimed(owners[0], first, [Fields(True, "a"), Fields(False, None,
                                                                                "no")]) == [
        True, True]
    mixed = store.claim_new([first[1], StoreKey("d", "s", "", "e")], ["echo", "echo"], [{}, {}])
    assert [c.state for c in mixed] == ["completed", "claimed"]
    assert mixed[0].result == StoredResult(False, None, "no")
    assert len(store) == 5
    for owner in (*owners, mixed[1].owner):
        end_owner(owner)


@pytest.mark.parametrize("out_of_order", [False, True])
def test_members_completed_one_by_one_or_out_of_order(out_of_order: bool) -> None:
    store = MemoryStore()
    keys = keys_of("t", "1", "2", "3")
    owner = claimed(store, keys)
    order = [2, 0, 1] if out_of_order else [0]
    for i in order:
        assert store.complete_claimed(owner, [keys[i]], [Fields(True, i)]) == [True]
    if not out_of_order:  # the others together, no longer the whole batch
        assert store.complete_claimed(owner, keys[1:], [Fields(True, 1), Fields(True, 2)]) == [
            True, True]
    assert [f.result.output for f in store.lookup(keys) if f and f.result] == [0, 1, 2]
    assert store.prune(-1) == 3 and len(store) == 0
    end_owner(owner)


def test_a_member_taken_over_or_released_is_not_completed_by_the_batch() -> None:
    store = MemoryStore()
    keys = keys_of("t", "1", "2")
    owner = claimed(store, keys)
    store.release(keys[0], owner)
    assert store.get(keys[0]) is None and len(store) == 1
    end_owner(owner)  # its worker is gone: the next claim takes the other member over
    taken = store.claim([StoreCall(keys[1], "echo", {})])[0]
    assert taken.state == "claimed" and taken.owner != owner
    assert store.complete_claimed(owner, keys, [Fields(True, 1), Fields(True, 2)]) == [
        False, False]
    assert store.complete_claimed(taken.owner, keys[1:], [Fields(True, "ours")]) == [True]
    held = store.get(keys[1])
    assert held is not None and held.result == StoredResult(True, "ours")
    end_owner(taken.owner)


def test_eviction_drops_the_oldest_completed_batches_never_one_in_flight() -> None:
    store = MemoryStore(max_entries=6)
    running = keys_of("running", "x", "y")
    running_owner = claimed(store, running)
    for turn in range(6):
        keys = keys_of(str(turn), "1", "2")
        owner = claimed(store, keys)
        store.complete_claimed(owner, keys, [Fields(True, turn), Fields(True, turn)])
        end_owner(owner)
    assert len(store) <= 6
    assert [c.state if c else None for c in store.lookup(running)] == ["running"] * 2
    assert store.get(keys_of("5", "2")[0]) is not None
    assert store.get(keys_of("0", "1")[0]) is None
    end_owner(running_owner)


def test_eviction_in_a_turn_of_many_payloads_drops_whole_batches_and_split_members() -> None:
    """A session's turn (CES) holds every payload's batch by call id: eviction drops the
    oldest completed ones, a member made an entry of its own (a lookup) with them, and keeps
    the count exact and the batch in flight in the same turn."""
    store = MemoryStore(max_entries=6)
    running = keys_of("", "run-1", "run-2")
    running_owner = claimed(store, running)
    for p in range(6):
        keys = keys_of("", f"{p}-1", f"{p}-2")
        owner = claimed(store, keys)
        store.complete_claimed(owner, keys, [Fields(True, p), Fields(True, p)])
        end_owner(owner)
        if p == 0:
            assert store.get(keys[1]) is not None  # a member read: an entry of its own now
    assert len(store) == 6
    assert [c.state if c else None for c in store.lookup(running)] == ["running"] * 2
    held = [c.result.output if c and c.result else None for c in store.lookup(
        [k for p in range(6) for k in keys_of("", f"{p}-1", f"{p}-2")])]
    assert held == [None] * 8 + [4, 4, 5, 5]
    assert store.prune(-1) == 4 and len(store) == 2  # what was counted is what is held
    store.release(running[0], running_owner)
    store.release(running[1], running_owner)
    assert len(store) == 0
    end_owner(running_owner)


def test_a_full_store_keeps_few_objects_the_collector_tracks() -> None:
    """After their payloads end, the store's calls are plain tuples and text (untracked once
    the collector has seen them): a payload's record adds a couple of tracked objects, not a
    few per call."""
    store = MemoryStore()
    payloads = 300
    gc.collect()
    before = len(gc.get_objects())
    for p in range(payloads):
        keys = keys_of("t", *[f"call-{i}" for i in range(8)], conversation=f"s{p}")
        owner = claimed(store, keys, [{"n": i, "tags": ["a", "b"]} for i in range(8)])
        store.complete_claimed(owner, keys, [Fields(True, {"n": i}, None, f'{{"n":{i}}}')
                                             for i in range(8)])
        end_owner(owner)
    del keys
    gc.collect()
    grown = len(gc.get_objects()) - before
    assert len(store) == payloads * 8
    assert grown <= payloads * 3, grown


def test_a_handler_mutating_its_nested_arguments_leaves_the_fingerprint_as_claimed() -> None:
    """The fingerprint is of the arguments as claimed: a handler that changes the objects it
    was given does not change what a re-delivery is compared with."""
    box = Toolbox()

    def tag(arguments: dict[str, Any]) -> str:
        arguments["tags"].append("changed")
        arguments["address"]["city"] = "elsewhere"
        return ",".join(arguments["tags"])

    box.add({"name": "tag", "description": "Tag.", "parameters": {
        "type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}},
                                         "address": {"type": "object"}}}},
            lambda **arguments: tag(arguments), inline=True)

    def call(tags: list[str], city: str) -> ToolCall:
        return ToolCall.trusted(id="c1", name="tag", dialect="d", conversation="s", turn="t",
                                arguments={"tags": tags, "address": {"city": city}})

    first = box.execute([call(["a"], "here")])[0]
    assert first.success and first.output == "a,changed"
    replayed = box.execute([call(["a"], "here")])[0]  # the same call: its stored result
    assert replayed.output == "a,changed"
    mutated = box.execute([call(["a", "changed"], "elsewhere")])[0]
    assert not mutated.success and "already used" in (mutated.error or "")
