"""Whole ``Toolbox.handle`` of an 8-call payload vs parsing that payload with the official SDK.

Run: ``python benchmarks/bench_handle.py [--number N]``. The payload is the Agents sample
session (``session.retrieve``) with 8 pending function calls of no-op ``inline`` tools; the
reference is ``openai.types.beta.agent_session.AgentSession.model_validate(payload)``. The
echo test dialect gives the same measurement without any adapter's parsing cost. Target <= 1.0x.
Variants: no store (``Toolbox(store=None)``); the default ``Toolbox()`` (memory store) with new
calls each run, the headline figure; the memory store answering a re-delivered payload. Every
run parses its payload and runs every handler: nothing is cached between runs.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, SAMPLES, best_of

import toolbridge

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


def echo_payload(conversation: str = "c1") -> dict[str, Any]:
    calls = [{"id": f"call_{i:03d}", "tool": "get_order", "args": {"order_id": str(i)}}
             for i in range(8)]
    return {"conversation": conversation, "calls": calls}


def measure(dialect: str, make: Any, reference: Any, number: int) -> None:
    bare, stored = no_op_toolbox(None), no_op_toolbox("memory://")
    payload = make()
    fresh = iter([make(f"s{i}") for i in range(number * 6)])  # new calls: no replay
    handle_s = best_of(lambda: bare.handle(dialect, payload), number=number)
    stored_s = best_of(lambda: stored.handle(dialect, next(fresh)), number=number)
    replay_s = best_of(lambda: stored.handle(dialect, payload), number=number)
    ref_s = best_of(lambda: reference(payload), number=number)
    print(f"[{dialect}] reference parse:                         {ref_s * 1e6:8.1f} us")
    print(f"[{dialect}] handle, no store:                        {handle_s * 1e6:8.1f} us  "
          f"ratio {handle_s / ref_s:.2f}x")
    print(f"[{dialect}] handle, default memory store, new calls: {stored_s * 1e6:8.1f} us  "
          f"ratio {stored_s / ref_s:.2f}x")
    print(f"[{dialect}] handle, default memory store, replayed:  {replay_s * 1e6:8.1f} us  "
          f"ratio {replay_s / ref_s:.2f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="runs per timing round")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "tests" / "plugins"))
    import toolbridge_echo

    toolbridge.register_plugin(toolbridge_echo, "echo-bench")
    echo_dialect = toolbridge.get_dialect("echo")
    measure("echo", echo_payload, lambda p: echo_dialect.read_calls(p), args.number)
    print("  (echo reference = the echo dialect's own read_calls, for scale)")

    if "openai-agents" not in toolbridge.dialects():
        print("[openai-agents] skipped: the toolbridge_openai_agents adapter is not installed")
        return
    from openai.types.beta.agent_session import AgentSession

    measure("openai-agents", agents_payload, AgentSession.model_validate, args.number)
    dialect = toolbridge.get_dialect("openai-agents")
    payload = agents_payload()
    read_s = best_of(lambda: dialect.read_calls(payload), number=args.number)
    print(f"[openai-agents] of which the adapter's read_calls:         {read_s * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
