"""Instructions per payload of ``Toolbox.handle`` and of the SDK parse, counted by callgrind.

Run: ``python benchmarks/bench_instructions.py [--payloads N] [--calls C]`` (needs valgrind).

A deterministic figure for comparing two versions of the code on a shared machine, where the
wall clock of ``bench_handle.py`` moves by 10-25 % between runs of the same code. Each
configuration runs in two child processes under ``valgrind --tool=callgrind``: one builds N
fresh payloads (``bench_handle.agents_payload``) and answers them, the other only builds them;
their difference over N is the instructions one payload costs. Both warm up first (30 payloads
answered, 30 parsed by the SDK; ``--warmup``), so one-time costs (schemas built on first use)
are not counted, and ``PYTHONHASHSEED=0`` makes the counts repeat exactly.

Instructions are not time: the interpreter runs Python at fewer instructions per cycle than
pydantic-core runs Rust, so a ratio here is lower than the same ratio on the wall clock
(inline tools: 1.1x here, 1.6-1.9x in ``bench_handle.py``). Read it as "this change removed
so much work", never as a target met. Configurations:

- sdk: ``AgentSession.model_validate(payload)``, the baseline;
- default: ``Toolbox()``, sync tools, ``handle``;
- inline: the same tools with ``inline=True``;
- async: the same tools as ``async def``, ``await ahandle`` on one loop;
- no store: the inline toolbox with its store taken away (``Pipeline.store = None``): what the
  store's claim and record cost is the difference to inline.

``--no-valgrind`` runs each configuration's answering child once, without counting (a check
that the script works: the build-only child would count 0 anyway).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CONFIGURATIONS = ("sdk", "default", "inline", "async", "no store")


def child(configuration: str, answer: bool, payloads: int, calls: int, warmup: int = 30
          ) -> None:
    """Build ``payloads`` fresh payloads and, with ``answer``, answer them (or parse them)."""
    import bench_handle as bench
    from openai.types.beta.agent_session import AgentSession

    style = {"default": "sync", "async": "async"}.get(configuration, "inline")
    box = bench.toolbox(style)  # type: ignore[arg-type]
    if configuration == "no store":
        box._pipeline.store = None
    for i in range(warmup):
        AgentSession.model_validate(bench.agents_payload(f"v{i}", calls))
        if style == "async":
            asyncio.run(box.ahandle("openai-agents", bench.agents_payload(f"w{i}", calls)))
        else:
            box.handle("openai-agents", bench.agents_payload(f"w{i}", calls))
    batch = [bench.agents_payload(f"s{i}", calls) for i in range(payloads)]
    if not answer:
        return
    if configuration == "sdk":
        for payload in batch:
            AgentSession.model_validate(payload)
    elif style == "async":
        async def answer_all() -> None:
            for payload in batch:
                await box.ahandle("openai-agents", payload)

        asyncio.run(answer_all())
    else:
        for payload in batch:
            box.handle("openai-agents", payload)


def counted(configuration: str, answer: bool, payloads: int, calls: int, valgrind: bool,
            warmup: int = 30) -> int:
    """Instructions the child process executed (0 without valgrind)."""
    command = [sys.executable, __file__, "--child", configuration, "--payloads", str(payloads),
               "--calls", str(calls), "--warmup", str(warmup)] + (
                   [] if answer else ["--build-only"])
    if valgrind:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
    done = subprocess.run(command, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    if not valgrind:
        return 0
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from callgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payloads", type=int, default=300, help="payloads per count")
    parser.add_argument("--calls", type=int, default=8, help="pending calls per payload")
    parser.add_argument("--warmup", type=int, default=30,
                        help="payloads answered (and parsed) before the counted ones")
    parser.add_argument("--only", choices=CONFIGURATIONS, action="append",
                        help="count only these configurations (sdk always)")
    parser.add_argument("--valgrind", action=argparse.BooleanOptionalAction, default=True,
                        help="count with callgrind (--no-valgrind: only run the children)")
    parser.add_argument("--child", choices=CONFIGURATIONS, help=argparse.SUPPRESS)
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, not args.build_only, args.payloads, args.calls, args.warmup)
        return
    wanted = ["sdk", *[c for c in CONFIGURATIONS[1:] if not args.only or c in args.only]]
    per_payload = {}
    for configuration in wanted:
        run = counted(configuration, True, args.payloads, args.calls, args.valgrind,
                      args.warmup)
        base = counted(configuration, False, args.payloads, args.calls, True,
                       args.warmup) if args.valgrind else 0
        per_payload[configuration] = (run - base) / args.payloads
    if not args.valgrind:
        print(f"ran {len(wanted)} configurations without counting (--no-valgrind)")
        return
    sdk = per_payload["sdk"]
    print(f"Python {sys.version.split()[0]}; {args.payloads} fresh payloads of {args.calls} "
          "calls per count; instructions per payload (callgrind), ratio to the SDK parse")
    for configuration, count in per_payload.items():
        print(f"  {configuration:10s} {count:12,.0f}  {count / sdk:5.2f}x  "
              f"({count / args.calls:,.0f} per call)")


if __name__ == "__main__":
    main()
