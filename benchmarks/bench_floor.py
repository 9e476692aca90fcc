"""The floor under ``handle``: what answering the Agents session's calls costs at the least.

Run: ``python benchmarks/bench_floor.py [--number N] [--rounds R] [--clock wall|cpu]``.

Per call, on `bench_handle.py`'s payloads (8 calls, and 512), these figures against
``AgentSession.model_validate`` of the same payloads, measured in the same run:

- floor: only the steps every answer needs, written out in plain Python: the call's fields
  read from the wire, its arguments bound by a `toolbridge.tools.RegisteredTool` of the same
  definition and function (the schema check and pydantic, as ``handle`` binds them), a dict
  checked and written for the store's claim, the handler, its output encoded (pydantic-core's
  ``to_json``) and the result in the dict, the wire's result event;
- floor + model: the same, also making the neutral model's two objects per call, a
  `ToolCall` (``ToolCall.trusted``) and a `ToolResult` (``ToolResult.ok``), at their cheapest;
- parts, + plan, + store, + execute, + executor: toolbridge's own parts (its reader,
  decoder, binder, shaper and writer) with no pipeline around them, then the pipeline's
  steps added one at a time (`_ladder`), on the inline tools: each row's difference to the
  row above is what that step costs;
- inline: ``Toolbox`` with the same tools ``inline=True``, ``handle`` (the memory store);
- inline, no store: the same with ``Toolbox(store=None)`` (no claim, no record);
- default: ``Toolbox()`` with no flags, ``handle``.

No fault handling, no limits, no durable store: the floor is not a configuration anyone gets,
it is the bound under which the pipeline's own work (its objects, checks and store) is the
difference. Fresh payloads for every variant each round, variants taking turns within each
round, the garbage collector on (a full collection before each timed loop); each ratio is the
median over the rounds of the variant's time over the SDK's in the same round (paired
rounds), each time the median round.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_handle as bench
from _ladder import rungs
from pydantic_core import to_json

import toolbridge
from toolbridge import ToolCall, ToolResult
from toolbridge.tools import RegisteredTool, inspect_function


def registered(box: toolbridge.Toolbox) -> dict[str, RegisteredTool]:
    """Each of ``box``'s tools as the runtime binds it: its definition with its function."""
    handlers: dict[str, Callable[..., Any]] = {f.__name__: f for f in bench.DECORATED}
    handlers.update((definition.name, handler) for definition, handler in bench.ADDED)
    tools = {}
    for name in box.names():
        definition, handler = box.get(name), handlers[name]
        if name in {f.__name__ for f in bench.DECORATED}:
            tools[name] = RegisteredTool.from_function(
                definition, handler, inspect_function(handler, name), inline=True)
        else:
            tools[name] = RegisteredTool.from_definition(definition, handler, inline=True)
    return tools


def floor(box: toolbridge.Toolbox, model: bool) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The least answer of an Agents session (``model``: with a `ToolCall` and a `ToolResult`
    per call), keeping what the store would keep in a dict."""
    tools = registered(box)
    store: dict[tuple[str, str, str, str], str | None] = {}

    def answer(payload: dict[str, Any]) -> dict[str, Any]:
        events = []
        session = payload["id"]
        for action in payload["required_actions"]:
            if action.get("type") != "function_call":
                continue
            name, call_id, turn = action["name"], action["call_id"], action["turn_id"]
            arguments = action["arguments"]
            call = ToolCall.trusted(id=call_id, name=name, dialect="openai-agents",
                                    arguments=arguments, conversation=session,
                                    turn=turn) if model else None
            tool = tools[name]
            kwargs = tool.bind(dict(arguments), None)
            key = ("openai-agents", session, turn, call_id)
            if key in store:
                raise SystemExit(f"call {key} answered twice")
            store[key] = None
            value = tool.handler(**kwargs)
            text = value if type(value) is str else to_json(value).decode()
            if call is not None:
                ToolResult.ok(call, value)
            store[key] = text
            events.append({"type": "agent.session.input.tool_result", "turn_id": turn,
                           "call_id": call_id, "success": True, "output": text})
        return {"events": events}

    return answer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=1000, help="8-call payloads per round")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (paired)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time (default), or the process's CPU time")
    args = parser.parse_args(argv)
    bench.CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    from openai.types.beta.agent_session import AgentSession

    inline, default = bench.toolbox("inline"), bench.toolbox()
    unstored = bench.toolbox("inline", store=None)
    variants: dict[str, Callable[[dict[str, Any]], Any]] = {
        "sdk": AgentSession.model_validate,
        "floor": floor(inline, model=False),
        "floor + model": floor(inline, model=True),
        **rungs(inline),
        "inline": lambda p: inline.handle("openai-agents", p),
        "inline, no store": lambda p: unstored.handle("openai-agents", p),
        "default": lambda p: default.handle("openai-agents", p),
    }
    times: dict[tuple[int, str], list[float]] = {}
    sizes = ((8, args.number), (512, max(1, args.number // 40)))
    for r in range(args.rounds):
        for calls, number in sizes:
            for name, answer in variants.items():
                payloads = [bench.agents_payload(f"{name}-{calls}-{r}-{i}", calls)
                            for i in range(number)]
                times.setdefault((calls, name), []).append(
                    bench.timed(answer, payloads) / calls)
    for box in (inline, unstored, default):
        box.close()
    print(f"Python {sys.version.split()[0]}; {args.rounds} rounds (fresh payloads each round; "
          f"{sizes[0][1]} of 8 calls, {sizes[1][1]} of 512); {args.clock} clock; medians")
    for calls, _ in sizes:
        sdk = times[calls, "sdk"]
        print(f"{calls} calls per payload, per call:")
        for name in variants:
            mine = times[calls, name]
            ratio = statistics.median(t / s for t, s in zip(mine, sdk, strict=True))
            print(f"  {name:16s} {statistics.median(mine) * 1e6:7.2f} us  {ratio:5.2f}x")
    print("ratio: every figure is against AgentSession.model_validate in the same run")


if __name__ == "__main__":
    main()
