"""Example tools: one structured, one async, one side-effecting. Used by the README and demo.

``toolbridge tools toolbridge.examples:toolbox`` prints them in every installed dialect.
"""

from __future__ import annotations

import asyncio
import threading
import zlib
from typing import Literal

from pydantic import BaseModel

from .errors import ToolError
from .toolbox import Toolbox

__all__ = ["Customer", "Ticket", "tickets", "toolbox"]

toolbox = Toolbox(timeout=10)
"""The example tools (``get_customer``, ``get_weather``, ``create_ticket``), 10 s per call."""


class Customer(BaseModel):
    """A customer record."""

    id: str
    name: str
    tier: Literal["gold", "silver", "bronze"]
    open_tickets: int


class Ticket(BaseModel):
    """A support ticket."""

    id: str
    customer_id: str
    subject: str
    priority: Literal["low", "high"]


_CUSTOMERS = {
    "42": Customer(id="42", name="Ada Lovelace", tier="gold", open_tickets=1),
    "7": Customer(id="7", name="Alan Turing", tier="silver", open_tickets=0),
}
_lock = threading.Lock()
tickets: list[Ticket] = []
"""Tickets opened by `create_ticket`, in order: shows a side effect ran exactly once."""


@toolbox.tool(read_only=True)
def get_customer(customer_id: str) -> Customer:
    """Look up a customer by id.

    Args:
        customer_id: The customer's id, e.g. "42".
    """
    try:
        return _CUSTOMERS[customer_id]
    except KeyError:
        raise ToolError(f"no customer {customer_id!r}; known ids: 42, 7") from None


@toolbox.tool(read_only=True)
async def get_weather(city: str, days: int = 1) -> dict[str, object]:
    """Weather forecast for a city.

    Args:
        city: City name, e.g. "Lima".
        days: How many days ahead, 1 to 7.
    """
    await asyncio.sleep(0)  # stands in for an HTTP call
    seed = zlib.crc32(city.lower().encode())
    return {"city": city, "days": days, "temp_c": 10 + seed % 20,
            "sky": ("clear", "cloudy", "rain")[seed % 3]}


@toolbox.tool(side_effects=True)
def create_ticket(customer_id: str, subject: str,
                  priority: Literal["low", "high"] = "low") -> Ticket:
    """Open a support ticket for a customer (runs at most once per call).

    Args:
        customer_id: The customer's id.
        subject: One line saying what is wrong.
        priority: "high" for anything blocking the customer.
    """
    with _lock:
        ticket = Ticket(id=f"T-{1000 + len(tickets)}", customer_id=customer_id,
                        subject=subject, priority=priority)
        tickets.append(ticket)
    return ticket
