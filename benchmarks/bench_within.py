"""`toolbridge.runtime._steps.within` (an async handler's timeout, driven in the awaiting task)
against the standard library's ways to bound an await, per call.

Run: ``python benchmarks/bench_within.py [--number N] [--rounds R]``.

Each variant awaits a handler under a 5 s deadline (never reached), in one task on one loop:

- plain: ``await handler()``, no deadline (the floor);
- within: ``await within(handler(), 5)`` (what `PlannedCall` does for a timed async handler);
- wait_for: ``await asyncio.wait_for(handler(), 5)``;
- timeout: ``async with asyncio.timeout(5): await handler()`` (Python 3.11+).

Two handlers: one that returns without suspending (most tools that only compute), and one that
suspends once (``await asyncio.sleep(0)``, as a handler awaiting I/O does). The figure is the
median over rounds of each variant's cost per call minus plain's in the same round (variants
take turns within each round), and the verdict the issue asked for: `within` stays only if it
saves at least 1 us per call against the best standard way.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

from toolbridge.runtime._steps import within

DEADLINE = 5.0


async def never_suspends(n: int) -> int:
    return n + 1


async def suspends_once(n: int) -> int:
    await asyncio.sleep(0)
    return n + 1


Handler = Callable[[int], Awaitable[int]]


async def plain(handler: Handler, number: int) -> None:
    for i in range(number):
        await handler(i)


async def with_within(handler: Handler, number: int) -> None:
    for i in range(number):
        await within(handler(i), DEADLINE)


async def with_wait_for(handler: Handler, number: int) -> None:
    for i in range(number):
        await asyncio.wait_for(handler(i), DEADLINE)


async def with_timeout(handler: Handler, number: int) -> None:
    for i in range(number):
        async with asyncio.timeout(DEADLINE):  # type: ignore[attr-defined]
            await handler(i)


VARIANTS: dict[str, Callable[[Handler, int], Awaitable[None]]] = {
    "plain": plain, "within": with_within, "wait_for": with_wait_for}
if sys.version_info >= (3, 11):
    VARIANTS["timeout"] = with_timeout


async def measure(handler: Handler, number: int, rounds: int) -> dict[str, float]:
    """Median over ``rounds`` of each variant's per-call cost minus plain's (seconds)."""
    extra: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(rounds):
        costs = {}
        for name, variant in VARIANTS.items():
            started = time.perf_counter()
            await variant(handler, number)
            costs[name] = (time.perf_counter() - started) / number
        for name, cost in costs.items():
            extra[name].append(cost - costs["plain"] if name != "plain" else cost)
    return {name: statistics.median(values) for name, values in extra.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--number", type=int, default=20000, help="calls per timing round")
    parser.add_argument("--rounds", type=int, default=9, help="paired rounds (median kept)")
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}; median of {args.rounds} paired rounds of "
          f"{args.number} calls; cost per call over a plain await")
    results: dict[str, dict[str, float]] = {}
    for label, handler in (("never suspends", never_suspends), ("suspends once", suspends_once)):
        results[label] = figures = asyncio.run(measure(handler, args.number, args.rounds))
        print(f"{label}: plain await {figures['plain'] * 1e6:6.2f} us per call")
        for name in VARIANTS:
            if name != "plain":
                print(f"  + {name:9s} {figures[name] * 1e6:6.2f} us")
    for label, figures in results.items():
        best = min(figures[name] for name in VARIANTS if name not in ("plain", "within"))
        saved = (best - figures["within"]) * 1e6
        print(f"within saves {saved:.2f} us per call against the best standard way when the "
              f"handler {label} (keep it if >= 1 us)")
    print("ratio: none; every figure is a difference against a plain await in the same round")



if __name__ == "__main__":
    main()
