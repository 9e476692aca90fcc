"""`MemoryStore`: call states in this process's memory."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from itertools import repeat
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
from ._owners import new_owner, owner_alive
from ._records import MemoryRecords

__all__ = ["MemoryStore"]

_new_tuple = tuple.__new__  # StoreClaim(...) without its Python __new__
Key = tuple[str, ...]
Entry = tuple[str, str, float, str, Any, Any]
"""One call: ``(state, owner, started_at, tool, arguments, result)``; ``arguments`` makes its
fingerprint (JSON text, or the fingerprint once made), ``result`` is ``(success, output,
error, output_json)`` once completed."""


class _Batch:
    """New calls claimed together (a payload's, usually): one record for all of them, each
    key pointing to it. Its members' results are set together when they complete together,
    in the order they were claimed (the usual case), else one by one."""

    __slots__ = ("_index", "arguments", "claimed", "decoded", "keys", "owner", "results",
                 "split", "tools")

    def __init__(self, owner: str, keys: tuple[Key, ...], tools: Sequence[str],
                 arguments: bytes, claimed: Sequence[StoreKey] | None) -> None:
        self.owner = owner
        self.keys = keys
        self.tools = tools
        self.arguments = arguments
        """The members' arguments as one JSON list, taken at the claim."""
        self.claimed = claimed
        """The keys as `MemoryStore.claim_new` was given them, until the batch completes
        (what `MemoryStore.complete_claimed` compares its keys with)."""
        self.decoded: list[Any] | None = None
        self._index: dict[Key, int] | None = None
        self.results: list[Any] | None = None
        """Per member, its kept result once completed (``None`` until one is)."""
        self.split = False
        """Whether a member became an entry of its own (`MemoryStore._entry`)."""

    def index(self, key: Key) -> int:
        """A member's position."""
        if self._index is None:
            self._index = dict(zip(self.keys, range(len(self.keys)), strict=True))
        return self._index[key]

    def result(self, index: int) -> Any:
        return None if self.results is None else self.results[index]

    def entry(self, key: Key) -> Entry:
        """A member as a call of its own."""
        index = self.index(key)
        if self.decoded is None:
            self.decoded = json.loads(self.arguments)
        result = self.result(index)
        state = "claimed" if result is None else "completed"
        return (state, self.owner, 0.0, self.tools[index], self.decoded[index], result)


Stored = Entry | _Batch


class MemoryStore(ResultStore):
    """Call states in this process's memory, the oldest completed ones dropped past a bound.

    A queue holds the completed calls in completion order, so eviction drops the oldest first,
    never a call in flight. A payload's new calls are claimed as one record. What is kept is
    plain tuples of text and numbers where it can be, which the garbage collector stops
    tracking, so a full store adds little to a collection: keys are plain tuples (not
    `StoreKey`), arguments and JSON outputs their JSON text, decoded again when needed.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._calls: dict[Key, Stored] = {}
        self._completed: deque[Key] = deque()
        self._completed_at: deque[float] = deque()  # when each of `_completed` completed
        self._records: MemoryRecords | None = None
        self._approvals: dict[Key, tuple[str, str | None]] = {}
        """By key, the request and decision of a call that awaits (or awaited) approval."""

    approvals = True

    def claim(self, calls: Sequence[StoreCall]) -> list[StoreClaim]:
        return self._claim(calls, new_owner())

    def claim_new(self, keys: Sequence[StoreKey], tools: Sequence[str],
                  arguments: Sequence[Mapping[str, Any]]) -> list[StoreClaim]:
        """A payload's calls as columns: when every one is new (the usual case), one record
        made of the columns as they come (the arguments' JSON text is the one copy taken)."""
        owner = new_owner()
        plain = tuple(map(tuple, keys))
        stored = self._calls
        with self._lock:
            if stored.keys().isdisjoint(plain):
                stored.update(dict.fromkeys(plain, _Batch(owner, plain, tuple(tools),
                                                          to_json(arguments), keys)))
                if len(stored) > self.max_entries:
                    self._evict()
                return [_new_tuple(StoreClaim, ("claimed", owner, 0.0, None, None, None))] * len(
                    plain)
        return self._claim([_new_tuple(StoreCall, (key, tool, args, None)) for key, tool, args
                            in zip(keys, tools, arguments, strict=True)], owner)

    def _claim(self, calls: Sequence[StoreCall], owner: str) -> list[StoreClaim]:
        ours: StoreClaim = _new_tuple(StoreClaim, ("claimed", owner, 0.0, None, None, None))
        stored = self._calls
        keys = tuple([tuple(call[0]) for call in calls])
        awaiting = [c[3] for c in calls if len(c) > 3 and c[3]]
        with self._lock:
            if not awaiting and stored.keys().isdisjoint(keys):  # all new, none awaiting
                # (the usual case): one record
                batch = _Batch(owner, keys, tuple([c[1] for c in calls]),
                               to_json([c[2] for c in calls]), None)
                stored.update(dict.fromkeys(keys, batch))
                if len(stored) > self.max_entries:
                    self._evict()
                return [ours] * len(calls)
            answers = [self._claim_one(key, call[1], call[2], owner, ours,
                                       call[3] if len(call) > 3 else None)
                       for key, call in zip(keys, calls, strict=True)]
            if len(stored) > self.max_entries:
                self._evict()
        return answers

    def _claim_one(self, key: Key, tool: str, arguments: Any, owner: str, ours: StoreClaim,
                   request: str | None) -> StoreClaim:
        stored = self._calls
        entry = self._entry(key)
        if entry is None:
            if request is not None:
                stored[key] = ("awaiting", "", 0.0, tool, to_json(arguments), None)
                self._approvals[key] = (request, None)
                return StoreClaim("awaiting", request=request)
            stored[key] = ("claimed", owner, 0.0, tool, to_json(arguments), None)
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
            stored[key] = ("claimed", owner, 0.0, *entry[3:])  # the decision is consumed
            return StoreClaim("claimed", owner, 0.0, None, *approval)
        if owner_alive(entry[1]):
            return StoreClaim("running", entry[1], entry[2])
        stored[key] = (entry[0], owner, *entry[2:])  # its worker is gone: ours now, as it was
        return StoreClaim("claimed", owner, entry[2], None, *(approval or (None, None)))

    def write(self, *, started: Sequence[Owned] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[Owned] = ()) -> list[bool]:
        now = time.time()
        applied: list[bool] = []
        stored = self._calls
        with self._lock:
            for key, owner in started:  # a stored key keeps its plain tuple: no conversions
                mark = self._entry(key)
                if mark is not None and mark[1] == owner and mark[0] == "claimed":
                    stored[key] = ("started", owner, now, *mark[3:])
            finished = self._completed
            together = self._complete_together(completed) if completed else 0
            if together:
                completed = ()  # stored in one step
            for key, owner, result, output_json in completed:
                kept = (result[0], None if output_json is not None else result[1], result[2],
                        output_json)
                value = stored.get(key)
                if isinstance(value, _Batch):
                    index = value.index(key)
                    if value.owner != owner or value.result(index) is not None:
                        applied.append(False)
                        continue
                    if value.results is None:
                        value.results = [None] * len(value.keys)
                        value.claimed = None
                    value.results[index] = kept
                    finished.append(value.keys[index])
                    applied.append(True)
                    continue
                if value is None or value[1] != owner or value[0] == "completed":
                    applied.append(False)
                    continue
                stored[key] = ("completed", owner, value[2], value[3], value[4], kept)
                self._approvals.pop(key, None)
                finished.append(tuple(key))  # the queue keeps plain tuples
                applied.append(True)
            if completed or together:
                self._completed_at.extend([now] * (len(finished) - len(self._completed_at)))
            for key, owner in released:
                entry = self._entry(key)
                if entry is not None and entry[1] == owner and entry[0] != "completed":
                    if key in self._approvals:  # decided, never run: it awaits its claim again
                        stored[key] = ("awaiting", "", 0.0, *entry[3:])
                    else:
                        del stored[key]
            if len(stored) > self.max_entries:
                self._evict()
        return applied or [True] * together

    def complete_claimed(self, owner: str, keys: Sequence[StoreKey],
                         results: Sequence[ResultFields]) -> list[bool]:
        """The results of a whole `claim_new` batch, in its order, by its owner, none stored
        before (a payload's usual end): set in one step; else as `write` stores them."""
        with self._lock:
            batch = self._calls.get(keys[0]) if keys else None
            if type(batch) is _Batch and batch.claimed is not None and (
                    batch.owner == owner and not batch.split and batch.results is None
                    and batch.claimed == keys):
                batch.results = [(r.success, None if r.text is not None else r.output, r.error,
                                  r.text) for r in results]
                batch.claimed = None
                self._completed.extend(batch.keys)
                self._completed_at.extend(repeat(time.time(), len(batch.keys)))
                if len(self._calls) > self.max_entries:
                    self._evict()
                return [True] * len(batch.keys)
        return super().complete_claimed(owner, keys, results)

    def _complete_together(self, completed: Sequence[StoreCompletion]) -> int:
        """Store ``completed`` in one step if they are every member of one batch, in its
        order, completed by its owner, none before (the usual end of a payload): how many,
        else 0 (they are stored one by one). The lock is held."""
        value = self._calls.get(completed[0][0])
        if type(value) is not _Batch or value.results is not None or value.split or (
                len(completed) != len(value.keys)):
            return 0
        owner = value.owner
        if any([c[1] != owner for c in completed]) or value.keys != tuple(
                [c[0] for c in completed]):
            return 0
        value.results = [(result[0], None if output_json is not None else result[1], result[2],
                          output_json) for _, _, result, output_json in completed]
        value.claimed = None
        self._completed.extend(value.keys)
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
        return len(self._calls)

    def __repr__(self) -> str:
        return f"<MemoryStore entries={len(self)}>"

    # ---------------------------------------------------------------- internals
    def _entry(self, key: Key | StoreKey) -> Entry | None:
        """The call's entry (a batch member made one of its own), its fingerprint made."""
        value = self._calls.get(key)
        if value is None:
            return None
        if type(value) is _Batch:
            entry = value.entry(key)
            value.split = True  # stored below as an entry of its own
            value.claimed = None
        else:
            assert isinstance(value, tuple)
            entry = value
        if type(entry[4]) is not str:  # made into the fingerprint on first need
            arguments = json.loads(entry[4]) if type(entry[4]) is bytes else entry[4]
            entry = (*entry[:4], fingerprint(entry[3], arguments), entry[5])
            self._calls[key] = entry
        return entry

    def _drop_completed(self, key: Key) -> int:
        value = self._calls.get(key)
        if value is None:
            return 0
        if type(value) is _Batch:
            if value.result(value.index(key)) is None:
                return 0
        elif value[0] != "completed":  # type: ignore[index]
            return 0
        del self._calls[key]
        return 1

    def _evict(self) -> None:
        """Drop the oldest completed entries past the bound (calls in flight are kept)."""
        completed, times, stored = self._completed, self._completed_at, self._calls
        while len(stored) > self.max_entries and completed:
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
