"""The result stores' part of a payload: claim 8 new calls, then record their 8 results.

Run: ``python benchmarks/bench_store.py [--number N] [--rounds R] [--dir DIR] [--clock cpu]``.

The calls are `bench_handle.py`'s 8 (its tools' names and decoded arguments, its outputs as
the runtime hands them over), each payload under keys of its own, so every claim is of new
calls; each store gets them as the runtime calls it: ``claim_new`` of the keys, tools and
arguments as columns, ``complete_claimed`` of the results (each a record's fields, the
output's JSON text already encoded).

- sqlite: ``SqliteStore(DIR/results.db)`` (WAL, ``synchronous=FULL``), against a bare
  ``sqlite3`` doing the same 2 commits (`_bare_sqlite.BareSqlite`: the same rows into the same
  table, statements of the same meaning, the same durability) in the same run. Its excess
  over the bare pair is what the store adds to ``handle``; ``--dir /dev/shm`` (no fsync)
  shows it without the disk's noise.
- memory: ``MemoryStore()``, the same claim and write, against
  ``AgentSession.model_validate`` of `bench_handle.py`'s session (the SDK parse that
  benchmark's figures are ratios of), measured in the same run.

Variants take turns within each round, each on fresh keys; each ratio is the median of the
rounds' ratios (paired rounds), each time the median round.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_core import to_json

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_handle
from _bare_sqlite import BareSqlite, filesystem
from _dialect_payloads import paired
from bench_handle import ARGUMENTS, agents_payload

from toolbridge.store import (
    MemoryStore,
    ResultStore,
    SqliteStore,
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


class Fields:
    """A result as the runtime hands it to `ResultStore.complete_claimed` (a record's
    fields)."""

    __slots__ = ("error", "output", "success", "text")

    def __init__(self, output: Any, text: str) -> None:
        self.success, self.output, self.error, self.text = True, output, None, text


def keys(conversation: str) -> list[StoreKey]:
    return [_new(StoreKey, ("openai-agents", conversation, "turn_abc123", f"call_{i:04d}"))
            for i in range(len(ARGUMENTS))]


def claim_and_write(store: ResultStore, outputs: list[tuple[Any, str]]
                    ) -> Callable[[list[StoreKey]], None]:
    tools = [name for name, _ in ARGUMENTS]
    arguments = [args for _, args in ARGUMENTS]
    results = [Fields(output, text) for output, text in outputs]

    def run(batch: list[StoreKey]) -> None:
        owner = store.claim_new(batch, tools, arguments)[0].owner
        store.complete_claimed(owner, batch, results)
        end_owner(owner)

    return run


CLOCK = time.perf_counter


def timed(func: Callable[[Any], Any], inputs: list[Any]) -> float:
    gc.collect()
    started = CLOCK()
    for item in inputs:
        func(item)
    return (CLOCK() - started) / len(inputs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=1000, help="payloads per round (memory "
                        "store and SDK parse; a quarter of it for the SQLite pair)")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (medians kept)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time, or the process's CPU time (blind to fsync's wait)")
    parser.add_argument("--dir", default=None, help="where to make the directory for the "
                        "SQLite files (default: the system's temporary directory)")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
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
    each: dict[str, list[float]] = {}

    def keep(name: str, seconds: float) -> None:
        each.setdefault(name, []).append(seconds)

    few = max(1, args.number // 4)
    for r in range(args.rounds):
        keep("baseline", timed(AgentSession.model_validate,
                               [agents_payload(f"p-{r}-{i}") for i in range(args.number)]))
        keep("memory", timed(variants["memory"], [keys(f"m-{r}-{i}") for i in range(args.number)]))
        keep("sqlite", timed(variants["sqlite"], [keys(f"s-{r}-{i}") for i in range(few)]))
        keep("bare", timed(bare.two_commits, [agents_payload(f"b-{r}-{i}") for i in range(few)]))
    sqlite.close()
    bare.close()
    shutil.rmtree(where, ignore_errors=True)

    med = {name: statistics.median(values) for name, values in each.items()}
    print(f"Python {sys.version.split()[0]}; SQLite files in {where} ({kind}); "
          f"{args.rounds} rounds (fresh keys each round), {args.clock} clock; 8 calls per "
          "payload; medians (ratios: of the rounds' ratios)")
    print(f"bare sqlite3, the same 2 commits:               {med['bare'] * 1e6:8.1f} us")
    print(f"SqliteStore claim + write (synchronous=FULL):   {med['sqlite'] * 1e6:8.1f} us  "
          f"{paired(each, 'sqlite', 'bare'):5.2f}x the bare pair "
          f"({(med['sqlite'] - med['bare']) * 1e6:+.1f} us)")
    print(f"baseline AgentSession.model_validate:           {med['baseline'] * 1e6:8.1f} us")
    print(f"MemoryStore claim + write:                      {med['memory'] * 1e6:8.1f} us  "
          f"{paired(each, 'memory', 'baseline'):5.2f}x the SDK parse")
    print("ratio: every figure is against a baseline measured in the same run")


if __name__ == "__main__":
    main()
