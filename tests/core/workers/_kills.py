"""The crash workers' kill loop: fork a child that serves, wait for its first entry, kill it."""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path


def kill_rounds(kills: int, entries_path: Path, seed: str, within: float,
                serve: Callable[[int, int], None]) -> None:
    """``kills`` times: fork a child running ``serve(entries, round)`` (``entries``: the file
    descriptor it notes each handler's entry on), wait until it noted its first entry, then
    SIGKILL it at a moment drawn within ``within`` seconds (seeded by ``seed``)."""
    chance = random.Random(seed)
    entries = os.open(entries_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for round_ in range(kills):
        before = os.fstat(entries).st_size
        child = os.fork()
        if child == 0:
            try:
                serve(entries, round_)
            finally:
                os._exit(1)
        deadline = time.monotonic() + 30
        while os.stat(entries_path).st_size == before:  # its first handler has begun
            if time.monotonic() > deadline:
                os.kill(child, signal.SIGKILL)
                raise SystemExit("the child never noted an entry")
            time.sleep(0.0005)
        time.sleep(chance.uniform(0.0, within))
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
