"""Memory per conversation of every dialect's per-conversation entry point, against its SDK.

For each dialect, its emulator runs in its own process and a fresh worker process holds
CONVERSATIONS conversations at once through `toolbridge.serve.aconverse` (one task each, the
default options: one process-wide client and one rendering of the tools shared by the
conversations held at once, full transcripts), every one waiting in its handler of the
first call; the figure is the worker's RSS growth per conversation over its RSS before
they start (two warm-up conversations first). The toolbox is bench_agents_serve's: ``noop``
and seven realistic tools (``--tools 8``). The baseline, where the SDK has one, is the
same turn through the SDK's own stream in the same run (openai's ``AsyncOpenAI``, one client:
Chat Completions ``create(stream=True)``, Responses ``create(stream=True)``), each waiting in
its handler with its stream read; Agents' baseline is in bench_agents_serve.py.

    .venv/bin/python benchmarks/bench_conversation_memory.py [--conversations 300]
        [--dialects openai-assistants,google-ces,openai-responses,openai-chat] [--tools 8]
        [--spread 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_agents_serve as agents

DIALECTS = ("openai-agents", "openai-assistants", "google-ces", "openai-responses",
            "openai-chat")
SPREAD = 5.0
"""Seconds over which the conversations start (``--spread``; the worker reads BENCH_SPREAD)."""
SCRIPT = {"turns": [{"rounds": [[{"name": "noop", "arguments": {"n": 1}}]], "reply": "done"}]}
BASELINES = ("openai-chat", "openai-responses")
"""Dialects whose SDK side is measured here."""


def _serve_emulator(conn: Any, dialect: str) -> None:
    import logging

    from toolbridge.testing import emulator

    logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
    with emulator(dialect, script=SCRIPT) as emu:
        conn.send(emu.base_url)
        conn.recv()


async def toolbridge_side(dialect: str, base_url: str, count: int) -> float:
    import toolbridge
    from toolbridge.serve import aconverse
    from toolbridge.testing import emulated_options

    options = emulated_options(dialect, base_url)
    spread = float(os.environ.get("BENCH_SPREAD", SPREAD))
    warm = agents.toolbox(toolbridge)
    for _ in range(2):
        done = await aconverse(warm, dialect, ["go"], options)
        assert done.status == "completed", done.render()
    gate, seen = asyncio.Event(), []
    box = agents.toolbox(toolbridge, gate, seen, count)
    gc.collect()
    before = agents.rss_kb()

    async def one(i: int) -> Any:
        await asyncio.sleep(spread * i / count)
        return await aconverse(box, dialect, ["go"], options)

    tasks = [asyncio.create_task(one(i)) for i in range(count)]
    await gate.wait()
    gc.collect()
    grown = (agents.rss_kb() - before) / count
    done = await asyncio.gather(*tasks)
    bad = [t for t in done if t.status != "completed"]
    if bad:
        raise RuntimeError(f"{len(bad)} conversations did not complete: {bad[0].render()}")
    return grown


async def sdk_side(dialect: str, base_url: str, count: int) -> float:
    from openai import AsyncOpenAI

    import toolbridge

    client = AsyncOpenAI(base_url=base_url + "/v1", api_key="bench")
    tools = agents.toolbox(toolbridge).render(dialect).definitions
    gate, seen = asyncio.Event(), []

    async def handler(arguments: str) -> str:
        seen.append(json.loads(arguments)["n"])
        if len(seen) >= count:
            gate.set()
        await gate.wait()
        return str(seen[-1])

    async def chat() -> None:
        stream = await client.chat.completions.create(
            model="bench", messages=[{"role": "user", "content": "go"}], tools=tools,
            stream=True)
        arguments = ""
        async for chunk in stream:
            for call in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
                arguments += call.function.arguments or "" if call.function else ""
        await handler(arguments)

    async def responses() -> None:
        stream = await client.responses.create(model="bench", input="go", tools=tools,
                                               stream=True)
        arguments = ""
        async for event in stream:
            if event.type == "response.output_item.done" and event.item.type == "function_call":
                arguments = event.item.arguments
        await handler(arguments)

    turn = chat if dialect == "openai-chat" else responses
    spread = float(os.environ.get("BENCH_SPREAD", SPREAD))
    for _ in range(2):  # warm-up: imports, first-use caches
        seen.clear()
        gate.set()
        await turn()
    gate.clear()
    seen.clear()
    gc.collect()
    before = agents.rss_kb()

    async def one(i: int) -> None:
        await asyncio.sleep(spread * i / count)
        await turn()

    tasks = [asyncio.create_task(one(i)) for i in range(count)]
    await gate.wait()
    gc.collect()
    grown = (agents.rss_kb() - before) / count
    await asyncio.gather(*tasks)
    await client.close()
    return grown


def measure(side: str, dialect: str, count: int, tools: int, spread: float = SPREAD) -> float:
    """One side's growth per conversation: a fresh emulator and a fresh worker process."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_serve_emulator, args=(child, dialect), daemon=True)
    process.start()
    try:
        base_url = parent.recv()
        out = subprocess.run([sys.executable, __file__, "--worker", side, dialect, base_url,
                              str(count)], capture_output=True, text=True, timeout=900,
                             env={**os.environ, "BENCH_TOOLS": str(tools),
                                  "BENCH_SPREAD": str(spread)})
        parent.send(None)
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
    if out.returncode != 0:
        raise RuntimeError(f"{side} {dialect} failed:\n{out.stderr[-3000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=300)
    parser.add_argument("--dialects", default=",".join(DIALECTS[1:]))
    parser.add_argument("--tools", type=int, default=8)
    parser.add_argument("--spread", type=float, default=SPREAD,
                        help="seconds over which the conversations start (default 5)")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        side, dialect, base_url, count = args.worker
        run = toolbridge_side if side == "toolbridge" else sdk_side
        print(asyncio.run(run(dialect, base_url, int(count))))
        return
    print(f"Memory per conversation, {args.conversations} waiting at once in a handler, "
          f"{args.tools} tools, aconverse vs the SDK's stream; {os.cpu_count()} cores")
    for dialect in args.dialects.split(","):
        ours = measure("toolbridge", dialect, args.conversations, args.tools, args.spread)
        line = f"  {dialect:>18}: toolbridge {ours:5.1f} KB"
        if dialect in BASELINES:
            theirs = measure("sdk", dialect, args.conversations, args.tools, args.spread)
            line += f", SDK {theirs:5.1f} KB (ratio {ours / theirs:4.2f}x)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
