"""The toolbox the fleet's tests serve, in-process and from `toolbridge worker` processes.

Every handler appends a line to a ledger (``$TOOLBRIDGE_FLEET_LEDGER``): ``name call-id pid``,
so a test counts how often each side effect ran. ``charge`` is side-effecting; the reconcile
hook answers a started ``charge`` whose worker died from the ledger (it ran when its line is
there). ``$TOOLBRIDGE_FLEET_STORE`` is the shared result store; ``$TOOLBRIDGE_FLEET_SLOW``
the seconds ``charge`` takes after writing its line (a window to kill a worker in).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path
from typing import Any

import toolbridge
from toolbridge import ToolCall, ToolContext, ToolDefinition, ToolResult
from toolbridge.plugin import hookimpl, register_plugin
from toolbridge.tools import ToolRetry


def ledger() -> Path:
    return Path(os.environ.get("TOOLBRIDGE_FLEET_LEDGER", "/tmp/toolbridge-fleet-ledger"))


def write(name: str, call_id: str) -> None:
    with ledger().open("a") as out:
        out.write(f"{name} {call_id} {os.getpid()}\n")
        out.flush()
        os.fsync(out.fileno())


def entries(name: str) -> list[str]:
    """Call ids of the ledger lines of ``name``, one per run."""
    path = ledger()
    if not path.exists():
        return []
    return [line.split()[1] for line in path.read_text().splitlines()
            if line.split()[:1] == [name]]


RETRY = ToolRetry(backoff=0.1, max_delay=1.0)
"""A call whose worker died runs again 0.1 s after its heartbeat timeout (the default
waits 1 s, doubling): the attempts are the default's five, only closer together."""


def make_toolbox(store: Any = None) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(store=store or os.environ.get("TOOLBRIDGE_FLEET_STORE"))

    @box.tool(retry=RETRY)
    def lookup(key: str, context: ToolContext) -> str:
        """Look a key up."""
        write("lookup", context.call_id)
        time.sleep(float(os.environ.get("TOOLBRIDGE_FLEET_LOOKUP", "0")))
        return f"value of {key}"

    @box.tool(side_effects=True, timeout=60, retry=RETRY)
    async def charge(amount: int, context: ToolContext) -> str:
        """Charge an amount."""
        write("charge", context.call_id)
        slow = float(os.environ.get("TOOLBRIDGE_FLEET_SLOW", "0"))
        while slow > 0:
            context.heartbeat(slow)
            await asyncio.sleep(min(slow, 0.2))
            slow -= 0.2
        write("charged", context.call_id)
        return f"charged {amount}"

    return box


def make_paying_toolbox(store: Any = None) -> toolbridge.Toolbox:
    """A toolbox whose one tool, ``pay``, is idempotent: its ledger lines are its
    idempotency keys (``pay <key> <pid>``), so a test compares the key of each run."""
    box = toolbridge.Toolbox(store=store or os.environ.get("TOOLBRIDGE_FLEET_STORE"))

    @box.tool(side_effects=True, idempotent=True, timeout=60, retry=RETRY)
    async def pay(amount: int, context: ToolContext) -> str:
        """Pay an amount (the payment API would take the key as its Idempotency-Key)."""
        write("pay", context.idempotency_key)
        slow = float(os.environ.get("TOOLBRIDGE_FLEET_SLOW", "0"))
        while slow > 0:
            context.heartbeat(slow)
            await asyncio.sleep(min(slow, 0.2))
            slow -= 0.2
        return f"paid {amount} under {context.idempotency_key}"

    return box


class _Reconcile:
    @hookimpl
    def toolbridge_reconcile_call(self, call: ToolCall, tool: ToolDefinition,
                                  started_at: float) -> ToolResult | None:
        if "TOOLBRIDGE_FLEET_LEDGER" not in os.environ:
            return None  # not a fleet test's process
        if tool.name == "charge" and call.id in entries("charge"):
            return ToolResult(call=call, success=True, output="charged (reconciled)")
        return None


with contextlib.suppress(ValueError):  # imported again (another test module)
    register_plugin(_Reconcile(), name="fleet-ledger-reconcile")
toolbox = make_toolbox()
paying = make_paying_toolbox()
