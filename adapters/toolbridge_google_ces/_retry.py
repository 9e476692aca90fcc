"""Retries for ``runSession``, which is not idempotent: only when the turn surely did not run.

A retried user turn whose first reply was lost would be a second user turn, so ``runSession``
is retried only on 429 (``RESOURCE_EXHAUSTED``) and 503 (``UNAVAILABLE``), and on transport
errors raised before the request was sent (connect, connect timeout, pool timeout). A 500, a
read timeout or a dropped connection is raised at once. The SDK retries ``run_session`` on
nothing (``transports/base.py``: ``if_exception_type()`` with no types).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time

import httpx

from toolbridge import BackendError, RetryPolicy

__all__ = ["NOT_SENT", "RUN_SESSION_STATUSES", "asend_unsent_only", "run_session_policy",
           "send_unsent_only"]

log = logging.getLogger("toolbridge.google_ces")

RUN_SESSION_STATUSES = frozenset({429, 503})
"""The answers after which a ``runSession`` request is retried."""
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Transport errors raised before any byte of the request left."""


def run_session_policy(policy: RetryPolicy) -> RetryPolicy:
    """``policy`` limited to `RUN_SESSION_STATUSES`."""
    return dataclasses.replace(policy,
                               retry_statuses=policy.retry_statuses & RUN_SESSION_STATUSES)


def _failure(request: httpx.Request, exc: Exception, sent: bool) -> BackendError:
    note = "; not retried: the server may have run the turn" if sent else ""
    return BackendError(f"{request.method} {request.url.path}: {exc!r}{note}")


def _done(policy: RetryPolicy, response: httpx.Response | None, attempt: int) -> bool:
    return response is not None and not (
        attempt < policy.max_attempts and response.status_code in policy.retry_statuses)


def send_unsent_only(client: httpx.Client, request: httpx.Request,
                     policy: RetryPolicy) -> httpx.Response:
    """Send ``request``; retry only ``policy.retry_statuses`` and `NOT_SENT` errors."""
    attempt = 1
    while True:
        response: httpx.Response | None = None
        try:
            response = client.send(request)
        except NOT_SENT as exc:
            if attempt >= policy.max_attempts:
                raise _failure(request, exc, sent=False) from None
        except httpx.TransportError as exc:
            raise _failure(request, exc, sent=True) from None
        if response is not None and _done(policy, response, attempt):
            return response
        wait = policy.delay(attempt, response)
        log.info("retrying %s %s in %.2fs (attempt %d)", request.method, request.url.path,
                 wait, attempt + 1)
        time.sleep(wait)
        attempt += 1


async def asend_unsent_only(client: httpx.AsyncClient, request: httpx.Request,
                            policy: RetryPolicy) -> httpx.Response:
    """Async form of `send_unsent_only`."""
    attempt = 1
    while True:
        response: httpx.Response | None = None
        try:
            response = await client.send(request)
        except NOT_SENT as exc:
            if attempt >= policy.max_attempts:
                raise _failure(request, exc, sent=False) from None
        except httpx.TransportError as exc:
            raise _failure(request, exc, sent=True) from None
        if response is not None and _done(policy, response, attempt):
            return response
        wait = policy.delay(attempt, response)
        log.info("retrying %s %s in %.2fs (attempt %d)", request.method, request.url.path,
                 wait, attempt + 1)
        await asyncio.sleep(wait)
        attempt += 1
