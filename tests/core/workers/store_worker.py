"""A worker process for the store tests: answers one echo payload with an SQLite store.

Usage: store_worker.py DB RUNS_FILE MODE [SIDE_EFFECTS]. The tool appends a line to RUNS_FILE
when it starts; MODE "hang" then sleeps (the test kills the process), "slow" sleeps briefly.
Prints the response body as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "plugins"))

import toolbridge_echo

import toolbridge

PAYLOAD = {"conversation": "conv-1", "calls": [{"id": "call-1", "tool": "charge",
                                                "args": {"amount": 5}}]}


def main() -> None:
    db, runs, mode = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    side_effects = len(sys.argv) < 5 or sys.argv[4] == "1"
    toolbridge.register_plugin(toolbridge_echo, "echo")
    toolbox = toolbridge.Toolbox(store=f"sqlite:///{db}")

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
