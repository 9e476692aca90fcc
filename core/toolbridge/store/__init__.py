"""The durable result store: each call's state (claimed, started, completed), keyed per call.

A call is keyed by (dialect, conversation, turn, call id). `ResultStore.claim` takes a batch of
calls for one owner atomically, so two workers never both run one; `ResultStore.write` marks
calls started and stores their results, which answer every later delivery of the same call.
`MemoryStore` lives in the process; `SqliteStore` survives it and is shared by the processes of
one machine; `PostgresStore` is shared by several machines (loaded on first use: it needs
``toolbridge[postgres]``). `open_store` builds any of them from a URL; `fingerprint`,
`new_owner`, `end_owner` and `owner_alive` are what a store implementation keeps and checks.
`ResultStore.records` gives the `Records` beside a store's calls (key/value text in the same
database: the serve driver's checkpoints, the migration ledger). A call a person must approve
waits in the state ``awaiting`` with its `ApprovalRequest`; `ResultStore.decide` stores the
`Decision` its next claim consumes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._approvals import ApprovalRequest, Decision
from ._base import (
    ResultStore,
    StoreCall,
    StoreClaim,
    StoreCompletion,
    StoredResult,
    StoreKey,
    fingerprint,
    idempotency_key,
)
from ._memory import MemoryStore
from ._open import open_store
from ._owners import end_owner, new_owner, owner_alive
from ._records import MemoryRecords, Records
from ._sqlite import SqliteStore

if TYPE_CHECKING:
    from ._postgres import PostgresStore

__all__ = [
    "ApprovalRequest", "Decision", "MemoryRecords", "MemoryStore", "PostgresStore", "Records",
    "ResultStore", "SqliteStore", "StoreCall", "StoreClaim",
    "StoreCompletion", "StoreKey", "StoredResult", "end_owner", "fingerprint", "idempotency_key",
    "new_owner",
    "open_store", "owner_alive",
]


def __getattr__(name: str) -> Any:
    if name == "PostgresStore":  # psycopg is imported on first use, never by `import`
        from ._postgres import PostgresStore

        globals()[name] = PostgresStore
        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
