"""Memory per conversation of every dialect's per-conversation entry point, against its SDK.

For each dialect, its emulator runs in its own process and a fresh worker process holds
CONVERSATIONS conversations at once through `toolbridge.serve.aconverse` (one task each, the
default options: one process-wide client and one rendering of the tools shared by the
conversations held at once, full transcripts), every one waiting in its handler of the
first call; the figure is the worker's RSS growth per conversation over its RSS before
they start (two warm-up conversations first). The toolbox is bench_agents_serve's: ``noop``
and seven realistic tools (``--tools 8``). The baseline, where the SDK has one, is the
same turn through the SDK's own async stream in the same run (one client per process), each
waiting in its handler with its stream read: openai's ``AsyncOpenAI`` (Chat Completions and
Responses ``create(stream=True)``), anthropic's ``AsyncAnthropic`` (``messages.create(
stream=True)``; a Managed Agents session's ``events.stream`` with its message sent, one agent
and environment shared), google-genai's ``client.aio`` (``models.generate_content_stream``,
``interactions.create(stream=True)``). Assistants and CES have no async stream of this turn
in their SDK; Agents' baseline is in bench_agents_serve.py.

    .venv/bin/python benchmarks/bench_conversation_memory.py [--conversations 300]
        [--dialects openai-assistants,google-ces,openai-responses,openai-chat,...] [--tools 8]
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
from collections.abc import Awaitable, Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_agents_serve as agents

DIALECTS = ("openai-agents", "openai-assistants", "google-ces", "openai-responses",
            "openai-chat", "anthropic-messages", "anthropic-sessions", "gemini",
            "gemini-interactions")
SPREAD = 5.0
"""Seconds over which the conversations start (``--spread``; the worker reads BENCH_SPREAD)."""
SCRIPT = {"turns": [{"rounds": [[{"name": "noop", "arguments": {"n": 1}}]], "reply": "done"}]}
BASELINES = ("openai-chat", "openai-responses", "anthropic-messages", "anthropic-sessions",
             "gemini", "gemini-interactions")
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


Turn = Callable[[], Awaitable[None]]


async def _sdk_turn(dialect: str, base_url: str, tools: list[Any],
                    handler: Callable[[Any], Awaitable[str]]) -> tuple[Turn, Any]:
    """One turn through ``dialect``'s SDK stream, up to its handler; the client to close."""
    if dialect.startswith("openai-"):
        from openai import AsyncOpenAI

        openai = AsyncOpenAI(base_url=base_url + "/v1", api_key="bench")

        async def chat() -> None:
            stream = await openai.chat.completions.create(
                model="bench", messages=[{"role": "user", "content": "go"}], tools=tools,
                stream=True)
            arguments = ""
            async for chunk in stream:
                for call in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
                    arguments += call.function.arguments or "" if call.function else ""
            await handler(arguments)

        async def responses() -> None:
            stream = await openai.responses.create(model="bench", input="go", tools=tools,
                                                   stream=True)
            arguments = ""
            async for event in stream:
                if (event.type == "response.output_item.done"
                        and event.item.type == "function_call"):
                    arguments = event.item.arguments
            await handler(arguments)

        return (chat if dialect == "openai-chat" else responses), openai
    if dialect.startswith("anthropic-"):
        from anthropic import AsyncAnthropic

        anthropic = AsyncAnthropic(base_url=base_url, api_key="sk-ant-bench", max_retries=0)

        async def messages() -> None:
            stream = await anthropic.messages.create(
                model="claude-sonnet-4-5", max_tokens=256, tools=tools, stream=True,
                messages=[{"role": "user", "content": "go"}])
            arguments = ""
            async for event in stream:
                if event.type == "content_block_delta" and event.delta.type == (
                        "input_json_delta"):
                    arguments += event.delta.partial_json
            await handler(arguments)

        if dialect == "anthropic-messages":
            return messages, anthropic
        agent = await anthropic.beta.agents.create(name="bench", model="claude-sonnet-4-6",
                                                   tools=tools)
        environment = await anthropic.beta.environments.create(name="bench")

        async def session() -> None:
            created = await anthropic.beta.sessions.create(agent=agent.id,
                                                           environment_id=environment.id)
            stream = await anthropic.beta.sessions.events.stream(created.id)
            await anthropic.beta.sessions.events.send(created.id, events=[
                {"type": "user.message", "content": [{"type": "text", "text": "go"}]}])
            arguments = None
            async for event in stream:
                if event.type == "agent.custom_tool_use":
                    arguments = event.input
                elif event.type == "session.status_idle":
                    break
            await handler(arguments)
            await stream.close()

        return session, anthropic
    from google import genai

    gemini = genai.Client(api_key="bench", http_options={"base_url": base_url})

    async def generate() -> None:
        arguments = None
        async for chunk in await gemini.aio.models.generate_content_stream(
                model="gemini-2.5-flash", contents="go",
                config={"tools": [{"functionDeclarations": tools}]}):
            for part in chunk.candidates[0].content.parts or () if chunk.candidates else ():
                if part.function_call is not None:
                    arguments = part.function_call.args
        await handler(arguments)

    async def interaction() -> None:
        arguments = None
        async for event in await gemini.aio.interactions.create(
                model="gemini-3-flash-preview", tools=tools, input="go", stream=True):
            if event.event_type == "interaction.completed":
                arguments = next(s.arguments for s in event.interaction.steps or ()
                                 if s.type == "function_call")
        await handler(arguments)

    return (generate if dialect == "gemini" else interaction), gemini.aio


async def sdk_side(dialect: str, base_url: str, count: int) -> float:
    import toolbridge

    tools = agents.toolbox(toolbridge).render(dialect).definitions
    gate, seen = asyncio.Event(), []

    async def handler(arguments: Any) -> str:
        seen.append((json.loads(arguments) if isinstance(arguments, str) else arguments)["n"])
        if len(seen) >= count:
            gate.set()
        await gate.wait()
        return str(seen[-1])

    turn, client = await _sdk_turn(dialect, base_url, list(tools), handler)
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
    gated = asyncio.create_task(gate.wait())
    while not gate.is_set():  # a turn that fails never reaches its handler: say so
        done, _ = await asyncio.wait({gated, *tasks}, return_when=asyncio.FIRST_COMPLETED)
        failed = [t for t in done if t is not gated and t.exception() is not None]
        if failed:
            raise RuntimeError(f"an SDK turn failed: {failed[0].exception()!r}")
    gc.collect()
    grown = (agents.rss_kb() - before) / count
    await asyncio.gather(*tasks)
    await client.aclose() if hasattr(client, "aclose") else await client.close()
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
        ours = measure("toolbridge", dialect, args.conversations, args.tools,
                       args.spread)
        print(f"  {dialect:>19}: toolbridge {ours:5.1f} KB", end="", flush=True)
        if dialect in BASELINES:
            try:
                theirs = measure("sdk", dialect, args.conversations, args.tools,
                                 args.spread)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                print(f", SDK n/a ({str(exc).strip().splitlines()[-1][:160]})", flush=True)
                continue
            print(f", SDK {theirs:5.1f} KB (ratio {ours / theirs:4.2f}x)", end="")
        print(flush=True)


if __name__ == "__main__":
    main()
