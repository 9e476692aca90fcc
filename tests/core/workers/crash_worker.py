"""Kills side-effecting payloads at random moments, for the "started" mark's crash test.

Usage: crash_worker.py STORE ENTRIES KILLS SEED [EFFECT_SECONDS [KILL_WITHIN_SECONDS]].

For each of KILLS rounds it forks a child that answers payloads of 16 side-effecting calls
with ``Toolbox(store=STORE)`` (worker threads, the default executor) until it is SIGKILLed at
a uniformly random moment within KILL_WITHIN_SECONDS (default 0.25) of its first handler's
entry. Each handler notes its entry (its call id, a line appended to ENTRIES) before its side
effect (a pause of EFFECT_SECONDS, default 0.05, as a network call would be). The test then
compares the store's "started" calls with ENTRIES: a call marked started whose handler never
noted its entry would be answered "outcome unknown" although it never ran. Prints the kills
as JSON.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "plugins"))

import toolbridge_echo
from _kills import kill_rounds

import toolbridge
import toolbridge.plugin

CALLS = 16


def serve(url: str, entries: int, round_: int, effect: float) -> None:
    """The child: answer payloads until killed."""
    toolbox = toolbridge.Toolbox(store=url, max_concurrency=CALLS)

    @toolbox.tool(side_effects=True)
    def charge(tag: str) -> str:
        os.write(entries, f"{tag}\n".encode())  # the handler's entry, before the side effect
        time.sleep(effect)
        return f"charged {tag}"

    for number in range(10**9):
        ids = [f"r{round_}p{number}c{i}" for i in range(CALLS)]
        toolbox.handle("echo", {"conversation": f"crash-{round_}", "calls": [
            {"id": call_id, "tool": "charge", "args": {"tag": call_id}} for call_id in ids]})


def main() -> None:
    url, entries_path, kills, seed = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    effect = float(sys.argv[5]) if len(sys.argv) > 5 else 0.05
    within = float(sys.argv[6]) if len(sys.argv) > 6 else 0.25
    toolbridge.plugin.register_plugin(toolbridge_echo, "echo")
    toolbridge.Toolbox(store=None).pending("echo", {"calls": []})  # loaded: forks start fast
    kill_rounds(kills, entries_path, seed, within,
                lambda entries, round_: serve(url, entries, round_, effect))
    print(json.dumps({"kills": kills}), flush=True)


if __name__ == "__main__":
    main()
