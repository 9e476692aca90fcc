"""The retry policy of ``runSession``, which is not idempotent.

A retried user turn whose first reply was lost would be a second user turn, so ``runSession``
is retried only on 429 (``RESOURCE_EXHAUSTED``) and 503 (``UNAVAILABLE``: gRPC's "not
processed", so both are its `RetryPolicy.refused_statuses`), and, through
``send_with_retries(..., idempotent=False)``, on transport errors raised before the request was
sent. A 500, a read timeout or a dropped connection is raised at once. The SDK retries
``run_session`` on nothing (``transports/base.py``: ``if_exception_type()`` with no types).
"""

from __future__ import annotations

import dataclasses

from toolbridge.http import RetryPolicy

__all__ = ["RUN_SESSION_STATUSES", "run_session_policy"]

RUN_SESSION_STATUSES = frozenset({429, 503})
"""The answers after which a ``runSession`` request is retried."""


def run_session_policy(policy: RetryPolicy) -> RetryPolicy:
    """``policy`` limited to `RUN_SESSION_STATUSES`."""
    return dataclasses.replace(policy,
                               retry_statuses=policy.retry_statuses & RUN_SESSION_STATUSES,
                               refused_statuses=RUN_SESSION_STATUSES)
