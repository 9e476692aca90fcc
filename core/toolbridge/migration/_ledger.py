"""The ledger: what a migration created, so a second run continues instead of duplicating.

Entries live in a `toolbridge.store.Records` (the result store's records, namespace
``migration:<name>``) or in a JSON file (`FileRecords`). Each is a small JSON document:
``{"state": "creating" | "created" | "done", "target_id": ..., "appended": n}``; the intent
(``creating``) is written before each create, the id right after it returns.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..store import Records
from ..store._records import check_value

__all__ = ["FileRecords", "Ledger"]


class FileRecords(Records):
    """`Records` in one JSON file, rewritten atomically (temporary file, fsync, rename) on
    every change: for a ledger without a database."""

    durable = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._values: dict[str, dict[str, str]] = {}
        if self.path.exists():
            try:
                self._values = json.loads(self.path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise UsageError(f"ledger {self.path} is not JSON: {exc}") from None

    def _save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as file:
            json.dump(self._values, file, indent=1, sort_keys=True)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, self.path)

    def get(self, namespace: str, key: str) -> str | None:
        with self._lock:
            return self._values.get(namespace, {}).get(key)

    def put(self, namespace: str, key: str, value: str) -> None:
        check_value(value)
        with self._lock:
            self._values.setdefault(namespace, {})[key] = value
            self._save()

    def delete(self, namespace: str, key: str) -> bool:
        with self._lock:
            found = self._values.get(namespace, {}).pop(key, None) is not None
            if found:
                self._save()
            return found

    def list(self, namespace: str, prefix: str = "") -> dict[str, str]:
        with self._lock:
            return {k: v for k, v in sorted(self._values.get(namespace, {}).items())
                    if k.startswith(prefix)}

    def __repr__(self) -> str:
        return f"<FileRecords {self.path}>"


class Ledger:
    """One migration's entries in ``records``: ``agent/<assistant id>``,
    ``thread/<thread id>``."""

    def __init__(self, records: Records, migration: str) -> None:
        self.records = records
        self.migration = migration
        self.namespace = f"migration:{migration}"

    def get(self, kind: str, source_id: str) -> dict[str, Any]:
        raw = self.records.get(self.namespace, f"{kind}/{source_id}")
        value = json.loads(raw) if raw else {}
        return value if isinstance(value, dict) else {}

    def put(self, kind: str, source_id: str, **entry: Any) -> dict[str, Any]:
        self.records.put(self.namespace, f"{kind}/{source_id}",
                         json.dumps(entry, sort_keys=True))
        return entry

    def entries(self, kind: str) -> dict[str, dict[str, Any]]:
        return {key.partition("/")[2]: json.loads(value)
                for key, value in self.records.list(self.namespace, f"{kind}/").items()}

    def __repr__(self) -> str:
        return f"<Ledger {self.migration!r} in {self.records!r}>"
