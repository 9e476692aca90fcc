"""Shared HTTP plumbing for adapter clients: secrets, bounded retries honouring Retry-After, SSE.

What a dialect author's client imports. httpx is imported on first use, not by this module.
"""

from ._retries import RetryPolicy, Secret, asend_with_retries, raise_for_backend, send_with_retries
from ._sse import SSEDecoder

__all__ = [
    "RetryPolicy",
    "SSEDecoder",
    "Secret",
    "asend_with_retries",
    "raise_for_backend",
    "send_with_retries",
]
