"""The journal: every request an emulator received and every response it sent."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from .._redact import redact_query

__all__ = ["Intake", "Journal", "JournalEntry"]

_SECRET_HEADERS = frozenset({"authorization", "api-key", "x-goog-api-key", "cookie"})


@dataclass
class JournalEntry:
    """One exchange. Credentials in headers are replaced by ``"<redacted>"``; those in the
    query (``key=...``, ``token=...``) by ``***``."""

    index: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    """The request body: decoded JSON, else text."""
    status: int = 0
    response: Any = None
    """The response body (decoded JSON, else text), or the list of events of a stream."""
    events: list[Any] = field(default_factory=list)
    dropped: int | None = None
    """The status of the reply an ``after_processing`` fault dropped (the request was
    processed; ``status`` and ``response`` are the injected failure's)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Journal:
    """Thread-safe, append-only record of an emulator's traffic."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[JournalEntry] = []

    def open(self, method: str, path: str, query: str, headers: dict[str, str],
             body: Any) -> JournalEntry:
        clean = {k: ("<redacted>" if k.lower() in _SECRET_HEADERS else v)
                 for k, v in headers.items()}
        with self._lock:
            entry = JournalEntry(len(self._entries) + 1, method, path, redact_query(query),
                                 clean, body)
            self._entries.append(entry)
        return entry

    def entries(self, method: str | None = None, contains: str | None = None) -> list[JournalEntry]:
        """Entries so far, optionally only one method and paths containing ``contains``."""
        with self._lock:
            return [e for e in self._entries
                    if (method is None or e.method == method)
                    and (contains is None or contains in e.path)]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class Intake:
    """What an emulated service took, the same record on every dialect: the user messages it
    stored and the results it accepted, by conversation. Each emulator fills it where it
    accepts them, before replying (a reply lost later does not undo it)."""

    def __init__(self, requests: Callable[[], int] = lambda: 0) -> None:
        self._lock = threading.Lock()
        self._requests = requests
        self._messages: list[tuple[str, str, int]] = []
        self._results: list[tuple[str, str, int]] = []

    def took_message(self, conversation: str, text: str) -> None:
        """A user message stored in ``conversation``."""
        with self._lock:
            self._messages.append((conversation, text, self._requests()))

    def message_requests(self) -> list[int]:
        """The number of the request (1-based, as `FailRule.nth` counts) that carried each
        stored user message, in order (requests are numbered as they arrive: exact for a
        conversation's requests made one after another)."""
        with self._lock:
            return [nth for _, _, nth in self._messages]

    def took_results(self, conversation: str, call_ids: Iterable[str]) -> None:
        """Results accepted in ``conversation``, by call id."""
        with self._lock:
            nth = self._requests()
            self._results += [(conversation, str(i), nth) for i in call_ids]

    def messages(self) -> dict[str, list[str]]:
        """Conversation id -> its user messages, in the order they were stored."""
        with self._lock:
            found: dict[str, list[str]] = {}
            for conversation, text, _ in self._messages:
                found.setdefault(conversation, []).append(text)
            return found

    def results(self) -> list[str]:
        """The call ids of the accepted results, in order."""
        with self._lock:
            return [call for _, call, _ in self._results]

    def result_requests(self) -> list[int]:
        """The numbers of the requests that carried accepted results, in order, each once
        (numbered as `message_requests` says)."""
        with self._lock:
            return list(dict.fromkeys(nth for _, _, nth in self._results))
