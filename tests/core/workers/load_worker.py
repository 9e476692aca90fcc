"""A worker process for the SQLite load test: answers a shared pool of side-effecting calls.

Usage: load_worker.py DB RUNS_FILE CALLS SEED. Every worker answers the same CALLS calls (ids
``call-0`` ...), in payloads of 10, in an order shuffled by SEED; the tool appends its call id
to RUNS_FILE each time it runs. Prints ``{"bad": [answers that are not "charged <id>"]}``.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "plugins"))

import toolbridge_echo

import toolbridge
import toolbridge.plugin


def main() -> None:
    db, runs, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    toolbridge.plugin.register_plugin(toolbridge_echo, "echo")
    toolbox = toolbridge.Toolbox(store=f"sqlite:///{db}", timeout=10)

    @toolbox.tool(side_effects=True)
    def charge(call: str) -> str:
        fd = os.open(runs, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, f"{call}\n".encode())  # one small O_APPEND write: atomic
        finally:
            os.close(fd)
        return f"charged {call}"

    ids = [f"call-{i}" for i in range(count)]
    random.Random(seed).shuffle(ids)
    bad = []
    for start in range(0, count, 10):
        batch = ids[start:start + 10]
        payload = {"conversation": "load", "calls": [
            {"id": i, "tool": "charge", "args": {"call": i}} for i in batch]}
        for answer in toolbox.handle("echo", payload)["answers"]:
            if answer.get("value") != f"charged {answer['id']}":
                bad.append(answer)
    print(json.dumps({"bad": bad}), flush=True)


if __name__ == "__main__":
    main()
