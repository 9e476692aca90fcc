"""Shared HTTP plumbing for adapter clients: secrets, bounded retries honouring Retry-After."""

from __future__ import annotations

import email.utils
import logging
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._redact import redact_text
from ..errors import BackendError, WireFormatError

if TYPE_CHECKING:
    import httpx

__all__ = ["RetryPolicy", "Secret", "asend_with_retries", "json_object", "raise_for_backend",
           "send_with_retries", "transport_error", "transport_failure"]

log = logging.getLogger("toolbridge.http")


class Secret:
    """A credential that never shows itself in reprs, logs or exceptions."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        """The secret value, for building a request header and nothing else."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> Any:
        raise TypeError("a Secret cannot be pickled")

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: Any) -> Secret:
        return self

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """In a pydantic model (a dialect's options) a `Secret` field takes text or a
        `Secret`, and dumps as ``"********"``."""
        from pydantic_core import core_schema

        def make(value: Any) -> Secret:
            if isinstance(value, Secret):
                return value
            if isinstance(value, str):
                return Secret(value)
            raise ValueError("expected a string or a toolbridge.http.Secret")

        return core_schema.no_info_plain_validator_function(
            make, serialization=core_schema.plain_serializer_function_ser_schema(
                lambda value: "********"))


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to retry: transport errors and ``retry_statuses``, bounded."""

    max_attempts: int = 4
    """Attempts in all, the first included."""
    backoff: float = 0.2
    """First delay in seconds, doubled each attempt (with jitter) when no Retry-After is given."""
    max_delay: float = 10.0
    """Longest single wait, Retry-After included."""
    retry_statuses: frozenset[int] = frozenset({408, 409, 429, 500, 502, 503, 504})
    refused_statuses: frozenset[int] = frozenset()
    """The answers that promise the service did not act on the request: the only ones after
    which a request that is not idempotent is sent again here (those of them also in
    ``retry_statuses``). None by default: any error answer may come after the service acted
    (a 5xx whose reply was lost, a proxy's 429), so it goes to the caller, whose driver asks
    the backend (`toolbridge.plugin.Backend.sent`) instead of sending it twice. A service
    whose protocol promises it (CES: gRPC's ``RESOURCE_EXHAUSTED``, ``UNAVAILABLE``) names
    them."""

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        """Seconds to wait before attempt ``attempt + 1``."""
        if response is not None:
            hinted = _retry_after(response)
            if hinted is not None:
                return min(hinted, self.max_delay)
        base = self.backoff * (2 ** (attempt - 1))
        return float(min(base * (0.75 + random.random() / 2), self.max_delay))


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds the server asked us to wait, or ``None`` when it said nothing usable."""
    ms = _finite(response.headers.get("retry-after-ms"))
    if ms is not None:
        return max(ms / 1000, 0.0)
    value = response.headers.get("retry-after")
    if not value:
        return None
    seconds = _finite(value)
    if seconds is not None:
        return max(seconds, 0.0)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # neither seconds nor an HTTP date: ignore it, use our own backoff
    return max(when.timestamp() - time.time(), 0.0)


def _finite(text: str | None) -> float | None:
    try:
        value = float(text) if text else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


Retryable = Callable[["httpx.Response"], bool]


def _should_retry(policy: RetryPolicy, response: httpx.Response, extra: Retryable | None,
                  idempotent: bool) -> bool:
    """Whether ``response`` is answered by sending the request again: for a request that is
    not idempotent, only when the service says it did not act on it."""
    status = response.status_code
    if not idempotent:
        return status in policy.retry_statuses and status in policy.refused_statuses
    return status in policy.retry_statuses or bool(extra and extra(response))


def send_with_retries(
    client: httpx.Client, request: httpx.Request, policy: RetryPolicy = RetryPolicy(),
    *, retry_if: Retryable | None = None, idempotent: bool = True, stream: bool = False,
    what: str = "",
) -> httpx.Response:
    """Send ``request``, retrying transport errors and retryable answers; the last answer wins.

    ``idempotent=False`` (a request that must not run twice, e.g. a new user turn) retries only
    errors raised before the request left (connect errors and connect or pool timeouts) and
    answers that promise the service did not act on it (`RetryPolicy.refused_statuses`, none
    by default): after a read error, a read timeout, a dropped connection or an error answer
    the service may have acted on it, so that goes to the caller at once (the serve driver
    asks the backend).
    ``stream=True`` opens a streamed response (the caller reads and closes it; one that is
    retried is closed here). ``what`` names the request in a transport error (default: its
    method and path).
    """
    import httpx

    attempt = 1
    while True:
        failed: Exception | None = None
        try:
            response = client.send(request, stream=stream)
        except httpx.TransportError as exc:
            failed, response = exc, None
        if failed is not None:  # raised out here, the httpx error is not chained to ours
            error = transport_failure(request, failed, attempt, policy.max_attempts,
                                      idempotent=idempotent, what=what)
            if error is not None:
                raise error
        if response is not None:
            if not (attempt < policy.max_attempts
                    and _should_retry(policy, response, retry_if, idempotent)):
                return response
            if stream:
                response.close()
        wait = policy.delay(attempt, response)
        log.info("retrying %s %s in %.2fs (attempt %d)", request.method, request.url.path,
                 wait, attempt + 1)
        time.sleep(wait)
        attempt += 1


async def asend_with_retries(
    client: httpx.AsyncClient, request: httpx.Request, policy: RetryPolicy = RetryPolicy(),
    *, retry_if: Retryable | None = None, idempotent: bool = True, stream: bool = False,
    what: str = "",
) -> httpx.Response:
    """Async form of `send_with_retries`."""
    import httpx

    attempt = 1
    while True:
        failed: Exception | None = None
        try:
            response = await client.send(request, stream=stream)
        except httpx.TransportError as exc:
            failed, response = exc, None
        if failed is not None:  # raised out here, the httpx error is not chained to ours
            error = transport_failure(request, failed, attempt, policy.max_attempts,
                                      idempotent=idempotent, what=what)
            if error is not None:
                raise error
        if response is not None:
            if not (attempt < policy.max_attempts
                    and _should_retry(policy, response, retry_if, idempotent)):
                return response
            if stream:
                await response.aclose()
        wait = policy.delay(attempt, response)
        log.info("retrying %s %s in %.2fs (attempt %d)", request.method, request.url.path,
                 wait, attempt + 1)
        import asyncio  # loaded by the running loop already; not by importing this module

        await asyncio.sleep(wait)
        attempt += 1


def transport_error(what: str, exc: BaseException, note: str = "") -> BackendError:
    """A `BackendError` for a request that failed in transit (connect error, timeout, dropped
    connection): ``what``, the failure's type and its message with URLs redacted, nothing else.

    Raise it outside the ``except`` block that caught ``exc`` (keep ``exc`` in a variable and
    leave the block first): raised inside, Python chains ``exc`` as ``__context__`` even
    ``from None``, and an httpx error holds its request, credential headers included.
    """
    message = " ".join(redact_text(str(exc)).split())
    detail = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return BackendError(f"{what}: {detail}" + (f"; {note}" if note else ""))


def transport_failure(request: httpx.Request, exc: Exception, attempt: int, attempts: int, *,
                      idempotent: bool = True, what: str = "") -> BackendError | None:
    """The error to raise for ``request`` failing in transit on attempt ``attempt`` of
    ``attempts``, or ``None`` when it may be tried again (see `transport_error` for where to
    raise it).

    A request that may have reached the server (anything but a connect error or timeout) is
    tried again only when ``idempotent``; a server certificate that the CAs do not trust,
    never. The message names the server (``host:port``) and the cause.
    """
    import httpx

    url = request.url
    port = url.port or (443 if url.scheme == "https" else 80)
    what = what or f"{request.method} {url.path} to {url.host}:{port}"
    sent = not isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout))
    if sent and not idempotent:
        return transport_error(what, exc, "not retried: the server may have acted on it")
    if _untrusted(exc):
        return transport_error(what, exc, "check verify= or SSL_CERT_FILE")
    if attempt >= attempts:
        return transport_error(what, exc)
    return None


def _untrusted(exc: BaseException) -> bool:
    """Whether ``exc`` comes from a certificate that failed verification."""
    import ssl

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def json_object(response: httpx.Response, dialect: str, what: str = "") -> dict[str, Any]:
    """A successful answer's body as a JSON object; a `WireFormatError` naming ``<body>``
    (the message starts ``what: `` when given) for one that is not JSON, or not an object."""
    prefix = f"{what}: " if what else ""
    try:
        data = response.json()
    except ValueError:
        raise WireFormatError(dialect, "<body>", f"{prefix}answer is not JSON",
                              response.text[:2000]) from None
    if not isinstance(data, dict):
        raise WireFormatError(dialect, "<body>", f"{prefix}expected an object", data)
    return data


def raise_for_backend(response: httpx.Response, what: str) -> None:
    """Raise `BackendError` (status and decoded body, never headers) for an error answer."""
    if response.is_success:
        return
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text[:2000]
    message = body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message", body)
    raise BackendError(f"{what}: HTTP {response.status_code}: {redact_text(str(message))}",
                       status=response.status_code, body=body)
