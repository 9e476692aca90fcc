"""Whether telemetry is on: the application's providers, read once per payload."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from ._instruments import Instruments

__all__ = ["CAPTURE_ENV", "active", "capture_content", "configure", "tracer"]

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' switch for recording content: ``true`` records arguments and
results (``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``), secrets masked."""

_settings: dict[str, Any] = {"capture": None, "tracer_provider": None, "meter_provider": None}
_cache: dict[int, Any] = {}
_global: list[Any] = [None, 0.0]
"""The instruments on OpenTelemetry's global provider once one is set (it can be set only
once), and until when (monotonic seconds) no provider was found."""
RECHECK = 1.0
"""Seconds between looks for a global provider while none is set: asking OpenTelemetry costs
a few microseconds (it reads the environment), so a provider set after toolbridge's first
payload is used from at most this long after."""


def configure(*, capture_content: bool | None = None, tracer_provider: Any = None,
              meter_provider: Any = None) -> None:
    """Set what toolbridge records: ``capture_content`` (``None``: the environment's
    `CAPTURE_ENV`), and providers to use instead of OpenTelemetry's global ones."""
    _settings.update(capture=capture_content, tracer_provider=tracer_provider,
                     meter_provider=meter_provider)
    _cache.clear()
    _global[:] = [None, 0.0]


def capture_content() -> bool:
    """Whether arguments and results go into spans."""
    chosen = _settings["capture"]
    if chosen is not None:
        return bool(chosen)
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in ("1", "true", "yes")


def active() -> Any:
    """The `Instruments` to record with, or ``None`` when no tracer provider is set (or
    OpenTelemetry was never imported: then none can be)."""
    provider = _settings["tracer_provider"]
    if provider is None:
        found, none_until = _global
        if found is not None:
            return found
        trace = sys.modules.get("opentelemetry.trace")
        if trace is None:
            return None
        now = time.monotonic()
        if now < none_until:
            return None
        provider = trace.get_tracer_provider()
        if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
            _global[1] = now + RECHECK
            return None
        _global[0] = Instruments(provider, _settings["meter_provider"], capture_content)
        return _global[0]
    found = _cache.get(id(provider))
    if found is None or found.provider is not provider:
        found = _cache[id(provider)] = Instruments(provider, _settings["meter_provider"],
                                                   capture_content)
    return found


def tracer() -> Any:
    """The OpenTelemetry tracer toolbridge records with (to hand to integrations such as
    Temporal's ``TracingInterceptor``), or ``None`` while no tracer provider is set."""
    found = active()
    return None if found is None else found.tracer
