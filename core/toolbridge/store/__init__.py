"""The durable result store: each call's state, started then completed, keyed per call.

A call is keyed by (dialect, conversation, turn, call id). `ResultStore.claim` marks it started
atomically, so two workers never both run it; `complete` stores its result, which answers every
later delivery of the same call. `MemoryStore` lives in the process; `SqliteStore` survives it
and is shared by the processes of one machine; `PostgresStore` is shared by several machines
(loaded on first use: it needs ``toolbridge[postgres]``). `open_store` builds any of them from a
URL; `new_owner`, `end_owner` and `owner_alive` are the owner ids a store implementation keeps.
`ResultStore.records` gives the `Records` beside a store's calls (key/value text in the same
database: the serve driver's checkpoints).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._base import ResultStore, StoreClaim, StoredResult, StoreKey
from ._memory import MemoryStore
from ._open import open_store
from ._owners import end_owner, new_owner, owner_alive
from ._records import MemoryRecords, Records
from ._sqlite import SqliteStore

if TYPE_CHECKING:
    from ._postgres import PostgresStore

__all__ = [
    "MemoryRecords", "MemoryStore", "PostgresStore", "Records", "ResultStore", "SqliteStore",
    "StoreClaim", "StoreKey", "StoredResult", "end_owner", "new_owner", "open_store",
    "owner_alive",
]


def __getattr__(name: str) -> Any:
    if name == "PostgresStore":  # psycopg is imported on first use, never by `import`
        from ._postgres import PostgresStore

        globals()[name] = PostgresStore
        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
