"""`MemoryStore`: call states in this process's memory, with a batch path for the runtime."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from ..model import ToolCall
from ._base import ResultStore, StoreClaim, StoredResult, StoreKey, _canonical, fingerprint
from ._owners import new_owner
from ._records import MemoryRecords

__all__ = ["Batch", "MemoryStore", "content_of"]

_new_tuple = tuple.__new__  # StoreClaim(...), StoredResult(...) without their Python __new__
_SCALARS = frozenset((str, int, float, bool, type(None)))
Turn = tuple[str, str, str]
"""(dialect, conversation, turn): the calls of one turn share a table."""
Entry = tuple[str, Any, str, float, StoredResult | None]
"""One call: ``(state, fingerprint, owner, started_at, result)``."""


class Batch:
    """Calls of one turn claimed together by the runtime: one record for all of them.

    A table maps each member's id to the batch itself, so claiming and completing a payload
    costs one record, not one per call.
    """

    __slots__ = ("contents", "ids", "owner", "results", "started_at")

    def __init__(self, owner: str, started_at: float) -> None:
        self.owner = owner
        self.started_at = started_at
        self.ids: dict[str, int] = {}
        """Member call id -> its index."""
        self.contents: list[Any] = []
        """Per member: its fingerprint, or what makes it (see `MemoryStore`)."""
        self.results: list[tuple[bool, Any, str | None] | None] | None = None
        """Per member once the batch completed: ``(success, output, error)``, or ``None``
        for a member that never completed."""

    def entry(self, call_id: str) -> Entry:
        """The member's state as a per-call entry (its fingerprint made text, and kept)."""
        index = self.ids[call_id]
        content = self.contents[index]
        if type(content) is tuple:
            name, arguments = content
            content = self.contents[index] = f"{name}\0{_canonical(arguments)}"
        done = None if self.results is None else self.results[index]
        if done is None:
            return ("started", content, self.owner, self.started_at, None)
        return ("completed", content, self.owner, self.started_at, _new_tuple(StoredResult, done))


class MemoryStore(ResultStore):
    """Call states in this process's memory, the oldest completed ones dropped past a bound.

    Entries live in one table per turn, keyed by call id; a queue holds the completed ones in
    completion order, so eviction drops the oldest completed calls first, never a call in
    flight. A payload the runtime claims at once is one `Batch` record. A call whose
    arguments are flat scalars keeps ``(name, copy of the arguments)`` instead of its
    fingerprint text, made into the text only when a re-delivery needs it.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._turns: dict[Turn, dict[str, Entry | Batch]] = {}
        self._size = 0
        self._completed: deque[tuple[Turn, str | Batch]] = deque()
        self._records: MemoryRecords | None = None

    # ---------------------------------------------------------------- ResultStore
    def claim(self, key: StoreKey, fingerprint: str, tool: str) -> StoreClaim:
        with self._lock:
            table = self._table(key)
            entry = self._entry(table, key[3])
            if entry is None:
                owner = new_owner()
                table[key[3]] = ("started", fingerprint, owner, time.time(), None)
                self._grown(1)
                return _new_tuple(StoreClaim, ("claimed", fingerprint, owner, 0.0, None))
        return self._found(*entry)

    def claim_call(self, key: StoreKey, call: ToolCall) -> StoreClaim:
        with self._lock:
            table = self._table(key)
            entry = self._entry(table, key[3])
            if entry is None:
                owner = new_owner()
                table[key[3]] = ("started", content_of(call), owner, time.time(), None)
                self._grown(1)
                return _new_tuple(StoreClaim, ("claimed", "", owner, 0.0, None))
        return self._found(*entry)

    def complete(self, key: StoreKey, owner: str, result: StoredResult) -> bool:
        with self._lock:
            turn = (key[0], key[1], key[2])
            table = self._turns.get(turn, {})
            entry = self._entry(table, key[3])
            if entry is None or entry[2] != owner:
                return False
            if entry[0] != "completed":
                self._completed.append((turn, key[3]))
            table[key[3]] = ("completed", entry[1], owner, entry[3], result)
            self._grown(0)
            return True

    def take_over(self, key: StoreKey, previous_owner: str) -> str | None:
        with self._lock:
            table = self._table(key)
            entry = self._entry(table, key[3])
            if entry is None or entry[0] == "completed" or entry[2] != previous_owner:
                return None
            owner = new_owner()
            table[key[3]] = ("started", entry[1], owner, time.time(), None)
            return owner

    def release(self, key: StoreKey, owner: str) -> None:
        with self._lock:
            turn = (key[0], key[1], key[2])
            table = self._turns.get(turn, {})
            entry = self._entry(table, key[3])
            if entry is not None and entry[0] != "completed" and entry[2] == owner:
                self._drop(turn, table, key[3])

    def get(self, key: StoreKey) -> StoreClaim | None:
        with self._lock:
            entry = self._entry(self._turns.get((key[0], key[1], key[2]), {}), key[3])
        return None if entry is None else self._found(*entry)

    def records(self) -> MemoryRecords:
        """Records in this process's memory, like the calls."""
        if self._records is None:
            self._records = MemoryRecords()
        return self._records

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"<MemoryStore entries={len(self)}>"

    # ---------------------------------------------------------------- the runtime's batch path
    def _claim_turn(self, turn: Turn, ids: Sequence[str], contents: Sequence[Any]
                   ) -> tuple[Batch, list[StoreClaim | None]]:
        """Claim the calls ``ids`` of one turn (unique) under one lock, as one `Batch`; per
        call ``None`` when the claim is ours, else what is stored for it (as `claim` says).

        ``contents`` has per call what to keep of it: `content_of` the call, or ``(name,
        arguments)`` when its arguments are flat scalars nobody will change (kept as is).
        """
        batch = Batch(new_owner(), time.time())
        with self._lock:
            table = self._turns.get(turn)
            if table is None:
                table = self._turns[turn] = {}
            if table.keys().isdisjoint(ids):  # all new (the common case): in bulk
                batch.ids = dict(zip(ids, range(len(ids)), strict=True))
                batch.contents = list(contents)
                table.update(dict.fromkeys(ids, batch))
                found: list[StoreClaim | None] = [None] * len(ids)
            else:
                found = []
                members, kept = batch.ids, batch.contents
                for call_id, content in zip(ids, contents, strict=True):
                    entry = self._entry(table, call_id)
                    if entry is not None:
                        found.append(self._found(*entry))
                        continue
                    table[call_id] = batch
                    members[call_id] = len(kept)
                    kept.append(content)
                    found.append(None)
            self._grown(len(batch.ids))
        return batch, found

    def _complete_turn(self, turn: Turn, batch: Batch,
                      results: Sequence[tuple[bool, Any, str | None]]) -> None:
        """Store the ``(success, output, error)`` of the first ``len(results)`` members of
        ``batch``, in claim order (the rest never completed)."""
        done: list[tuple[bool, Any, str | None] | None] = list(results)
        if len(done) < len(batch.ids):
            done += [None] * (len(batch.ids) - len(done))
        with self._lock:
            batch.results = done
            self._completed.append((turn, batch))
            self._grown(0)

    # ---------------------------------------------------------------- internals
    def _table(self, key: StoreKey) -> dict[str, Entry | Batch]:
        turn = (key[0], key[1], key[2])
        table = self._turns.get(turn)
        if table is None:
            table = self._turns[turn] = {}
        return table

    @staticmethod
    def _entry(table: dict[str, Entry | Batch], call_id: str) -> Entry | None:
        """The call's entry (a batch member's made one), its fingerprint text made and kept."""
        entry = table.get(call_id)
        if entry is None:
            return None
        if type(entry) is Batch:
            return entry.entry(call_id)
        assert isinstance(entry, tuple)
        content = entry[1]
        if type(content) is tuple:
            name, arguments = content
            entry = (entry[0], f"{name}\0{_canonical(arguments)}", *entry[2:])
            table[call_id] = entry
        return entry

    def _grown(self, added: int) -> None:
        self._size += added
        if self._size > self.max_entries:
            self._evict()

    def _drop(self, turn: Turn, table: dict[str, Entry | Batch], call_id: str) -> None:
        del table[call_id]
        self._size -= 1
        if not table:
            del self._turns[turn]

    def _evict(self) -> None:
        """Drop the oldest completed entries past the bound (calls in flight are kept)."""
        completed, turns = self._completed, self._turns
        while self._size > self.max_entries and completed:
            turn, what = completed.popleft()
            table = turns.get(turn, {})
            if type(what) is Batch:
                assert what.results is not None
                for call_id, index in what.ids.items():
                    if table.get(call_id) is what and what.results[index] is not None:
                        self._drop(turn, table, call_id)
                continue
            assert isinstance(what, str)
            entry = table.get(what)
            if type(entry) is tuple and entry[0] == "completed":
                self._drop(turn, table, what)


def content_of(call: ToolCall) -> Any:
    """What a claim keeps of the call: its fingerprint, or what makes it (see `MemoryStore`)."""
    if call.raw_arguments is not None:
        return fingerprint(call)  # cheap: the text as sent
    arguments = call.arguments
    for value in arguments.values():
        if type(value) not in _SCALARS:  # nested: fix its text now
            return fingerprint(call)
    return (call.name, dict(arguments))  # immutable values: a shallow copy keeps them as sent
