"""``bench_handle.py --stages``: the dialect-specific stages of ``handle``, per dialect.

What ``handle`` does for one dialect and not for another, each stage timed over a round of
fresh payloads (`_dialect_payloads`, the Agents session of `bench_handle`), in the order
``handle`` runs them: ``to_data`` (JSON text parsed; a dict is taken as it is), the reader
(`Dialect.read_records`, through `record_forms` as the pipeline calls it), the per-call decode
(`Dialect.decode_record` of every record against its tool, as the plan calls it; 0 for a
dialect that keeps arguments as sent) and the writer (`Dialect.write_records` of the records
the pipeline answered). The shared pipeline between them (plan, claim, run, store) is the
same for every dialect and is not timed here. Each figure is the median round, in us per
8-call payload; "own" is their sum, and "vs agents" its difference from the Agents
dialect's (what issue 26's target leaves room for: about 75 us). The last column, "store",
is the shared memory store's part on the payload's keys as the dialect forms them (not in
"own"): ``claim_new`` and ``complete_claimed`` of its keyed calls, in a store of its own per
round that holds the round's earlier payloads (CES's bound session keeps every payload's calls
in one turn; Chat without ``conversation=...`` stores nothing).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from _dialect_payloads import Dialects

import toolbridge
from toolbridge.plugin._dialect import record_forms
from toolbridge.runtime._payload import to_data
from toolbridge.store import MemoryStore, StoreKey

STAGES = ("to_data", "read", "decode", "write")
STORE = "store"


def _timed(func: Callable[[Any], Any], items: Sequence[Any]) -> tuple[float, list[Any]]:
    """Microseconds per item of ``func`` over ``items`` (CPU clock), and what it returned."""
    gc.collect()
    started = time.process_time()
    made = [func(item) for item in items]
    return (time.process_time() - started) / len(items) * 1e6, made


def _round(box: toolbridge.Toolbox, dialect: Any, payloads: list[Any]) -> dict[str, float]:
    d = toolbridge.get_dialect(dialect)
    forms = record_forms(type(d))
    tools = box._pipeline.tools
    row: dict[str, float] = {}
    row["to_data"], data = _timed(lambda p: to_data(p, d.name), payloads)
    row["read"], read = _timed(lambda x: forms.read(d, x, None).records, data)
    decode = forms.decode
    if decode is None:
        row["decode"] = 0.0
    else:
        pairs = [[(r, tools[r.name].definition) for r in records] for records in read]
        row["decode"], _ = _timed(lambda each: [decode(d, r, t) for r, t in each], pairs)
    for records in read:  # answered as handle answers them (a fresh call each: no replay)
        box._pipeline._run(records, {}, d)
    row["write"], _ = _timed(lambda records: forms.write(d, records), read)
    row[STORE], _ = _timed(_stored(MemoryStore()), read)
    return row


def _stored(store: MemoryStore) -> Callable[[Sequence[Any]], None]:
    """What the pipeline asks of ``store`` for a payload's answered records: a claim of its
    keyed calls (those the plan keys: an id, and a conversation or a turn), their results."""
    def stored(records: Sequence[Any]) -> None:
        keyed = [r for r in records if r.id and (r.conversation or r.turn)]
        if keyed:
            keys = [StoreKey(r.dialect, r.conversation, r.turn, r.id) for r in keyed]
            claims = store.claim_new(keys, [r.name for r in keyed], [r.arguments for r in keyed])
            store.complete_claimed(claims[0].owner, keys, keyed)
    return stored


def run_stages(dialects: Dialects, box: toolbridge.Toolbox,
               agents: Callable[[str], Any], rounds: int, number: int) -> None:
    """Time every dialect's stages for ``rounds`` rounds of ``number`` fresh payloads each
    (``agents(tag)``: an Agents session), and print the median rounds."""
    names = ["openai-agents", *dialects.parses]
    each: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names:
            payloads = [agents(f"st{r}-{i}") if name == "openai-agents"
                        else dialects.payload(name, f"st{r}-{i}") for i in range(number)]
            each[name].append(_round(box, dialects.target(name), payloads))
    print(f"dialect-specific stages of handle, us per 8-call payload (CPU clock; median of "
          f"{rounds} rounds of {number} fresh payloads):")
    print(f"  {'dialect':20s}" + "".join(f"{s:>9s}" for s in STAGES) + f"{'own':>9s}"
          f"{'vs agents':>11s}{STORE:>9s}")
    base = None
    for name in names:
        med = {s: statistics.median(row[s] for row in each[name]) for s in (*STAGES, STORE)}
        own = statistics.median(sum(row[s] for s in STAGES) for row in each[name])
        base = own if base is None else base
        print(f"  {name:20s}" + "".join(f"{med[s]:9.1f}" for s in STAGES) + f"{own:9.1f}"
              f"{own - base:+11.1f}{med[STORE]:9.1f}")
