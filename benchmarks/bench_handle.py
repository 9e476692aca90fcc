"""``Toolbox.handle`` of an Agents session with 8 pending calls vs parsing it with the official SDK.

Run: ``python benchmarks/bench_handle.py [--number N] [--rounds R] [--dir DIR]``.

The payload is the Agents sample session (``session.retrieve``) whose agent carries 8
realistic tools and whose ``required_actions`` call each once: string, integer, boolean, enum,
array and nested-object arguments; six tools from ``@toolbox.tool`` on typed sync functions,
two from ``toolbox.add(definition, handler)`` with hand-written schemas. The baseline is
``openai.types.beta.agent_session.AgentSession.model_validate(payload)``, measured in the same
run. Each configuration below is stated with what it measures; the headline is the first,
what ``Toolbox()`` gives with no flag.

- default: ``Toolbox()``, sync tools, no flags (worker threads, memory store), ``handle``;
- inline: the same tools with ``inline=True``;
- async: the same tools as ``async def``, through ``await toolbox.ahandle``;
- async timeout: the same, in ``Toolbox(timeout=5)`` (each handler run within its deadline);
- sqlite: ``Toolbox(store="sqlite:///DIR/results.db")`` (WAL, ``synchronous=FULL``), against
  the default configuration's ``handle`` plus a bare ``sqlite3`` doing the same 2 commits
  (`_bare_sqlite`), timed together: per payload the bare claim, the default ``handle``, the
  bare results, as the store's ``handle`` interleaves them (each then runs on the caches the
  other leaves: timed in loops of their own, each runs warm, which no program doing both
  does; that sum is printed too);
- sqlite, side effects: the same store, every tool ``side_effects=True`` (each call's
  "started" mark is a commit before its handler runs, its result rides with the next mark),
  against the default configuration plus a bare ``sqlite3`` doing those 10 commits, likewise
  interleaved (the claim, ``handle``, the marks and results);
- the heavier toolbox (`_heavy_tools`: nested models, lists of models, in arguments and
  results): default, inline, async and sqlite again, against ``AgentSession.model_validate``
  of its own payloads;
- floor: the same tools answered by a loop written by hand over the SDK's objects (its parse,
  pydantic-validated arguments, the handler, pydantic-core's JSON: `_own_loop`), against the
  SDK parse, and inline against it: the least any library can cost on these tools;
- 512 calls: the default and inline configurations on a payload of 512 calls, per call,
  against the SDK's own per-call cost at 8 (and the configuration's own per call at 8);
- every dialect: the default configuration's ``handle`` of each dialect's 8-call payload,
  against that dialect's SDK parsing the same payload (see `_dialect_payloads`), and against
  the Agents dialect's ``handle`` in the same round; ``--dialects-only`` measures these
  rows alone, ``--stages`` each dialect's own stages (`_dialect_stages`); ``--sqlite-only``
  the SQLite rows alone (`_sqlite_rows`), with the side-effecting tools under
  `InlineExecutor` too.

Fairness: every run answers new calls (a payload handled again would be a replay), so every
variant and the baseline get their own fresh payloads each round, built the same way just
before it; variants take turns within each round, so a slower stretch of the shared machine
hits all of them. Each ratio is the median over the rounds of the variant's figure over its
baseline's in the same round (paired rounds), not the best round; the times printed are the
median rounds. The garbage collector stays on (a store that keeps results pays for the
collections it causes); a full collection runs before each timed loop, so the collector's
debt for building that loop's payloads is charged to nobody. The load average is printed:
the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import enum
import functools
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bare_sqlite import filesystem
from _common import SAMPLES
from _dialect_payloads import Dialects, paired, print_dialects
from _dialect_stages import run_stages
from _heavy_tools import HEAVY, HEAVY_ARGUMENTS
from _own_loop import OwnLoop
from _sqlite_rows import SqliteRows

import toolbridge

SAMPLE = SAMPLES / "openai-agents-sessions.session.retrieve.response.json"


class Address(BaseModel):
    street: str
    city: str
    postal_code: str
    country: Literal["US", "CA", "GB", "DE", "FR"]


class Priority(enum.Enum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"
    URGENT = "urgent"


def get_customer(customer_id: str) -> dict[str, Any]:
    """Look up a customer by ID."""
    return {"id": customer_id, "name": "Ada Lovelace", "tier": "gold", "open_tickets": 2}


def list_orders(customer_id: str, limit: int = 10, include_cancelled: bool = False
                ) -> list[dict[str, Any]]:
    """List a customer's most recent orders."""
    return [{"id": f"ord_{i}", "total": 19.5 * (i + 1), "status": "shipped"}
            for i in range(min(limit, 3))]


def set_ticket_priority(ticket_id: int, priority: Priority) -> str:
    """Change the priority of a support ticket."""
    return f"ticket {ticket_id} is now {priority.value}"


def tag_ticket(ticket_id: int, tags: list[str]) -> dict[str, Any]:
    """Add tags to a support ticket."""
    return {"ticket": ticket_id, "tags": sorted(set(tags))}


def create_shipment(order_id: str, address: Address, express: bool = False) -> dict[str, Any]:
    """Ship an order to an address."""
    return {"shipment": f"shp_{order_id}", "city": address.city, "express": express}


def search_products(query: str, max_price: float | None = None, in_stock: bool = True
                    ) -> list[dict[str, Any]]:
    """Search the catalogue."""
    return [{"sku": "sku_1", "name": f"{query} deluxe", "price": 12.0}]


def convert_currency(amount: float, source: str, target: str) -> str:
    return f"{amount} {source} = {amount * 1.08:.2f} {target}"


def schedule_callback(phone: str, window: dict[str, Any], notes: str = "") -> dict[str, Any]:
    return {"scheduled": True, "phone": phone, "slot": window["slot"]}


CURRENCIES = ["USD", "EUR", "GBP", "JPY"]
ADDED = [
    (toolbridge.ToolDefinition(name="convert_currency", description="Convert an amount.",
                               parameters={
        "type": "object", "additionalProperties": False,
        "required": ["amount", "source", "target"],
        "properties": {"amount": {"type": "number", "minimum": 0},
                       "source": {"type": "string", "enum": CURRENCIES},
                       "target": {"type": "string", "enum": CURRENCIES}}}), convert_currency),
    (toolbridge.ToolDefinition(name="schedule_callback", description="Book a phone callback.",
                               parameters={
        "type": "object", "additionalProperties": False, "required": ["phone", "window"],
        "properties": {
            "phone": {"type": "string", "minLength": 7},
            "notes": {"type": "string"},
            "window": {"type": "object", "additionalProperties": False,
                       "required": ["date", "slot"],
                       "properties": {"date": {"type": "string"},
                                      "slot": {"enum": ["morning", "afternoon", "evening"]}}},
        }}), schedule_callback),
]
DECORATED = [get_customer, list_orders, set_ticket_priority, tag_ticket, create_shipment,
             search_products]
ARGUMENTS: list[tuple[str, dict[str, Any]]] = [
    ("get_customer", {"customer_id": "cus_8812"}),
    ("list_orders", {"customer_id": "cus_8812", "limit": 5, "include_cancelled": False}),
    ("set_ticket_priority", {"ticket_id": 4417, "priority": "high"}),
    ("tag_ticket", {"ticket_id": 4417, "tags": ["billing", "refund", "vip"]}),
    ("create_shipment", {"order_id": "ord_2", "express": True, "address": {
        "street": "1 Main St", "city": "Springfield", "postal_code": "49007", "country": "US"}}),
    ("search_products", {"query": "kettle", "max_price": 40.0}),
    ("convert_currency", {"amount": 125.5, "source": "USD", "target": "EUR"}),
    ("schedule_callback", {"phone": "+1 555 0100", "window": {"date": "2026-03-01",
                                                             "slot": "morning"}}),
]


def _as_async(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    async def handler(**arguments: Any) -> Any:
        return func(**arguments)

    return handler


def toolbox(style: Literal["sync", "inline", "async"] = "sync", store: Any = "memory://",
            timeout: float | None = None, heavy: bool = False,
            side_effects: bool = False) -> toolbridge.Toolbox:
    """The 8 tools (``heavy``: the heavier 8 of `_heavy_tools`), as sync functions
    (``inline=True`` for "inline") or ``async def``; ``side_effects=True`` on each if asked."""
    box = toolbridge.Toolbox(store=store, timeout=timeout)
    wrap = _as_async if style == "async" else (lambda f: f)
    inline = style == "inline"
    for func in HEAVY if heavy else DECORATED:
        box.tool(inline=inline, side_effects=side_effects)(wrap(func))
    for definition, handler in () if heavy else ADDED:
        box.add(definition.model_copy(update={"side_effects": side_effects}), wrap(handler),
                inline=inline)
    return box


def _agent_tools(heavy: bool) -> list[dict[str, Any]]:
    tools = toolbox(heavy=heavy).definitions("openai-agents")
    for tool in tools:
        tool.setdefault("defer_loading", False)
    return tools


_TOOLS = {False: _agent_tools(False), True: _agent_tools(True)}


def agents_payload(session: str = "sess_abc123", calls: int = 8,
                   heavy: bool = False) -> dict[str, Any]:
    """The sample session, its agent carrying the 8 tools (``heavy``: the heavier 8),
    ``calls`` pending calls of them."""
    sample = json.loads(SAMPLE.read_text())
    actions = []
    arguments_of = HEAVY_ARGUMENTS if heavy else ARGUMENTS
    for i in range(calls):
        name, arguments = arguments_of[i % len(arguments_of)]
        actions.append({"type": "function_call", "turn_id": "turn_abc123", "name": name,
                        "call_id": f"call_{i:04d}", "arguments": copy.deepcopy(arguments)})
    agent = {**sample["agent"], "tools": copy.deepcopy(_TOOLS[heavy])}
    return {**sample, "id": session, "agent": agent, "required_actions": actions}


CLOCK = time.perf_counter
"""What `timed` reads: wall time, or (``--clock cpu``) the CPU time of the whole process."""


def timed(func: Callable[[Any], Any], payloads: list[Any]) -> float:
    """Seconds per payload of ``func`` over ``payloads``."""
    gc.collect()  # building the payloads is not charged to the collections of whoever runs
    started = CLOCK()
    for payload in payloads:
        func(payload)
    return (CLOCK() - started) / len(payloads)


def timed_async(box: toolbridge.Toolbox, payloads: list[Any]) -> float:
    async def answer() -> float:
        gc.collect()
        started = CLOCK()
        for payload in payloads:
            await box.ahandle("openai-agents", payload)
        return (CLOCK() - started) / len(payloads)

    return asyncio.run(answer())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=1000, help="payloads per timing round")
    parser.add_argument("--rounds", type=int, default=5,
                        help="timing rounds (each figure: the median of the rounds' ratios)")
    parser.add_argument("--dialects", action=argparse.BooleanOptionalAction, default=True,
                        help="the row per dialect (--no-dialects: the Agents rows only)")
    parser.add_argument("--sqlite-only", action="store_true",
                        help="only the SQLite rows (and the default rows they are against), "
                        "with the side-effecting tools under InlineExecutor too")
    parser.add_argument("--dialects-only", action="store_true",
                        help="only the default configuration's row per dialect (and Agents')")
    parser.add_argument("--stages", action="store_true",
                        help="only the dialect-specific stages of handle per dialect (to_data, "
                        "read, decode, write: `_dialect_stages`), CPU clock")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time (default), or the process's CPU time (all its threads): "
                        "steadier on a machine busy with other work, blind to waiting (the "
                        "SQLite rows then mean little)")
    parser.add_argument("--dir", default=None, help="where to make the directory for the "
                        "SQLite files (a real disk; default: the system's temporary directory)")
    args = parser.parse_args(argv)
    if args.stages:
        box = toolbox()
        run_stages(Dialects(box, ARGUMENTS), box, lambda tag: agents_payload(tag, 8),
                   args.rounds, args.number)
        return
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    from openai.types.beta.agent_session import AgentSession

    where = Path(tempfile.mkdtemp(prefix="toolbridge-bench-", dir=args.dir))
    kind = filesystem(where)
    if kind in ("tmpfs", "ramfs"):
        print(f"warning: {where} is on {kind}, not a disk: the SQLite figures mean little")
    boxes: dict[str, toolbridge.Toolbox] = {}
    for heavy, suffix in ((False, ""), (True, " heavy")):
        boxes["default" + suffix] = toolbox(heavy=heavy)
        boxes["inline" + suffix] = toolbox("inline", heavy=heavy)
        boxes["async" + suffix] = toolbox("async", heavy=heavy)
    boxes["async timeout"] = toolbox("async", timeout=5)
    sqlite = SqliteRows(where, toolbox, agents_payload, lambda: CLOCK, args.sqlite_only)
    own = {False: OwnLoop([(f.__name__, f) for f in DECORATED]
                          + [(d.name, h) for d, h in ADDED]),
           True: OwnLoop((f.__name__, f) for f in HEAVY)}
    number, large = args.number, max(1, args.number // 32)
    dialects = Dialects(boxes["default"], ARGUMENTS) if args.dialects else None
    each: dict[str, list[float]] = {}  # every round's figure, for the paired-round medians

    def keep(name: str, seconds: float) -> None:
        each.setdefault(name, []).append(seconds)

    def fresh(name: str, r: int, count: int, calls: int = 8,
              heavy: bool = False) -> list[dict[str, Any]]:
        return [agents_payload(f"{name}-{r}-{i}", calls, heavy) for i in range(count)]

    def handled(name: str, r: int, count: int, calls: int = 8, heavy: bool = False) -> float:
        box = boxes[name.replace(" 512", "")]
        payloads = fresh(name, r, count, calls, heavy)
        if name.startswith("async"):
            return timed_async(box, payloads)
        return timed(lambda p: box.handle("openai-agents", p), payloads)

    for r in range(args.rounds):
        keep("baseline", timed(AgentSession.model_validate, fresh("baseline", r, number)))
        keep("default", handled("default", r, number))
        sqlite_count = max(1, number // 4)
        defaults = {False: boxes["default"], True: boxes["default heavy"]}
        if args.sqlite_only:
            keep("default heavy", handled("default heavy", r, number, heavy=True))
            sqlite.round(r, sqlite_count, defaults, keep)
            continue
        if args.dialects_only:
            run_dialects(dialects, boxes["default"], keep, r, number)
            continue
        for name in ("inline", "async", "async timeout"):
            keep(name, handled(name, r, number))
        keep("own loop", timed(own[False].answer, fresh("own", r, number)))
        keep("baseline heavy", timed(AgentSession.model_validate,
                                     fresh("baseline-heavy", r, number, heavy=True)))
        for name in ("default heavy", "inline heavy", "async heavy"):
            keep(name, handled(name, r, number, heavy=True))
        keep("own loop heavy", timed(own[True].answer, fresh("own-heavy", r, number, heavy=True)))
        sqlite.round(r, sqlite_count, defaults, keep)
        for name in ("default", "inline"):
            keep(f"{name} 512", handled(f"{name} 512", r, large, 512))
        run_dialects(dialects, boxes["default"], keep, r, number)
    for box in boxes.values():
        box.close()
    sqlite.close()
    shutil.rmtree(where, ignore_errors=True)
    report(args, each, dialects, where, kind, sqlite)


def report(args: argparse.Namespace, each: dict[str, list[float]], dialects: Dialects | None,
           where: Path, kind: str, sqlite: SqliteRows) -> None:
    med = {name: statistics.median(values) for name, values in each.items()}
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; SQLite files in {where} ({kind}); "
          f"{args.rounds} rounds of {args.number} payloads (fresh each round); {args.clock} "
          "clock; each ratio: the median of the rounds' ratios (each against the baseline "
          "measured in the same round), each time: the median round")
    if args.dialects_only:
        print_dialects(dialects, each)
        return
    if args.sqlite_only:
        for suffix in ("", " heavy"):
            sqlite.report(each, med, suffix)
        sqlite.report_effects(each, med)
        return
    for suffix, what in (("", "the realistic 8 tools"), (" heavy", "the heavier 8 tools "
                                                                  "(nested models, lists)")):
        base = "baseline" + suffix
        print(f"{what}: baseline AgentSession.model_validate, 8 calls: {med[base] * 1e6:8.1f} us")
        rows = [("default: Toolbox(), sync tools, handle", "default", "<= 1.2x"),
                ("inline=True tools, handle", "inline", "<= 1.0x"),
                ("async tools, await ahandle", "async", "<= 1.0x")]
        if not suffix:
            rows.append(("async tools, Toolbox(timeout=5), await ahandle", "async timeout", ""))
        for label, name, target in rows:
            name += suffix if name != "async timeout" else ""
            print(f"  {label:48s} {med[name] * 1e6:8.1f} us  {paired(each, name, base):5.2f}x  "
                  + (f"(target {target})" if target else "(no target)"))
        loop = "own loop" + suffix
        print(f"  {'floor: hand-written loop (SDK+pydantic+to_json)':48s} "
              f"{med[loop] * 1e6:8.1f} us  {paired(each, loop, base):5.2f}x  (inline: "
              f"{paired(each, 'inline' + suffix, loop):.2f}x of it; see _own_loop.py)")
        sqlite.report(each, med, suffix)
    sqlite.report_effects(each, med)
    sdk_per_call = med["baseline"] / 8
    for name in ("default", "inline"):
        per = med[f"{name} 512"] / 512
        print(f"  {name + ' at 512 calls, per call':48s} {per * 1e6:8.2f} us  "
              f"{per / sdk_per_call:5.2f}x the SDK's per-call cost at 8 "
              f"({sdk_per_call * 1e6:.2f} us; target <= 2.0x); "
              f"{per / (med[name] / 8):5.2f}x its own per call at 8")
    print_dialects(dialects, each)
    print("ratio: every figure is against a baseline measured in the same run")


def run_dialects(dialects: Dialects | None, box: toolbridge.Toolbox,
                 keep: Callable[[str, float], None], r: int, number: int) -> None:
    """One round of every dialect's row: its SDK parse, then ``handle`` of fresh payloads."""
    if dialects is None:
        return
    for name, parse in dialects.parses.items():
        target = dialects.target(name)
        keep(f"{name} sdk", timed(parse, [dialects.payload(name, f"s{r}-{i}")
                                          for i in range(number)]))
        keep(name, timed(lambda p, t=target: box.handle(t, p),  # type: ignore[misc]
                         [dialects.payload(name, f"h{r}-{i}") for i in range(number)]))


if __name__ == "__main__":
    main()
