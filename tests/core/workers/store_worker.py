"""A worker process for the store tests (SQLite and PostgreSQL).

Usage: store_worker.py STORE RUNS_FILE MODE [SIDE_EFFECTS] [CALLS]; STORE is a store URL, or the
path of an SQLite file; CALLS is ``id:amount,...`` (default ``call-1:5``). MODE "fast" / "slow"
/ "hang": answers one echo payload of CALLS with ``Toolbox(store=STORE)``; the tool appends
"ran <amount>" to RUNS_FILE when it starts, then "hang" sleeps (the test kills the process)
and "slow" sleeps briefly; prints the response body as JSON. MODE "queue": as "hang", with
``max_concurrency=1``, so the calls after the first are claimed and wait for it, never
started. MODE "hold": claims the first call in the store directly, prints its state and
waits for its stdin to close: a live worker on another machine, as far as the store can tell.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "plugins"))

import toolbridge_echo

import toolbridge
import toolbridge.plugin
import toolbridge.store


def main() -> None:
    url, runs, mode = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    if "://" not in url:
        url = f"sqlite:///{Path(url).resolve()}"
    side_effects = len(sys.argv) < 5 or sys.argv[4] == "1"
    specs = [item.split(":") for item in (sys.argv[5] if len(sys.argv) > 5 else
                                          "call-1:5").split(",")]
    payload = {"conversation": "conv-1", "calls": [
        {"id": call_id, "tool": "charge", "args": {"amount": int(amount)}}
        for call_id, amount in specs]}
    if mode == "hold":
        store = toolbridge.open_store(url)
        key = toolbridge.store.StoreKey("echo", "conv-1", "", specs[0][0])
        claim = store.claim_one(key, "charge", {"amount": int(specs[0][1])})
        print(claim.state, flush=True)
        sys.stdin.read()
        return
    toolbridge.plugin.register_plugin(toolbridge_echo, "echo")
    toolbox = toolbridge.Toolbox(store=url, max_concurrency=1 if mode == "queue" else 16)

    @toolbox.tool(side_effects=side_effects)
    def charge(amount: int) -> str:
        with runs.open("a") as f:
            f.write(f"ran {amount}\n")
        if mode in ("hang", "queue"):
            time.sleep(60)
        if mode == "slow":
            time.sleep(0.5)
        return f"charged {amount}"

    print(json.dumps(toolbox.handle("echo", payload)), flush=True)


if __name__ == "__main__":
    main()
