"""The toolbox the MCP server tests serve (``toolbridge mcp serve served_toolbox:toolbox``).

Environment: ``MCP_TEST_DIR``, a folder for the side-effect log (``effects.log``, one line
per run of ``charge``), handler marks (``marks.log``) and the SQLite store (``results.db``).
With ``MCP_TEST_KILL_AFTER_STORE=1`` the process SIGKILLs itself once, right after the store
recorded a result: between the handler and the reply (``killed`` marks it done).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolbridge import Toolbox, ToolContext, ToolError
from toolbridge.store import SqliteStore, StoreCompletion, StoreKey

HERE = Path(os.environ.get("MCP_TEST_DIR", "."))


def mark(line: str, name: str = "marks.log") -> None:
    with (HERE / name).open("a") as out:
        out.write(line + "\n")
        out.flush()
        os.fsync(out.fileno())


class KillingStore(SqliteStore):
    """SQLite, whose process dies once right after a completion is durable (a crash between
    the handler and the reply), whichever of the store's two ways stored it."""

    def write(self, *, started: Sequence[Any] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[Any] = ()) -> list[bool]:
        applied = super().write(started=started, completed=completed, released=released)
        if completed:
            _die_once()
        return applied

    def complete_claimed(self, owner: str, keys: Sequence[StoreKey],
                         results: Sequence[Any]) -> list[bool]:
        applied = super().complete_claimed(owner, keys, results)
        if keys:
            _die_once()
        return applied


def _die_once() -> None:
    once = HERE / "killed"
    if os.environ.get("MCP_TEST_KILL_AFTER_STORE") and not once.exists():
        once.touch()
        os.kill(os.getpid(), signal.SIGKILL)


toolbox = Toolbox(store=KillingStore(HERE / "results.db"), timeout=30)


@toolbox.tool(read_only=True)
def lookup(order: int) -> dict[str, Any]:
    """Look an order up.

    Args:
        order: The order number.
    """
    if order == 0:
        raise ToolError("no order 0; order numbers start at 1")
    return {"order": order, "status": "shipped"}


@toolbox.tool(side_effects=True, idempotent=True)
def charge(amount: int, context: ToolContext) -> str:
    """Charge a card once per call.

    Args:
        amount: Cents.
    """
    mark(f"{amount} {context.idempotency_key}", "effects.log")
    return f"charged {amount}"


@toolbox.tool
async def crunch(steps: int, context: ToolContext) -> str:
    """A long computation that reports progress.

    Args:
        steps: How many steps.
    """
    for step in range(1, steps + 1):
        await asyncio.sleep(0.01)
        context.heartbeat(f"step {step} of {steps}")
    return f"{steps} steps"


@toolbox.tool
async def wait_forever() -> str:
    """Waits until cancelled."""
    mark("started")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        mark("cancelled")
        raise
    return "never"
