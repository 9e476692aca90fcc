"""Credentials out of URLs and of text that shows URLs, before anything prints or logs them."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["redact_query", "redact_text", "redact_url", "redact_value"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]+")
_SECRET_KEY = re.compile(r"pass|pwd|secret|token|key|sig|auth|credential|session|code",
                         re.IGNORECASE)
_SECRET_FIELD = re.compile(
    r"pass(word|wd)?$|^pwd$|secret|token|api[_-]?key|apikey|(access|private|secret)[_-]?key|"
    r"auth|credential|cookie|signature", re.IGNORECASE)
"""Names of fields that hold credentials (narrower than a URL's query: ``key`` alone is data)."""
MASK = "***"


def redact_url(url: str, *, keep_query: bool = True) -> str:
    """``url`` with its password masked (``postgresql://app:***@db/x``), for any scheme.

    ``keep_query``: query parameters stay, those whose name looks secret (``password``,
    ``key``, ``token``, ``sig``, ...) masked; otherwise the query string and fragment are dropped.
    Text that is not a URL comes back unchanged.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        userinfo, _, host = authority.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        authority = f"{user}:{MASK}@{host}" if colon else f"{userinfo}@{host}"
    path, _, fragment = tail.partition("#")
    path, qmark, query = path.partition("?")
    if not keep_query:
        return f"{scheme}://{authority}{path}"
    if qmark:
        path += "?" + redact_query(query)
    return f"{scheme}://{authority}{path}" + (f"#{fragment}" if "#" in tail else "")

def redact_query(query: str) -> str:
    """A URL's query string with the values of secret-looking names masked (``key=***``)."""
    return "&".join(_mask_pair(pair) for pair in query.split("&")) if query else query


def _mask_pair(pair: str) -> str:
    name, eq, _ = pair.partition("=")
    return f"{name}={MASK}" if eq and _SECRET_KEY.search(name) else pair


def redact_text(text: str) -> str:
    """``text`` with every URL in it stripped of credentials and query string."""
    return _URL.sub(lambda match: redact_url(match.group(), keep_query=False), text)


def redact_value(value: Any, depth: int = 0) -> Any:
    """JSON-like ``value`` with what looks secret masked: values under secret-looking keys
    (``password``, ``api_key``, ``token``, ...) and credentials in URLs inside text."""
    if depth > 32:
        return MASK
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: MASK if isinstance(k, str) and _SECRET_FIELD.search(k) else
                redact_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, depth + 1) for v in value]
    return value
