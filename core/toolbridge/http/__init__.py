"""Shared HTTP plumbing for adapter clients: secrets, bounded retries honouring Retry-After, SSE,
and `exclusive_transport` (a connection per request in flight, for clients of many
conversations).

What a dialect author's client imports. httpx is imported on first use, not by this module.
"""

from .._redact import redact_text, redact_url
from ._retries import (
    RetryPolicy,
    Secret,
    asend_with_retries,
    raise_for_backend,
    send_with_retries,
    transport_error,
    transport_failure,
)
from ._sse import SSEDecoder
from ._transport import exclusive_transport

__all__ = [
    "RetryPolicy",
    "SSEDecoder",
    "Secret",
    "asend_with_retries",
    "exclusive_transport",
    "raise_for_backend",
    "redact_text",
    "redact_url",
    "send_with_retries",
    "transport_error",
    "transport_failure",
]
