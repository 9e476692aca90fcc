"""Store scenarios that every built-in store's tests run (imported by their test modules)."""

from __future__ import annotations

from toolbridge.store import ResultStore, StoreCall, StoredResult, StoreKey, end_owner


def mixed_claim(store: ResultStore) -> None:
    """One claim of a batch mixing every case: the new calls are inserted for one new owner,
    the others answered from what is stored (completed, reused, running, taken over)."""
    keys = [StoreKey("d", "c", "t", f"k{i}") for i in range(6)]
    done = store.claim_one(keys[0], "tool", {"a": 1, "b": [{"y": 2, "x": 1}]})
    assert store.complete(keys[0], done.owner, StoredResult(True, {"ok": 1}))
    other = store.claim_one(keys[1], "tool", {"n": 1})
    assert store.complete(keys[1], other.owner, StoredResult(True, 1))
    held = store.claim_one(keys[2], "tool", {})  # its worker is alive (in flight here)
    gone = store.claim_one(keys[3], "tool", {})
    store.start(keys[3], gone.owner)
    end_owner(gone.owner)  # its worker is gone: taken over, as it was
    answers = store.claim([
        StoreCall(keys[0], "tool", {"b": [{"x": 1, "y": 2}], "a": 1}),
        StoreCall(keys[1], "tool", {"n": 2}),
        StoreCall(keys[2], "tool", {}),
        StoreCall(keys[3], "tool", {}),
        StoreCall(keys[4], "tool", {}),
        StoreCall(keys[5], "tool", {"z": 0}),
    ])
    states = [a.state for a in answers]
    assert states == ["completed", "reused", "running", "claimed", "claimed", "claimed"]
    assert answers[0].result == StoredResult(True, {"ok": 1})  # keys in any order
    assert answers[2].owner == held.owner
    owner = answers[4].owner
    assert owner not in (held.owner, gone.owner) and answers[3].owner == answers[5].owner == owner
    assert answers[3].started_at > 0 and answers[4].started_at == 0.0
    assert store.claim_one(keys[4], "tool", {}).state == "running"  # inserted for `owner`
    assert store.complete(keys[3], owner, StoredResult(True, 3))
    assert not store.complete(keys[3], gone.owner, StoredResult(True, 4))
    found = store.get(keys[3])
    assert found is not None and found.result == StoredResult(True, 3)
    for claimed in (held.owner, owner):
        end_owner(claimed)
