"""Wire constants of the Model Context Protocol (mcp 2.3.0 / protocol 2026-07-28 names)."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["DIALECT", "IDEMPOTENCY_META", "NAME_RULE", "SERVER_NAME"]

DIALECT = "mcp"
NAME_RULE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
"""MCP's tool names (SEP-986): letters, digits, ``_``, ``-`` and ``.``, 1 to 128."""
IDEMPOTENCY_META: Final = "io.toolbridge/idempotencyKey"
"""The ``_meta`` entry of a ``tools/call`` request naming the call across re-issues: a call
re-issued with the same key (after a broken stream, with a new request id) is the same call,
answered from the result store (docs/mcp.md)."""
SERVER_NAME = "toolbridge"
"""The ``serverInfo.name`` a toolbox served over MCP announces by default."""
