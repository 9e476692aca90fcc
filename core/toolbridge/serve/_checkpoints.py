"""Conversation checkpoints in the result store's records, for backends that cannot list
their pending calls: the step being answered, the answer about to be sent, the cursor.

A new driver for the same conversation (after a failure, or a restart of the process) resends
the saved answer, or answers the saved step (the store replays what already ran).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..plugin import Backend, Step
from ..store import MemoryRecords, Records

if TYPE_CHECKING:
    from ..store import ResultStore

__all__ = ["NAMESPACE", "Checkpoints"]

log = logging.getLogger("toolbridge.serve")

NAMESPACE = "toolbridge.serve"
"""The records namespace of conversation checkpoints (key ``<dialect>/<conversation>``, and
``<dialect>/key/<key>`` for a conversation held under a key of the caller's)."""
T = TypeVar("T")
Saved = tuple[int, Step, Mapping[str, Any] | None, Mapping[str, Any]]
"""(turn, step, answer or None, cursor)."""


class Checkpoints:
    """Reads and writes checkpoints; a no-op for backends that list their pending calls."""

    def __init__(self, records: Records, *, where: str = "") -> None:
        self.records = records
        self._where = where
        self._warned = False

    @classmethod
    def of(cls, store: ResultStore | None) -> Checkpoints:
        """The checkpoints of ``store``'s records; in memory when it keeps none."""
        records = store.records() if store is not None else None
        if records is None:
            return cls(MemoryRecords(), where=repr(store) if store is not None else "no store")
        return cls(records)

    def _needed(self, backend: Backend) -> bool:
        if backend.lists_pending or not backend.conversation:
            return False
        if self._where and not self._warned:
            self._warned = True
            log.warning("%s: the result store (%s) keeps no records, so the checkpoints of "
                        "its conversations live in this process only: a restarted worker "
                        "cannot resume a turn it was answering", backend.dialect.name,
                        self._where)
        return True

    async def _io(self, work: Callable[[], T]) -> T:
        if self.records.durable:
            return await asyncio.to_thread(work)
        return work()

    @staticmethod
    def _key(backend: Backend) -> str:
        return f"{backend.dialect.name}/{backend.conversation}"

    async def load(self, backend: Backend) -> Saved | None:
        """The checkpoint a previous driver of ``backend``'s conversation left, if any."""
        if not self._needed(backend):
            return None
        text = await self._io(lambda: self.records.get(NAMESPACE, self._key(backend)))
        if text is None:
            return None
        saved = json.loads(text)
        step = Step("requires_action", payload=saved["step"], fresh=True)
        return int(saved.get("turn", 0)), step, saved.get("answer"), saved.get("cursor") or {}

    async def received(self, backend: Backend, turn: int, step: Step) -> None:
        """A step with calls arrived (persisted before any of them runs)."""
        await self._put(backend, turn, step, None)

    async def sending(self, backend: Backend, turn: int, step: Step,
                      answer: Mapping[str, Any]) -> None:
        """``answer`` is about to be sent (persisted first, so it can be sent again)."""
        await self._put(backend, turn, step, answer)

    async def _put(self, backend: Backend, turn: int, step: Step,
                   answer: Mapping[str, Any] | None) -> None:
        if not self._needed(backend):
            return
        text = json.dumps({"turn": turn, "step": step.payload, "answer": answer,
                           "cursor": backend.checkpoint()}, separators=(",", ":"),
                          ensure_ascii=False, default=str)
        key = self._key(backend)
        await self._io(lambda: self.records.put(NAMESPACE, key, text))

    # ------------------------------------------------------------------ keyed conversations
    @staticmethod
    def _keyed(backend: Backend, key: str) -> str:
        return f"{backend.dialect.name}/key/{key}"

    async def keyed(self, backend: Backend, key: str) -> tuple[int, Mapping[str, Any]] | None:
        """(turn, cursor) a previous driver of the conversation held under ``key`` left."""
        text = await self._io(lambda: self.records.get(NAMESPACE, self._keyed(backend, key)))
        if text is None:
            return None
        saved = json.loads(text)
        return int(saved.get("turn", 0)), saved.get("cursor") or {}

    async def messaging(self, backend: Backend, key: str, turn: int) -> None:
        """Turn ``turn``'s message of the conversation held under ``key`` is about to go
        (durable first, with the cursor: the conversation's id once known)."""
        text = json.dumps({"turn": turn, "cursor": backend.checkpoint()},
                          separators=(",", ":"), ensure_ascii=False, default=str)
        where = self._keyed(backend, key)
        await self._io(lambda: self.records.put(NAMESPACE, where, text))

    async def ended(self, backend: Backend, key: str) -> None:
        """The conversation held under ``key`` ended: nothing to continue."""
        where = self._keyed(backend, key)
        await self._io(lambda: self.records.delete(NAMESPACE, where))

    async def done(self, backend: Backend) -> None:
        """The turn ended: nothing to resume."""
        if not self._needed(backend):
            return
        key = self._key(backend)
        await self._io(lambda: self.records.delete(NAMESPACE, key))
