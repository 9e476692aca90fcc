"""A worker process for the store tests (SQLite and PostgreSQL).

Usage: store_worker.py STORE RUNS_FILE MODE [SIDE_EFFECTS]; STORE is a store URL, or the path of
an SQLite file. MODE "fast" / "slow" / "hang": answers one echo payload with
``Toolbox(store=STORE)``; the tool appends a line to RUNS_FILE when it starts, then "hang" sleeps
(the test kills the process) and "slow" sleeps briefly; prints the response body as JSON.
MODE "hold": claims the payload's call in the store directly, prints "held" and waits for its
stdin to close: a live worker on another machine, as far as the store can tell.
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

PAYLOAD = {"conversation": "conv-1", "calls": [{"id": "call-1", "tool": "charge",
                                                "args": {"amount": 5}}]}


def main() -> None:
    url, runs, mode = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    if "://" not in url:
        url = f"sqlite:///{Path(url).resolve()}"
    side_effects = len(sys.argv) < 5 or sys.argv[4] == "1"
    if mode == "hold":
        store = toolbridge.open_store(url)
        key = toolbridge.store.StoreKey("echo", "conv-1", "", "call-1")
        claim = store.claim_one(key, "charge", {})
        print(claim.state, flush=True)
        sys.stdin.read()
        return
    toolbridge.plugin.register_plugin(toolbridge_echo, "echo")
    toolbox = toolbridge.Toolbox(store=url)

    @toolbox.tool(side_effects=side_effects)
    def charge(amount: int) -> str:
        with runs.open("a") as f:
            f.write("ran\n")
        if mode == "hang":
            time.sleep(60)
        if mode == "slow":
            time.sleep(0.5)
        return f"charged {amount}"

    print(json.dumps(toolbox.handle("echo", PAYLOAD)), flush=True)


if __name__ == "__main__":
    main()
