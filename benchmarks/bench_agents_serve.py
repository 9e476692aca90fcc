"""Agents API sessions: the serve driver against the official SDK's stream helper.

Both sides answer the same sessions on the same emulator, which runs in its own process (as a
real backend is another machine; each side's worker gets its own process too, started fresh
for every measurement). The baseline is openai's ``client.beta.agents.sessions.stream(
session_id, input=..., tool_handlers=...)`` (async, unchanged, ``base_url=<emulator>/v1``);
toolbridge is a `toolbridge.serve.Worker` with its defaults (one connection, summary
transcripts), each session a `Job` of many turns. The same async tool on both sides
(``noop(n) -> n``). Every session exists, idle, before timing starts; each turn asks ROUNDS
rounds of one call, and each session plays turn after turn (the helper: one ``stream`` per
turn), so SESSIONS sessions are at work at once for the whole measurement.

- throughput: calls answered per second during DURATION seconds once every session started;
  sessions start together ("burst") or each at a random moment within SPREAD seconds
  ("spread");
- reaction latency: measured by the emulator, from emitting ``requires_action`` to accepting
  the call's result (p50, p99);
- memory: the worker's RSS growth per served session while MEMORY sessions (started over
  MEMORY_SPREAD seconds) are each waiting in a handler at once, every stream open, over its
  RSS with the sessions created but not yet served.

The toolbox (both sides) is ``noop`` plus, with ``--tools 8`` (the default), seven realistic
tools (strings, enums, numbers, nested objects, lists), declared in every session. ``--entry``
says how toolbridge serves: ``worker`` (one `Worker`, the default) or ``conversation`` (the
per-conversation entry point, `toolbridge.serve.aconverse`, one task per session).

    .venv/bin/python benchmarks/bench_agents_serve.py [--sessions 1,20,200] [--rounds 3]
        [--spread 5] [--duration 5] [--memory 1000] [--repeat 1] [--tools 8]
        [--entry worker|conversation]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from multiprocessing.connection import Connection
from typing import Any, Literal

from pydantic import BaseModel

SIDES = ("toolbridge", "sdk-helper")
MEMORY_SPREAD = 10.0
"""Seconds over which the memory run's sessions start (both sides)."""
WARM_UP = 2
"""Sessions each worker serves before the measured ones (imports and first-use caches are
not what a long-running worker pays per call); their reaction times are left out."""


TURNS = 400
"""Turns each session's script holds (more than a measurement uses)."""


def script(rounds: int) -> dict[str, Any]:
    """Turn 1 (set-up) asks nothing; every later turn asks ``rounds`` rounds of one call."""
    work = {"rounds": [[{"name": "noop", "arguments": {"n": i}}] for i in range(rounds)],
            "reply": "done"}
    return {"turns": [{"rounds": [], "reply": "ready"}, *[work] * TURNS]}


def rss_kb() -> int:
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    if not ordered:
        return float("nan"), float("nan")
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000


# ---------------------------------------------------------------------------- emulator
def _serve_emulator(conn: Connection, rounds: int) -> None:
    import logging

    from toolbridge.testing import emulator

    # Stopping with a cancelled helper's streams still open makes uvicorn log each one.
    logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)

    with emulator("openai-agents", script=script(rounds)) as emu:
        conn.send(emu.base_url)
        skip = set(conn.recv())  # the warm-up sessions
        state = emu.state
        conn.send([(t, state.result_at[k]) for k, t in state.requires_action_at.items()
                   if k in state.result_at and k[0] not in skip])


@asynccontextmanager
async def served(rounds: int
                 ) -> AsyncIterator[tuple[str, list[tuple[float, float]], list[str]]]:
    """The emulator's base URL (in its own process); on exit, per call, when it asked for it
    and when it took its result (``perf_counter``: one clock for every process), but for the
    sessions the caller adds to the third list."""
    times: list[tuple[float, float]] = []
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_serve_emulator, args=(child, rounds), daemon=True)
    process.start()
    try:
        base_url = await asyncio.to_thread(parent.recv)
        skip: list[str] = []
        yield base_url, times, skip
        parent.send(skip)
        times.extend(await asyncio.to_thread(parent.recv))
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()


# ---------------------------------------------------------------------------- workers
async def _sessions(base_url: str, count: int) -> list[str]:
    """``count`` idle sessions declaring the tool (not timed)."""
    import toolbridge
    from toolbridge_openai_agents import AsyncAgentsClient

    box = toolbox(toolbridge)
    async with AsyncAgentsClient(base_url=base_url + "/v1", api_key="bench") as client:
        limit = asyncio.Semaphore(50)

        async def one() -> str:
            async with limit:
                session = await client.create_session(box, input="set up")
                while session["status"] != "idle":
                    await asyncio.sleep(0.01)
                    session = await client.retrieve_session(session["id"])
                return str(session["id"])

        return list(await asyncio.gather(*(one() for _ in range(count))))


TOOLS = int(os.environ.get("BENCH_TOOLS", "8"))
ENTRY = os.environ.get("BENCH_ENTRY", "worker")


class Address(BaseModel):
    street: str
    city: str
    postcode: str
    country: str = "GB"


class Line(BaseModel):
    sku: str
    quantity: int
    note: str | None = None


async def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Current weather for a city."""
    return city


async def lookup_order(order_id: str, include_history: bool = False) -> dict[str, Any]:
    """An order's status, items and (optionally) its history."""
    return {}


async def create_ticket(subject: str, body: str,
                        priority: Literal["low", "normal", "high", "urgent"] = "normal",
                        tags: list[str] | None = None) -> str:
    """Open a support ticket."""
    return subject


async def update_address(customer_id: str, address: Address) -> bool:
    """Replace a customer's delivery address."""
    return True


async def place_order(customer_id: str, lines: list[Line], express: bool = False) -> str:
    """Place an order of several lines."""
    return customer_id


async def refund(order_id: str, amount: float, reason: str) -> str:
    """Refund part or all of an order."""
    return order_id


async def search_docs(query: str, limit: int = 5, language: str = "en") -> list[str]:
    """Search the help centre."""
    return []


REALISTIC = (get_weather, lookup_order, create_ticket, update_address, place_order, refund,
             search_docs)
"""Seven tools of a support desk, as a real toolbox has them (never called here)."""


def realistic_tools(box: Any) -> None:
    for tool in REALISTIC[:max(TOOLS - 1, 0)]:
        box.tool(tool)


def toolbox(toolbridge: Any, gate: asyncio.Event | None = None, seen: list[int] | None = None,
            count: int = 0) -> Any:
    box = toolbridge.Toolbox()
    realistic_tools(box)

    @box.tool
    async def noop(n: int) -> int:
        """Return n."""
        if gate is not None and seen is not None:
            seen.append(n)
            if len(seen) >= count:
                gate.set()
            await gate.wait()
        return n

    return box


async def run_toolbridge(base_url: str, ids: list[str], starts: list[float], until: float,
                         gate: asyncio.Event | None, seen: list[int]) -> None:
    import toolbridge
    from toolbridge.serve import Worker

    box = toolbox(toolbridge, gate, seen, len(ids))
    if ENTRY == "conversation":
        await run_conversations(box, base_url, ids, starts, until)
        return
    worker = Worker(box, "openai-agents", {"base_url": base_url, "api_key": "bench"},
                    concurrency=max(len(ids), 1))
    turns = 1 if until == 0 else TURNS - 1
    running = asyncio.create_task(worker.run(feed=True))
    began = time.perf_counter()
    for session_id, start in sorted(zip(ids, starts, strict=True), key=lambda p: p[1]):
        await asyncio.sleep(max(0.0, began + start - time.perf_counter()))
        worker.add(session_id, ["go"] * turns)
    worker.close()
    if until == 0:
        done = await running
        bad = [t for t in done if not t.ok]
        if bad:
            raise RuntimeError(f"{len(bad)} conversations did not complete: {bad[0].render()}")
        return
    await asyncio.sleep(max(0.0, until - time.perf_counter()))
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)


async def run_conversations(box: Any, base_url: str, ids: list[str], starts: list[float],
                            until: float) -> None:
    """One `aconverse` task per session (the per-conversation entry point)."""
    from toolbridge.serve import aconverse

    options = {"base_url": base_url, "api_key": "bench"}
    turns = 1 if until == 0 else TURNS - 1

    async def one(session_id: str, start: float) -> Any:
        await asyncio.sleep(start)
        return await aconverse(box, "openai-agents", ["go"] * turns, options,
                               conversation=session_id)

    tasks = [asyncio.create_task(one(s, t)) for s, t in zip(ids, starts, strict=True)]
    if until == 0:
        done = await asyncio.gather(*tasks)
        bad = [t for t in done if not t.ok]
        if bad:
            raise RuntimeError(f"{len(bad)} conversations did not complete: {bad[0].render()}")
        return
    await asyncio.sleep(max(0.0, until - time.perf_counter()))
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def run_helper(base_url: str, ids: list[str], starts: list[float], until: float,
                     gate: asyncio.Event | None, seen: list[int]) -> None:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url + "/v1", api_key="bench")

    async def noop(arguments: dict[str, Any]) -> str:
        if gate is not None:
            seen.append(arguments["n"])
            if len(seen) >= len(ids):
                gate.set()
            await gate.wait()
        return str(arguments["n"])

    async def one(session_id: str, start: float) -> None:
        await asyncio.sleep(start)
        while True:
            async with client.beta.agents.sessions.stream(
                    session_id, input="go", tool_handlers={"noop": noop}) as stream:
                result = await stream.get_final_result()
            if result.output_text != "done":
                raise RuntimeError(f"unexpected reply {result.output_text!r}")
            if until == 0:
                return

    tasks = [asyncio.create_task(one(s, t)) for s, t in zip(ids, starts, strict=True)]
    if until == 0:
        await asyncio.gather(*tasks)
    else:
        await asyncio.sleep(max(0.0, until - time.perf_counter()))
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    await client.close()


async def worker_main(side: str, base_url: str, count: int, spread: float,
                      duration: float, memory: bool) -> dict[str, Any]:
    ids = await _sessions(base_url, count + WARM_UP)
    run = run_toolbridge if side == "toolbridge" else run_helper
    warm, ids = ids[:WARM_UP], ids[WARM_UP:]
    await run(base_url, warm, [0.0] * WARM_UP, 0, None, [])  # imports, first-use caches
    starts = [random.uniform(0, spread) if spread else 0.0 for _ in ids]
    gate = asyncio.Event() if memory else None
    seen: list[int] = []
    gc.collect()
    before = rss_kb()
    peak = 0

    async def watch() -> None:
        nonlocal peak
        assert gate is not None
        await gate.wait()
        gc.collect()
        peak = rss_kb()

    watcher = asyncio.create_task(watch()) if memory else None
    began = time.perf_counter()
    window = (began + spread, began + spread + duration)
    await run(base_url, ids, starts, 0 if memory else window[1], gate, seen)
    if watcher is not None:
        await watcher
    return {"window": window, "rss_before_kb": before, "rss_waiting_kb": peak,
            "warm_up": warm}


def measure(side: str, count: int, rounds: int, spread: float, duration: float,
            memory: bool = False, timeout: float = 1800) -> dict[str, Any]:
    """One measurement: a fresh emulator process and a fresh worker process. Calls count
    when their result was taken within the window (every session started, for ``duration``
    seconds); reaction times are those of calls asked for within it."""

    async def main() -> dict[str, Any]:
        async with served(rounds) as (base_url, times, skip):
            out = await asyncio.to_thread(subprocess.run, [
                sys.executable, __file__, "--worker", side, base_url, str(count), str(spread),
                str(duration), "1" if memory else "0"], capture_output=True, text=True,
                timeout=timeout)
            if out.returncode != 0:
                raise RuntimeError(f"{side} worker failed:\n{out.stderr[-3000:]}")
            result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
            skip.extend(result.pop("warm_up"))
        low, high = result["window"]
        result["calls"] = sum(1 for _, took in times if low <= took <= high)
        result["rate"] = result["calls"] / (high - low) if high > low else 0.0
        result["reaction"] = quantiles([took - asked for asked, took in times
                                        if low <= asked and took <= high])
        return result

    return asyncio.run(main())


# ---------------------------------------------------------------------------- report
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="1,20,200")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spread", type=float, default=5.0)
    parser.add_argument("--memory", type=int, default=1000,
                        help="sessions held at once for the memory figure (0: skip)")
    parser.add_argument("--duration", type=float, default=5.0,
                        help="seconds measured once every session started")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--memory-timeout", type=float, default=600,
                        help="seconds a memory run may take before it is reported as n/a")
    parser.add_argument("--tools", type=int, default=TOOLS,
                        help="tools in the toolbox (noop and up to 7 realistic ones)")
    parser.add_argument("--entry", choices=("worker", "conversation"), default=ENTRY)
    parser.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ["BENCH_TOOLS"], os.environ["BENCH_ENTRY"] = str(args.tools), args.entry
    if args.worker:
        side, base_url, count, spread, duration, memory = args.worker
        result = asyncio.run(worker_main(side, base_url, int(count), float(spread),
                                         float(duration), memory == "1"))
        print(json.dumps(result))
        return
    counts = [int(c) for c in args.sessions.split(",") if c]
    print(f"Agents sessions, emulator and each worker in their own process, {args.rounds} "
          f"rounds of one call per turn, turn after turn, measured for {args.duration:g} s "
          f"once every session started; toolbridge = {args.entry} ({args.tools} tools), "
          f"baseline = openai "
          f"sessions.stream(tool_handlers=...) (async); {os.cpu_count()} cores")
    for shape, spread in (("burst", 0.0), (f"spread over {args.spread:g} s", args.spread)):
        for count in counts:
            rows: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
            for _ in range(args.repeat):
                for side in SIDES:
                    rows[side].append(measure(side, count, args.rounds, spread,
                                              args.duration))
            ours, theirs = rows["toolbridge"], rows["sdk-helper"]
            rate = [r["rate"] for r in ours]
            base = [r["rate"] for r in theirs]
            ratio = statistics.median(rate) / statistics.median(base)
            p99 = statistics.median(r["reaction"][1] for r in ours)
            p99_base = statistics.median(r["reaction"][1] for r in theirs)
            p50 = statistics.median(r["reaction"][0] for r in ours)
            p50_base = statistics.median(r["reaction"][0] for r in theirs)
            print(f"  {shape:>16}, {count:4d} sessions: calls/s toolbridge "
                  f"{statistics.median(rate):8.1f}  helper {statistics.median(base):8.1f}  "
                  f"ratio {ratio:5.2f}x | reaction p50 {p50:6.1f} ms vs {p50_base:6.1f} ms, "
                  f"p99 {p99:6.1f} ms vs {p99_base:6.1f} ms (p99 ratio {p99 / p99_base:4.2f}x)")
    if args.memory:
        grown: dict[str, float | str] = {}
        for side in SIDES:  # started over MEMORY_SPREAD s: the helper's pool chokes on a burst
            try:
                r = measure(side, args.memory, 1, MEMORY_SPREAD, 0.0, memory=True,
                            timeout=args.memory_timeout)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                # The helper's client holds one pooled connection per open stream (1,000 at
                # most): on a busy machine some sessions may never get theirs.
                grown[side] = f"n/a ({type(exc).__name__})"
                continue
            grown[side] = (r["rss_waiting_kb"] - r["rss_before_kb"]) / args.memory
            print(f"  memory, {args.memory} sessions waiting at once: RSS growth per session, "
                  f"{side}: {grown[side]:.1f} KB", flush=True)
        ours, theirs = grown["toolbridge"], grown["sdk-helper"]
        if isinstance(ours, float) and isinstance(theirs, float):
            print(f"  memory ratio toolbridge / helper: {ours / theirs:.2f}x")
        else:
            print(f"  memory: toolbridge {ours}, helper {theirs}")

if __name__ == "__main__":
    main()
