"""Testing a toolbox on every installed backend, each test parametrized over the dialects.

Run it with pytest. toolbridge's pytest plugin (the ``toolbridge_emulator`` fixture) is loaded
by itself once toolbridge is installed with the ``emulators`` extra.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest

from toolbridge import Toolbox, ToolError
from toolbridge.testing import converse, installed_dialects

# ---------------------------------------------------------------- the toolbox under test
toolbox = Toolbox()
refunds: list[str] = []


@toolbox.tool
def get_order(order_id: str) -> dict[str, Any]:
    """Look up an order."""
    if order_id != "A1":
        raise ToolError(f"no order {order_id!r}")
    return {"id": "A1", "status": "shipped"}


@toolbox.tool(side_effects=True)
def refund(order_id: str, reason: Literal["late", "damaged"],
           amount: float | None = None) -> str:
    """Refund an order, in full unless an amount is given."""
    refunds.append(order_id)
    return f"refunded {order_id} ({reason})"


# ---------------------------------------------------------------- the tests
# One script for every backend: `amount` is left out (a strict backend's model gets null).
SCRIPT = {"turns": [{
    "rounds": [[{"name": "get_order", "arguments": {"order_id": "A1"}}],
               [{"name": "refund", "arguments": {"order_id": "A1", "reason": "late"}}]],
    "reply": "Done: {outputs}",
}]}

every_backend = pytest.mark.parametrize("dialect", installed_dialects())


@pytest.fixture(autouse=True)
def no_refunds_yet() -> None:
    refunds.clear()


@every_backend
def test_refund_flow(dialect: str) -> None:
    transcript = converse(toolbox, dialect, ["My order A1 is late"], script=SCRIPT)
    results = [entry.text for entry in transcript.of_kind("result")]
    assert results == ['{"id":"A1","status":"shipped"}', "refunded A1 (late)"]
    assert refunds == ["A1"]
    assert transcript.reply.startswith("Done: ")


@every_backend
def test_a_model_sending_a_bad_reason_is_told_and_tries_again(dialect: str) -> None:
    script = {"turns": [{"rounds": [
        [{"name": "refund", "arguments": {"order_id": "A1", "reason": "bored"},
          "misbehave": "invalid_enum"}],
        [{"name": "refund", "arguments": {"order_id": "A1", "reason": "damaged"}}],
    ]}]}
    transcript = converse(toolbox, dialect, ["Refund A1"], script=script)
    told, retried = (entry.text for entry in transcript.of_kind("result"))
    assert "invalid arguments for refund" in told and "reason" in told
    assert retried == "refunded A1 (damaged)"
    assert refunds == ["A1"]  # the bad call never reached the handler


@every_backend
def test_the_backend_accepted_every_request(dialect: str, toolbridge_emulator: Any) -> None:
    emu = toolbridge_emulator(dialect, script=SCRIPT)
    converse(toolbox, dialect, ["My order A1 is late"], running=emu)
    statuses = [entry.status for entry in emu.journal.entries()]
    assert statuses and all(200 <= status < 300 for status in statuses)
