"""`Records`: small text values by (namespace, key), kept beside a result store's calls.

The serve driver keeps conversation checkpoints here (the answer it is about to send, the
cursor to resume from), the migration tool its ledger. `ResultStore.records` gives the records
of a store, in the same database: `MemoryRecords` for `MemoryStore`, a ``toolbridge_records``
table for `SqliteStore` (same file) and `PostgresStore` (same database).
"""

from __future__ import annotations

import abc
import threading

__all__ = ["MemoryRecords", "Records", "check_value"]


def check_value(value: object) -> None:
    """A record value is text without NUL characters (PostgreSQL text cannot hold them; a
    JSON document never has one raw)."""
    if not isinstance(value, str):
        raise TypeError(f"a record value is text, not {type(value).__name__}")
    if "\0" in value:
        raise ValueError("a record value cannot contain NUL characters")


class Records(abc.ABC):
    """Text values by (namespace, key). Thread-safe; on a durable store a `put` or `delete`
    has reached the disk when it returns."""

    durable: bool = False
    """Whether values survive the process."""

    @abc.abstractmethod
    def get(self, namespace: str, key: str) -> str | None:
        """The value, or ``None``."""

    @abc.abstractmethod
    def put(self, namespace: str, key: str, value: str) -> None:
        """Set the value (replacing any); text without NUL characters."""

    @abc.abstractmethod
    def delete(self, namespace: str, key: str) -> bool:
        """Remove the value; whether there was one."""

    @abc.abstractmethod
    def list(self, namespace: str, prefix: str = "") -> dict[str, str]:
        """Every key of ``namespace`` starting with ``prefix``, with its value, by key."""

    def close(self) -> None:  # noqa: B027  (optional for records without resources)
        """Release resources (the owning store's `close` calls it)."""


class MemoryRecords(Records):
    """Records in this process's memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[tuple[str, str], str] = {}

    def get(self, namespace: str, key: str) -> str | None:
        with self._lock:
            return self._values.get((namespace, key))

    def put(self, namespace: str, key: str, value: str) -> None:
        check_value(value)
        with self._lock:
            self._values[(namespace, key)] = value

    def delete(self, namespace: str, key: str) -> bool:
        with self._lock:
            return self._values.pop((namespace, key), None) is not None

    def list(self, namespace: str, prefix: str = "") -> dict[str, str]:
        with self._lock:
            return {k: v for (n, k), v in sorted(self._values.items())
                    if n == namespace and k.startswith(prefix)}

    def __repr__(self) -> str:
        return f"<MemoryRecords {len(self._values)} values>"
