"""`MemoryStore`: call states in this process's memory."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import to_json

from ._base import (
    Owned,
    ResultFields,
    ResultStore,
    StoreCall,
    StoreClaim,
    StoreCompletion,
    StoredResult,
    StoreKey,
    fingerprint,
)
from ._base import digest as digest_of
from ._memory_batch import Batch, Entry, Held, Key, Stored, Turn
from ._owners import new_owner, owner_alive
from ._records import MemoryRecords

__all__ = ["MemoryStore"]

_new_tuple = tuple.__new__  # StoreClaim(...) without its Python __new__
Done = Batch | Key
"""A completion in the queue: a batch whose members completed together, or one call."""


class MemoryStore(ResultStore):
    """Call states in this process's memory, the oldest completed ones dropped past a bound.

    Calls are held by turn (dialect, conversation, turn), then by call id: a payload's new
    calls of one new turn are claimed as one record stored once under their turn, and their
    results set on it in one step, so the usual payload costs no per-key work in the index.
    A queue holds the completions in order, so eviction drops the oldest first, never a call
    in flight. What is kept is plain tuples of text and numbers where it can be, which the
    garbage collector stops tracking, so a full store adds little to a collection: arguments
    and JSON outputs are their JSON text, decoded again when needed.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._turns: dict[Turn, Held] = {}
        self._count = 0  # calls held
        self._completed: deque[Done] = deque()
        self._completed_at: deque[float] = deque()  # when each of `_completed` completed
        self._records: MemoryRecords | None = None
        self._approvals: dict[Key, tuple[str, str | None]] = {}
        """By key, the request and decision of a call that awaits (or awaited) approval."""

    approvals = True

    def claim(self, calls: Sequence[StoreCall]) -> list[StoreClaim]:
        owner = new_owner()
        if calls and not any([len(c) > 3 and c[3] for c in calls]):
            made = self._new_batch(owner, [c[0] for c in calls], [c[1] for c in calls],
                                   [c[2] for c in calls])
            if made is not None:
                return made
        return self._claim(calls, owner)

    def claim_new(self, keys: Sequence[StoreKey], tools: Sequence[str],
                  arguments: Sequence[Mapping[str, Any]]) -> list[StoreClaim]:
        """A payload's calls as columns: when they are new calls of one turn (the usual
        case), one record made of the columns as they come, stored once under the turn (the
        arguments' JSON text is the one copy taken)."""
        owner = new_owner()
        made = self._new_batch(owner, keys, tools, arguments) if keys else None
        if made is not None:
            return made
        return self._claim([_new_tuple(StoreCall, (key, tool, args, None)) for key, tool, args
                            in zip(keys, tools, arguments, strict=True)], owner)

    def _new_batch(self, owner: str, keys: Sequence[StoreKey], tools: Sequence[str],
                   arguments: Sequence[Mapping[str, Any]]) -> list[StoreClaim] | None:
        """Claim ``keys`` (distinct, as for `claim`) as one batch if they are calls of one
        turn, none of them held; else ``None`` (nothing claimed)."""
        turn = keys[0][:3]
        dialect, conversation, turn_id = turn
        members = []
        for key in keys:
            if key[2] != turn_id or key[1] != conversation or key[0] != dialect:
                return None
            members.append(key[3])
        ids = tuple(members)
        with self._lock:
            held = self._turns.get(turn)
            if held is None:  # the usual case: a new turn
                self._turns[turn] = Batch(owner, turn, ids, tuple(tools), to_json(arguments),
                                          keys)
            else:  # a turn of several payloads (CES, MCP): the batch beside the others
                calls = self._calls_of(turn) if isinstance(held, Batch) else held
                if not calls.keys().isdisjoint(ids):
                    return None
                batch = Batch(owner, turn, ids, tuple(tools), to_json(arguments), keys)
                for call_id in ids:
                    calls[call_id] = batch
            self._count += len(ids)
            if self._count > self.max_entries:
                self._evict()
        return [_new_tuple(StoreClaim, ("claimed", owner, 0.0, None, None, None))] * len(ids)

    def _claim(self, calls: Sequence[StoreCall], owner: str) -> list[StoreClaim]:
        ours: StoreClaim = _new_tuple(StoreClaim, ("claimed", owner, 0.0, None, None, None))
        with self._lock:
            answers = [self._claim_one(tuple(call[0]), call[1], call[2], owner, ours,
                                       call[3] if len(call) > 3 else None) for call in calls]
            if self._count > self.max_entries:
                self._evict()
        return answers

    def _claim_one(self, key: Key, tool: str, arguments: Any, owner: str, ours: StoreClaim,
                   request: str | None) -> StoreClaim:
        entry = self._entry(key)
        if entry is None:
            self._count += 1
            if request is not None:
                self._put(key, ("awaiting", "", 0.0, tool, to_json(arguments), None))
                self._approvals[key] = (request, None)
                return StoreClaim("awaiting", request=request)
            self._put(key, ("claimed", owner, 0.0, tool, to_json(arguments), None))
            return ours
        if entry[4] != fingerprint(tool, arguments):
            return StoreClaim("reused")
        if entry[0] == "completed":
            return StoreClaim("completed", entry[1], entry[2], _result(entry))
        approval = self._approvals.get(key)
        if entry[0] == "awaiting":
            assert approval is not None
            if approval[1] is None:
                return StoreClaim("awaiting", request=approval[0])
            self._put(key, ("claimed", owner, 0.0, *entry[3:]))  # the decision is consumed
            return StoreClaim("claimed", owner, 0.0, None, *approval)
        if owner_alive(entry[1]):
            return StoreClaim("running", entry[1], entry[2])
        self._put(key, (entry[0], owner, *entry[2:]))  # its worker is gone: ours now, as it was
        return StoreClaim("claimed", owner, entry[2], None, *(approval or (None, None)))

    def write(self, *, started: Sequence[Owned] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[Owned] = ()) -> list[bool]:
        now = time.time()
        applied: list[bool] = []
        with self._lock:
            for key, owner in started:
                mark = self._entry(key)
                if mark is not None and mark[1] == owner and mark[0] == "claimed":
                    self._put(key, ("started", owner, now, *mark[3:]))
            finished = self._completed
            together = self._complete_together(completed) if completed else 0
            if together:
                completed = ()  # stored in one step
            for key, owner, result, output_json in completed:
                kept = (result[0], None if output_json is not None else result[1], result[2],
                        output_json)
                value, index = self._find(key)
                if type(value) is Batch:
                    assert index is not None
                    if value.owner != owner or value.result(index) is not None:
                        applied.append(False)
                        continue
                    if value.results is None:
                        value.results = [None] * len(value.ids)
                        value.claimed = None
                    value.results[index] = kept
                    finished.append(tuple(key))  # the queue keeps plain tuples
                    applied.append(True)
                    continue
                if value is None or value[1] != owner or value[0] == "completed":  # type: ignore[index]
                    applied.append(False)
                    continue
                assert isinstance(value, tuple)
                self._put(key, ("completed", owner, value[2], value[3], value[4], kept))
                self._approvals.pop(key, None)
                finished.append(tuple(key))
                applied.append(True)
            if completed or together:
                self._completed_at.extend([now] * (len(finished) - len(self._completed_at)))
            for key, owner in released:
                entry = self._entry(key)
                if entry is not None and entry[1] == owner and entry[0] != "completed":
                    if key in self._approvals:  # decided, never run: it awaits its claim again
                        self._put(key, ("awaiting", "", 0.0, *entry[3:]))
                    else:
                        self._remove(key)
            if self._count > self.max_entries:
                self._evict()
        return applied or [True] * together

    def complete_claimed(self, owner: str, keys: Sequence[StoreKey],
                         results: Sequence[ResultFields]) -> list[bool]:
        """The results of a whole `claim_new` batch, in its order, by its owner, none stored
        before (a payload's usual end): set in one step; else as `write` stores them."""
        with self._lock:
            batch = self._holder(keys[0]) if keys else None
            if type(batch) is Batch and batch.claimed is not None and (
                    batch.owner == owner and not batch.split and batch.results is None
                    and batch.claimed == keys):
                batch.results = [(r.success, None if r.text is not None else r.output, r.error,
                                  r.text) for r in results]
                batch.claimed = None
                self._completed.append(batch)
                self._completed_at.append(time.time())
                if self._count > self.max_entries:
                    self._evict()
                return [True] * len(batch.ids)
        return super().complete_claimed(owner, keys, results)

    def _complete_together(self, completed: Sequence[StoreCompletion]) -> int:
        """Store ``completed`` in one step if they are every member of one batch, in its
        order, completed by its owner, none before (the usual end of a payload): how many,
        else 0 (they are stored one by one). The lock is held."""
        value = self._holder(completed[0][0])
        if type(value) is not Batch or value.results is not None or value.split or (
                len(completed) != len(value.ids)):
            return 0
        owner, turn = value.owner, value.turn
        if any([c[1] != owner or c[0][:3] != turn for c in completed]) or value.ids != tuple(
                [c[0][3] for c in completed]):
            return 0
        value.results = [(result[0], None if output_json is not None else result[1], result[2],
                          output_json) for _, _, result, output_json in completed]
        value.claimed = None
        self._completed.append(value)
        return len(completed)

    def lookup(self, keys: Sequence[StoreKey]) -> list[StoreClaim | None]:
        with self._lock:
            found = [(self._entry(key), self._approvals.get(tuple(key))) for key in keys]
        return [None if e is None else self._seen(e[0], e[1], e[2], _result(e),
                                                  a and a[0]) for e, a in found]

    def decide(self, key: StoreKey, digest: str, decision: str) -> bool:
        with self._lock:
            entry = self._entry(key)
            approval = self._approvals.get(tuple(key))
            if entry is None or entry[0] != "awaiting" or approval is None or (
                    approval[1] is not None or digest_of(entry[4]) != digest):
                return False
            self._approvals[tuple(key)] = (approval[0], decision)
            return True

    def awaiting(self) -> list[tuple[str, str | None]]:
        with self._lock:
            return [approval for key, approval in self._approvals.items()
                    if (entry := self._entry(key)) is not None and entry[0] == "awaiting"]

    def prune(self, older_than: float) -> int:
        cutoff, dropped = time.time() - older_than, 0
        with self._lock:
            completed, times = self._completed, self._completed_at
            while completed and times[0] < cutoff:
                times.popleft()
                dropped += self._drop_completed(completed.popleft())
        return dropped

    def records(self) -> MemoryRecords:
        """Records in this process's memory, like the calls."""
        if self._records is None:
            self._records = MemoryRecords()
        return self._records

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"<MemoryStore entries={len(self)}>"

    # ---------------------------------------------------------------- internals
    def _holder(self, key: Key | StoreKey) -> Stored | None:
        """The call's entry or batch, unchecked (a batch the turn holds alone may not have it)."""
        held = self._turns.get(key[:3])
        if held is None or type(held) is Batch:
            return held
        return held.get(key[3])  # type: ignore[union-attr]

    def _find(self, key: Key | StoreKey) -> tuple[Stored | None, int | None]:
        """What holds the call: its entry, or its batch and its position there."""
        held = self._turns.get(key[:3])
        if held is None:
            return None, None
        if type(held) is Batch:
            index = held.index(key[3])
            return (None, None) if index is None else (held, index)
        value = held.get(key[3])  # type: ignore[union-attr]
        if type(value) is Batch:
            return value, value.index(key[3])
        return value, None

    def _entry(self, key: Key | StoreKey) -> Entry | None:
        """The call's entry (a batch member made one of its own), its fingerprint made."""
        value, index = self._find(key)
        if value is None:
            return None
        if type(value) is Batch:
            assert index is not None
            entry = value.entry(index)
            value.split = True  # stored below as an entry of its own
            value.claimed = None
        else:
            assert isinstance(value, tuple)
            entry = value
        if type(entry[4]) is not str:  # made into the fingerprint on first need
            arguments = json.loads(entry[4]) if type(entry[4]) is bytes else entry[4]
            entry = (*entry[:4], fingerprint(entry[3], arguments), entry[5])
            self._put(key, entry)
        return entry

    def _calls_of(self, turn: Turn) -> dict[str, Stored]:
        """The turn's calls by id (a batch the turn held alone becomes its members')."""
        held = self._turns.get(turn)
        if held is None:
            held = self._turns[turn] = {}
        elif type(held) is Batch:
            held = self._turns[turn] = dict.fromkeys(held.ids, held)
        return held  # type: ignore[return-value]

    def _put(self, key: Key | StoreKey, entry: Entry) -> None:
        self._calls_of(key[:3])[key[3]] = entry

    def _remove(self, key: Key | StoreKey) -> None:
        turn = key[:3]
        calls = self._calls_of(turn)
        del calls[key[3]]
        if not calls:
            del self._turns[turn]
        self._count -= 1

    def _drop_completed(self, done: Done) -> int:
        """Drop what ``done`` completed, if it still holds it: how many calls."""
        if type(done) is Batch:
            turn = done.turn
            held = self._turns.get(turn)
            if held is done:  # the turn holds it alone, whole
                del self._turns[turn]
                self._count -= len(done.ids)
                return len(done.ids)
            if type(held) is not dict:
                return 0  # the turn is gone (pruned, released), or holds another batch alone
            # A turn of several payloads (CES, MCP: a session's every payload): the members
            # the batch still holds go in one pass; one made an entry of its own goes as one.
            ours = others = 0
            for call_id in done.ids:
                if held.get(call_id) is done:
                    del held[call_id]
                    ours += 1
                else:  # `_remove` counts it
                    others += self._drop_completed((*turn, call_id))
            if not held and self._turns.get(turn) is held:
                del self._turns[turn]
            self._count -= ours
            return ours + others
        assert isinstance(done, tuple)
        value, index = self._find(done)
        if value is None:
            return 0
        if type(value) is Batch:
            assert index is not None
            if value.result(index) is None:
                return 0
        elif value[0] != "completed":  # type: ignore[index]
            return 0
        self._remove(done)
        return 1

    def _evict(self) -> None:
        """Drop the oldest completed entries past the bound (calls in flight are kept)."""
        completed, times = self._completed, self._completed_at
        while self._count > self.max_entries and completed:
            times.popleft()
            self._drop_completed(completed.popleft())


def _result(entry: Entry) -> StoredResult | None:
    kept = entry[5]
    if entry[0] != "completed" or kept is None:
        return None
    success, output, error, output_json = kept
    if output_json is not None:
        output = json.loads(output_json)
    return _new_tuple(StoredResult, (success, output, error))
