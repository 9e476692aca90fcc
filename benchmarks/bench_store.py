"""The result stores' part of a payload: claim 8 new calls, then record their 8 results.

Run: ``python benchmarks/bench_store.py [--number N] [--rounds R] [--dir DIR]``.

The calls are `bench_handle.py`'s 8 (its tools' names and decoded arguments, its outputs as
the runtime hands them over: `StoreCall` and `StoreCompletion` tuples, each output's JSON
text already encoded), each payload under keys of its own, so every claim is of new calls.

- sqlite: ``SqliteStore(DIR/results.db)`` (WAL, ``synchronous=FULL``): ``claim`` of the 8
  calls, ``write(completed=...)`` of their 8 results, against a bare ``sqlite3`` doing the
  same 2 commits (`_bare_sqlite.BareSqlite`: the same rows into the same table, statements of
  the same meaning, the same durability) in the same run. Its excess over the bare pair is
  what the store adds to ``handle``; ``--dir /dev/shm`` (no fsync) shows it without the
  disk's noise.
- memory: ``MemoryStore()``, the same claim and write, against
  ``AgentSession.model_validate`` of `bench_handle.py`'s session (the SDK parse that
  benchmark's figures are ratios of), measured in the same run.

Variants take turns within each round, each on fresh keys; each figure is the best round.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_core import to_json

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_handle
from bench_handle import ARGUMENTS, BareSqlite, agents_payload, filesystem

from toolbridge.store import (
    MemoryStore,
    ResultStore,
    SqliteStore,
    StoreCall,
    StoreCompletion,
    StoredResult,
    StoreKey,
    end_owner,
)

_new = tuple.__new__  # how the runtime builds these tuples


def _outputs() -> list[tuple[Any, str]]:
    """Each tool's output for its arguments, with its JSON text."""
    outputs = []
    for name, arguments in ARGUMENTS:
        handler = getattr(bench_handle, name)  # each tool's function has its name
        if name == "set_ticket_priority":
            arguments = {**arguments, "priority": bench_handle.Priority(arguments["priority"])}
        if name == "create_shipment":
            arguments = {**arguments, "address": bench_handle.Address(**arguments["address"])}
        output = handler(**arguments)
        outputs.append((output, to_json(output).decode()))
    return outputs


def calls(conversation: str) -> list[StoreCall]:
    return [_new(StoreCall, (_new(StoreKey, ("openai-agents", conversation, "turn_abc123",
                                             f"call_{i:04d}")), name, arguments))
            for i, (name, arguments) in enumerate(ARGUMENTS)]


def claim_and_write(store: ResultStore, outputs: list[tuple[Any, str]]
                    ) -> Callable[[list[StoreCall]], None]:
    def run(batch: list[StoreCall]) -> None:
        owner = store.claim(batch)[0].owner
        store.write(completed=[
            _new(StoreCompletion, (call[0], owner, _new(StoredResult, (True, output, None)),
                                   text))
            for call, (output, text) in zip(batch, outputs, strict=True)])
        end_owner(owner)

    return run


def timed(func: Callable[[Any], Any], inputs: list[Any]) -> float:
    gc.collect()
    started = time.perf_counter()
    for item in inputs:
        func(item)
    return (time.perf_counter() - started) / len(inputs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=1000, help="payloads per round (memory "
                        "store and SDK parse; a quarter of it for the SQLite pair)")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (best is kept)")
    parser.add_argument("--dir", default=None, help="where to make the directory for the "
                        "SQLite files (default: the system's temporary directory)")
    args = parser.parse_args(argv)
    from openai.types.beta.agent_session import AgentSession

    where = Path(tempfile.mkdtemp(prefix="toolbridge-bench-store-", dir=args.dir))
    kind = filesystem(where)
    if kind in ("tmpfs", "ramfs"):
        print(f"note: {where} is on {kind}: no fsync, the SQLite rows show the CPU cost only")
    outputs = _outputs()
    sqlite, memory = SqliteStore(where / "results.db"), MemoryStore()
    bare = BareSqlite(where / "bare.db",
                      ['{"success":true,"output":' + text + "}" for _, text in outputs])
    variants = {"sqlite": claim_and_write(sqlite, outputs),
                "memory": claim_and_write(memory, outputs)}
    best: dict[str, float] = {}

    def keep(name: str, seconds: float) -> None:
        best[name] = min(best.get(name, float("inf")), seconds)

    few = max(1, args.number // 4)
    for r in range(args.rounds):
        keep("baseline", timed(AgentSession.model_validate,
                               [agents_payload(f"p-{r}-{i}") for i in range(args.number)]))
        keep("memory", timed(variants["memory"],
                             [calls(f"m-{r}-{i}") for i in range(args.number)]))
        keep("sqlite", timed(variants["sqlite"], [calls(f"s-{r}-{i}") for i in range(few)]))
        keep("bare", timed(bare.two_commits, [agents_payload(f"b-{r}-{i}") for i in range(few)]))
    sqlite.close()
    bare.close()
    shutil.rmtree(where, ignore_errors=True)

    print(f"Python {sys.version.split()[0]}; SQLite files in {where} ({kind}); best of "
          f"{args.rounds} rounds (fresh keys each round); 8 calls per payload")
    print(f"bare sqlite3, the same 2 commits:               {best['bare'] * 1e6:8.1f} us")
    print(f"SqliteStore claim + write (synchronous=FULL):   {best['sqlite'] * 1e6:8.1f} us  "
          f"{best['sqlite'] / best['bare']:5.2f}x the bare pair "
          f"({(best['sqlite'] - best['bare']) * 1e6:+.1f} us)")
    print(f"baseline AgentSession.model_validate:           {best['baseline'] * 1e6:8.1f} us")
    print(f"MemoryStore claim + write:                      {best['memory'] * 1e6:8.1f} us  "
          f"{best['memory'] / best['baseline']:5.2f}x the SDK parse")
    print("ratio: every figure is against a baseline measured in the same run")


if __name__ == "__main__":
    main()
