"""httpx's own request log lines without credentials: a filter on the ``httpx`` logger that
masks secret-looking query parameters (``?key=``, ``?token=``, ...) of the URLs it logs."""

from __future__ import annotations

import logging
import threading

from .._redact import redact_url

__all__ = ["redact_httpx_logs"]

_installed = False
_lock = threading.Lock()


class _RedactedURLs(logging.Filter):
    """Masks credentials in URL arguments of a record (httpx logs ``request.url``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            record.args = tuple(
                redact_url(text) if "://" in (text := str(arg)) and not isinstance(
                    arg, (int, float)) else arg
                for arg in record.args)
        return True


def redact_httpx_logs() -> None:
    """Install the filter on the ``httpx`` logger, once per process (every client of the
    process logs through it, a caller's own ones too)."""
    global _installed
    with _lock:
        if not _installed:
            logging.getLogger("httpx").addFilter(_RedactedURLs())
            _installed = True
