"""Bounds on what toolbridge parses from a backend, shared by every dialect and the runtime.

A payload or an argument text past one of these is refused with a typed error (the payload) or
answered with an error result (the one call), before it is parsed.
"""

from __future__ import annotations

__all__ = ["MAX_ARGUMENT_BYTES", "MAX_NESTING_DEPTH", "MAX_PAYLOAD_BYTES"]

MAX_ARGUMENT_BYTES = 1 << 20
"""Largest argument text of one call (UTF-8 bytes): 1 MiB."""
MAX_NESTING_DEPTH = 200
"""Deepest nesting of arrays and objects in a payload or in one call's arguments."""
MAX_PAYLOAD_BYTES = 32 << 20
"""Largest backend payload (UTF-8 bytes of its JSON text): 32 MiB."""
