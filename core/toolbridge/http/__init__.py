"""Shared HTTP plumbing for adapter clients: API calls described once and their sync and async
senders, secrets, bounded retries honouring Retry-After, SSE, `Network` (proxies, CAs, client
certificates, HTTP/2: the httpx clients of every adapter are built by it) and
`exclusive_transport` (a connection per request in flight, for direct async connections).

What a dialect author's client imports. httpx is imported on first use, not by this module.
"""

from typing import TYPE_CHECKING, Any

from .._redact import redact_text, redact_url
from ._calls import (
    Assembler,
    Call,
    Drain,
    Emit,
    Endpoint,
    Flow,
    Open,
    Pause,
    Reader,
    Relay,
    assembled,
)
from ._retries import (
    RetryPolicy,
    Secret,
    asend_with_retries,
    json_object,
    raise_for_backend,
    send_with_retries,
    transport_error,
    transport_failure,
)
from ._senders import AsyncSender, Sender, aread_events, read_events
from ._sse import JsonEvents, SSEDecoder

if TYPE_CHECKING:
    from ._clients import Network
    from ._transport import exclusive_transport

__all__ = [
    "Assembler",
    "AsyncSender",
    "Call",
    "Drain",
    "Emit",
    "Endpoint",
    "Flow",
    "JsonEvents",
    "Network",
    "Open",
    "Pause",
    "Reader",
    "Relay",
    "RetryPolicy",
    "SSEDecoder",
    "Secret",
    "Sender",
    "aread_events",
    "assembled",
    "asend_with_retries",
    "exclusive_transport",
    "json_object",
    "raise_for_backend",
    "read_events",
    "redact_text",
    "redact_url",
    "send_with_retries",
    "transport_error",
    "transport_failure",
]


def __getattr__(name: str) -> Any:
    if name == "exclusive_transport":  # with ssl and the network backend: on first use
        from ._transport import exclusive_transport

        globals()[name] = exclusive_transport
        return exclusive_transport
    if name == "Network":  # with ssl: on first use
        from ._clients import Network

        globals()[name] = Network
        return Network
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
