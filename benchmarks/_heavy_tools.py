"""The heavier toolbox of `bench_handle.py`: 8 tools whose arguments and results are nested
pydantic models and lists of models (orders of line items, contacts with addresses and
phones, shipments of parcels), next to its realistic 8.

Each handler takes models and returns a model or a list of models (the runtime converts them
with pydantic-core), so per call the binding validates nested models and the result is
converted from models: the per-call work a typed codebase's tools cost.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel


class Address(BaseModel):
    street: str
    city: str
    postal_code: str
    country: Literal["US", "CA", "GB", "DE", "FR"]


class Phone(BaseModel):
    kind: Literal["mobile", "home", "work"]
    number: str


class Contact(BaseModel):
    name: str
    email: str
    address: Address
    phones: list[Phone] = []


class LineItem(BaseModel):
    sku: str
    quantity: int
    unit_price: float
    options: dict[str, str] = {}


class Parcel(BaseModel):
    weight_kg: float
    dimensions_cm: list[float]
    items: list[LineItem]


class Order(BaseModel):
    id: str
    customer: Contact
    items: list[LineItem]
    total: float


class Shipment(BaseModel):
    id: str
    to: Address
    parcels: list[Parcel]


def create_order(customer: Contact, items: list[LineItem], coupon: str | None = None) -> Order:
    """Create an order for a customer."""
    return Order(id="ord_9", customer=customer, items=items,
                 total=sum(i.quantity * i.unit_price for i in items))


def update_contact(contact_id: str, contact: Contact) -> Contact:
    """Replace a contact's details."""
    return contact


def ship_parcels(order_id: str, to: Address, parcels: list[Parcel]) -> Shipment:
    """Ship an order's parcels."""
    return Shipment(id=f"shp_{order_id}", to=to, parcels=parcels)


def price_items(items: list[LineItem], currency: Literal["USD", "EUR"] = "USD") -> list[LineItem]:
    """Price line items in a currency."""
    return [item.model_copy(update={"unit_price": item.unit_price * 1.1}) for item in items]


def merge_contacts(contacts: list[Contact]) -> Contact:
    """Merge duplicate contacts into one."""
    first = contacts[0]
    return first.model_copy(update={"phones": [p for c in contacts for p in c.phones]})


def split_parcels(parcel: Parcel, max_weight_kg: float) -> list[Parcel]:
    """Split a parcel into parcels under a weight."""
    return [parcel.model_copy(update={"items": [item]}) for item in parcel.items]


def list_addresses(contacts: list[Contact]) -> list[Address]:
    """The addresses of contacts."""
    return [c.address for c in contacts]


def order_summary(order: Order) -> dict[str, Any]:
    """A short summary of an order."""
    return {"id": order.id, "lines": len(order.items), "total": order.total,
            "city": order.customer.address.city}


HEAVY = [create_order, update_contact, ship_parcels, price_items, merge_contacts,
         split_parcels, list_addresses, order_summary]

_ADDRESS = {"street": "1 Main St", "city": "Springfield", "postal_code": "49007",
            "country": "US"}
_CONTACT = {"name": "Ada Lovelace", "email": "ada@example.com", "address": _ADDRESS,
            "phones": [{"kind": "mobile", "number": "+1 555 0100"},
                       {"kind": "work", "number": "+1 555 0101"}]}
_ITEMS = [{"sku": f"sku_{i}", "quantity": i + 1, "unit_price": 9.5 + i,
           "options": {"colour": "red", "size": "M"}} for i in range(4)]
_PARCEL = {"weight_kg": 2.5, "dimensions_cm": [30.0, 20.0, 10.0], "items": _ITEMS[:2]}
HEAVY_ARGUMENTS: list[tuple[str, dict[str, Any]]] = [
    ("create_order", {"customer": _CONTACT, "items": _ITEMS, "coupon": None}),
    ("update_contact", {"contact_id": "con_1", "contact": _CONTACT}),
    ("ship_parcels", {"order_id": "ord_2", "to": _ADDRESS, "parcels": [_PARCEL, _PARCEL]}),
    ("price_items", {"items": _ITEMS, "currency": "EUR"}),
    ("merge_contacts", {"contacts": [_CONTACT, _CONTACT]}),
    ("split_parcels", {"parcel": _PARCEL, "max_weight_kg": 1.0}),
    ("list_addresses", {"contacts": [_CONTACT, _CONTACT, _CONTACT]}),
    ("order_summary", {"order": {"id": "ord_3", "customer": _CONTACT, "items": _ITEMS,
                                 "total": 80.0}}),
]
