"""Whole ``Toolbox.handle`` of an 8-call payload vs parsing that payload with the official SDK.

Run: ``python benchmarks/bench_handle.py [--number N] [--rounds R]``. The payload is the Agents
sample session (``session.retrieve``) with 8 pending function calls of no-op ``inline`` tools;
the reference is ``openai.types.beta.agent_session.AgentSession.model_validate(payload)``. The
echo test dialect gives the same measurement without any adapter's parsing cost (its
reference is its own ``read_calls``). Target <= 1.0x. The Responses (a response with 8
``function_call`` items, reference ``Response.model_validate``) and Chat Completions (a
completion with 8 ``tool_calls``, reference ``ChatCompletion.model_validate``) dialects are
measured the same way.

Variants: no store (``Toolbox(store=None)``); the default ``Toolbox()`` (memory store) on new
calls each run, the headline figure (what a server pays per delivery); the memory store
answering a re-delivered payload. Every run parses its payload and runs every handler:
nothing is cached between runs.

Fairness: in each round every variant and the reference get their own ``N`` payloads, built
the same way just before the round, so all of them read equally "cold" data (a payload
parsed over and over sits in the CPU cache and flatters whoever reads it); the re-delivery
variant and its reference both read one payload over and over. The variants take turns within
each round, so a slower stretch of the machine hits all of them; each figure is the best
round. The garbage collector stays on: a store that keeps results pays for them.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, SAMPLES, best_of

import toolbridge
import toolbridge.plugin

SAMPLE = SAMPLES / "openai-agents-sessions.session.retrieve.response.json"


def no_op_toolbox(store: Any) -> toolbridge.Toolbox:
    toolbox = toolbridge.Toolbox(store=store)

    @toolbox.tool(inline=True)
    def get_customer(customer_id: str) -> str:
        """Look up a customer by ID."""
        return "ok"

    @toolbox.tool(inline=True)
    def get_order(order_id: str, include_items: bool = False) -> str:
        """Look up an order by ID."""
        return "ok"

    return toolbox


def agents_payload(session: str = "sess_abc123") -> dict[str, Any]:
    sample = json.loads(SAMPLE.read_text())
    actions = []
    for i in range(8):
        action = copy.deepcopy(sample["required_actions"][i % 2])
        action["call_id"] = f"call_{i:03d}"
        actions.append(action)
    return {**sample, "id": session, "required_actions": actions}


def responses_payload(response: str = "resp_1") -> dict[str, Any]:
    """A completed Responses response with 8 ``function_call`` items (JSON-string arguments)."""
    sample = json.loads((ROOT / "tests" / "adapters" / "openai_responses" / "payloads" /
                         "openai-responses.response.function-calls.json").read_text())
    output = [{"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i:03d}",
               "name": "get_order", "status": "completed",
               "arguments": json.dumps({"order_id": str(i), "include_items": False})}
              for i in range(8)]
    return {**sample, "id": response, "output": output}


def chat_payload(completion: str = "chatcmpl-1") -> dict[str, Any]:
    """A chat completion whose assistant message holds 8 ``tool_calls``."""
    sample = json.loads((ROOT / "tests" / "adapters" / "openai_chat" / "payloads" /
                         "openai-chat.completion.tool-calls.response.json").read_text())
    calls = [{"id": f"call_{i:03d}", "type": "function", "function": {
        "name": "get_order", "arguments": json.dumps({"order_id": str(i)})}} for i in range(8)]
    choice = {**sample["choices"][0], "message": {**sample["choices"][0]["message"],
                                                  "tool_calls": calls}}
    return {**sample, "id": completion, "choices": [choice]}


def echo_payload(conversation: str = "c1") -> dict[str, Any]:
    calls = [{"id": f"call_{i:03d}", "tool": "get_order", "args": {"order_id": str(i)}}
             for i in range(8)]
    return {"conversation": conversation, "calls": calls}


def timed(func: Any, payloads: list[Any]) -> float:
    """Seconds per payload of ``func`` over ``payloads``."""
    started = time.perf_counter()
    for payload in payloads:
        func(payload)
    return (time.perf_counter() - started) / len(payloads)


def measure(dialect: str, make: Any, reference: Any, number: int, rounds: int) -> None:
    bare, stored = no_op_toolbox(None), no_op_toolbox("memory://")
    variants = {
        "reference": reference,
        "bare": lambda p: bare.handle(dialect, p),
        "stored": lambda p: stored.handle(dialect, p),
    }
    best = dict.fromkeys([*variants, "reference, one payload", "replayed"], float("inf"))
    repeated = make()
    stored.handle(dialect, repeated)  # stored: from now on every handle of it is a replay
    for r in range(rounds):
        fresh = {name: [make(f"{name}-{r}-{i}") for i in range(number)] for name in variants}
        for name, func in variants.items():
            best[name] = min(best[name], timed(func, fresh[name]))
        del fresh
        best["reference, one payload"] = min(best["reference, one payload"],
                                             timed(reference, [repeated] * number))
        best["replayed"] = min(best["replayed"], timed(variants["stored"], [repeated] * number))
    ref, ref_one = best["reference"], best["reference, one payload"]
    print(f"[{dialect}] reference parse, new payloads:            {ref * 1e6:8.1f} us")
    for label, name, base in (
        ("handle, no store, new payloads:      ", "bare", ref),
        ("handle, default memory store, new calls:", "stored", ref),
        ("reference parse, one payload again: ", "reference, one payload", ref_one),
        ("handle, memory store, replayed:      ", "replayed", ref_one),
    ):
        ratio = "" if name == "reference, one payload" else f"  ratio {best[name] / base:.2f}x"
        print(f"[{dialect}] {label:40s} {best[name] * 1e6:8.1f} us{ratio}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="payloads per timing round")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (best is kept)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "tests" / "plugins"))
    import toolbridge_echo

    toolbridge.plugin.register_plugin(toolbridge_echo, "echo-bench")
    echo_dialect = toolbridge.get_dialect("echo")
    measure("echo", echo_payload, lambda p: echo_dialect.read_calls(p), args.number,
            args.rounds)
    print("  (echo reference = the echo dialect's own read_calls, for scale)")

    if "openai-agents" not in toolbridge.dialects():
        print("[openai-agents] skipped: the toolbridge_openai_agents adapter is not installed")
        return
    from openai.types.beta.agent_session import AgentSession

    measure("openai-agents", agents_payload, AgentSession.model_validate, args.number,
            args.rounds)
    dialect = toolbridge.get_dialect("openai-agents")
    payload = agents_payload()
    read_s = best_of(lambda: dialect.read_calls(payload), number=args.number)
    print(f"[openai-agents] of which the adapter's read_calls, one payload: "
          f"{read_s * 1e6:8.1f} us")

    from openai.types.chat.chat_completion import ChatCompletion
    from openai.types.responses.response import Response

    for name, make, model in (("openai-responses", responses_payload, Response),
                              ("openai-chat", chat_payload, ChatCompletion)):
        if name in toolbridge.dialects():
            measure(name, make, model.model_validate, args.number, args.rounds)
    print("  (openai-chat keeps no results without conversation=..., so its two handle "
          "variants store nothing)")


if __name__ == "__main__":
    main()
