"""Agents API sessions: reaction latency of the streaming serve loop vs a polling client.

Reaction latency is measured by the emulator: from emitting ``agent.session.requires_action``
to accepting the call's result, for SESSIONS sessions at once on loopback. By default the
emulator runs in its own process (as a real backend is another machine, client and server
each get a core); ``--in-process`` serves it from a thread of the client's process instead
(both then share one GIL). Each session starts its turn at a random moment within SPREAD
seconds, so its calls arrive spread out while all sessions hold their event streams open; a
"burst" run starts every session at once (calls in lockstep: a throughput figure). The
polling client, measured in the same run against the same kind of emulator, reads each
session every POLL_INTERVAL seconds on a fixed tick. A second measurement compares
``toolbox.handle("openai-agents", session)`` on a session with 8 pending no-op calls with
``AgentSession.model_validate`` of the same payload.

    .venv/bin/python benchmarks/bench_agents_latency.py [sessions] [rounds] [spread]
        [--in-process] [--no-burst]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from multiprocessing.connection import Connection
from typing import Any

import toolbridge
from toolbridge.testing import emulator
from toolbridge_openai_agents import AsyncAgentsClient, arun_conversation

SESSIONS, ROUNDS, SPREAD = 200, 3, 5.0
POLL_INTERVAL = 0.5


def script(rounds: int) -> dict[str, Any]:
    return {"turns": [{"rounds": [[{"name": "noop", "arguments": {"n": i}}]
                                  for i in range(rounds)], "reply": "done"}]}


def toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    async def noop(n: int) -> int:
        """Return n."""
        return n

    return box


def quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000


def reaction_times(state: Any) -> list[float]:
    """Seconds from the emulator emitting ``requires_action`` to accepting each call's result."""
    return [state.result_at[k] - t for k, t in state.requires_action_at.items()
            if k in state.result_at]


def _serve_emulator(conn: Connection, rounds: int) -> None:
    """Child process: serve the emulator until asked, then send back its reaction times."""
    with emulator("openai-agents", script=script(rounds)) as emu:
        conn.send(emu.base_url)
        conn.recv()
        conn.send(reaction_times(emu.state))


@asynccontextmanager
async def served(rounds: int, in_process: bool) -> AsyncIterator[tuple[str, list[float]]]:
    """The emulator's base URL; on exit, the list is filled with its reaction times."""
    times: list[float] = []
    if in_process:
        with emulator("openai-agents", script=script(rounds)) as emu:
            yield emu.base_url, times
            times.extend(reaction_times(emu.state))
        return
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_serve_emulator, args=(child, rounds), daemon=True)
    process.start()
    try:
        base_url = await asyncio.to_thread(parent.recv)
        yield base_url, times
        parent.send("stop")
        times.extend(await asyncio.to_thread(parent.recv))
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()


async def streaming(box: toolbridge.Toolbox, spread: float, sessions: int, rounds: int,
                    in_process: bool) -> list[float]:
    async with served(rounds, in_process) as (base_url, times), AsyncAgentsClient(
            base_url=base_url + "/v1", api_key="bench") as client:

        async def one() -> None:
            await asyncio.sleep(random.uniform(0, spread))
            await arun_conversation(box, ["go"], client=client)

        await asyncio.gather(*(one() for _ in range(sessions)))
    return times


async def polling(box: toolbridge.Toolbox, spread: float, sessions: int, rounds: int,
                  in_process: bool) -> list[float]:
    async with served(rounds, in_process) as (base_url, times), AsyncAgentsClient(
            base_url=base_url + "/v1", api_key="bench") as client:

        async def one() -> None:
            await asyncio.sleep(random.uniform(0, spread))
            session = await client.create_session(box, input="go")
            tick = time.perf_counter() + random.uniform(0, POLL_INTERVAL)
            while session["status"] not in ("idle", "failed"):
                tick += POLL_INTERVAL
                await asyncio.sleep(max(0.0, tick - time.perf_counter()))
                session = await client.retrieve_session(session["id"])
                if session["required_actions"]:
                    body = await box.ahandle("openai-agents", session)
                    await client.submit_results(session["id"], body)

        await asyncio.gather(*(one() for _ in range(sessions)))
    return times


def handle_vs_validate() -> tuple[float, float]:
    from openai.types.beta.agent_session import AgentSession

    box = toolbox()
    action = {"type": "function_call", "turn_id": "turn_1", "name": "noop"}
    session: dict[str, Any] = {
        "id": "sess_1", "object": "agent.session", "created_at": 0, "last_active_at": 0,
        "agent": {"id": "agent_1", "model": "gpt-5", "name": None, "instructions": None,
                  "multi_agent": {"enabled": False, "max_concurrent_subagents": None},
                  "reasoning": {"effort": None, "summary": None}, "service_tier": "auto",
                  "text": {"format": {"type": "text"}, "verbosity": "medium"},
                  "tools": box.definitions("openai-agents")},
        "environment": {"type": "none"}, "error": None, "metadata": {},
        "required_actions": [{**action, "call_id": f"call_{i}", "arguments": {"n": i}}
                             for i in range(8)],
        "status": "requires_action", "usage": None, "vault_ids": [],
    }
    for tool in session["agent"]["tools"]:
        tool.setdefault("defer_loading", False)

    async def handles(n: int) -> float:
        started = time.perf_counter()
        for _ in range(n):
            await box.ahandle("openai-agents", session)
        return (time.perf_counter() - started) / n

    n = 2000
    handle = asyncio.run(handles(n))
    started = time.perf_counter()
    for _ in range(n):
        AgentSession.model_validate(session)
    validate = (time.perf_counter() - started) / n
    return handle * 1e6, validate * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="?", type=int, default=SESSIONS)
    parser.add_argument("rounds", nargs="?", type=int, default=ROUNDS)
    parser.add_argument("spread", nargs="?", type=float, default=SPREAD)
    parser.add_argument("--in-process", action="store_true",
                        help="serve the emulator from a thread of this process")
    parser.add_argument("--no-burst", action="store_true", help="skip the lockstep burst run")
    args = parser.parse_args(argv)
    box = toolbox()
    where = "in this process" if args.in_process else "in its own process"
    print(f"reaction latency, {args.sessions} sessions at once, {args.rounds} rounds each, "
          f"loopback, emulator {where}")
    runs = [(f"spread over {args.spread:g} s", args.spread)]
    if not args.no_burst:
        runs.append(("burst", 0.0))
    for label, spread in runs:
        shape = (spread, args.sessions, args.rounds, args.in_process)
        s50, s99 = quantiles(asyncio.run(streaming(box, *shape)))
        p50, p99 = quantiles(asyncio.run(polling(box, *shape)))
        print(f"  {label}: streaming serve loop p50 {s50:7.2f} ms  p99 {s99:7.2f} ms")
        print(f"  {label}: polling every {POLL_INTERVAL * 1000:.0f} ms  p50 {p50:7.2f} ms  "
              f"p99 {p99:7.2f} ms  (polling/streaming p50: {p50 / s50:.0f}x)")
    handle, validate = handle_vs_validate()
    print("8 pending no-op calls: toolbox.handle vs AgentSession.model_validate")
    print(f"  handle {handle:.1f} us, model_validate {validate:.1f} us, ratio "
          f"{handle / validate:.2f}x")


if __name__ == "__main__":
    main()
