"""`bench_handle.py`'s SQLite rows: the store's ``handle`` against the default ``handle`` plus
a bare ``sqlite3`` doing the same commits (`_bare_sqlite`), timed together.

Per payload the floor runs the bare claim, the default ``handle``, then the bare results (or
marks and results), in one loop, as the store's ``handle`` interleaves them: each part then runs
on the caches the other leaves. Timed in loops of their own each part runs warm, which no
program doing both does; that sum ("timed apart") is printed too.
"""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _bare_sqlite import BareSqlite
from _dialect_payloads import paired

import toolbridge
from toolbridge.runtime import InlineExecutor

Keep = Callable[[str, float], None]


class SqliteRows:
    """The stores, floors and timings of the SQLite rows, one round at a time.

    ``toolbox(store=..., heavy=..., side_effects=...)`` and ``payload(tag, calls, heavy)`` are
    the bench's own; ``clock()`` gives the clock it reads now; ``inline``: a row of the
    side-effecting tools under `InlineExecutor` too (the store and journal without the worker
    threads' hand-offs)."""

    def __init__(self, where: Path, toolbox: Callable[..., toolbridge.Toolbox],
                 payload: Callable[[str, int, bool], dict[str, Any]],
                 clock: Callable[[], Callable[[], float]], inline: bool = False) -> None:
        self.payload, self.clock = payload, clock
        self.boxes = {"sqlite": toolbox(store=f"sqlite:///{where / 'results.db'}"),
                      "sqlite heavy": toolbox(store=f"sqlite:///{where / 'results-heavy.db'}",
                                              heavy=True),
                      "sqlite effects": toolbox(store=f"sqlite:///{where / 'effects.db'}",
                                                side_effects=True)}
        if inline:
            self.boxes["sqlite effects inline"] = box = toolbox(
                store=f"sqlite:///{where / 'effects-inline.db'}", side_effects=True)
            box.executor = InlineExecutor()
        self.bare = {heavy: BareSqlite(where / f"bare{int(heavy)}.db",
                                       stored_results(where, toolbox, payload, heavy))
                     for heavy in (False, True)}

    def _timed(self, run: Callable[[dict[str, Any]], None], tag: str, count: int,
               heavy: bool = False) -> float:
        payloads = [self.payload(f"{tag}-{i}", 8, heavy) for i in range(count)]
        gc.collect()  # building the payloads is charged to nobody
        clock = self.clock()
        started = clock()
        for payload in payloads:
            run(payload)
        return (clock() - started) / count

    def round(self, r: int, count: int, defaults: dict[bool, toolbridge.Toolbox],
              keep: Keep) -> None:
        """One round of every row, ``count`` fresh payloads each; ``defaults``: the default
        configuration's toolbox of the realistic (False) and heavier (True) tools."""
        for heavy, suffix in ((False, ""), (True, " heavy")):
            box, floor, default = self.boxes["sqlite" + suffix], self.bare[heavy], defaults[heavy]
            keep("sqlite" + suffix, self._timed(lambda p, b=box: _handle(b, p),
                                                f"sqlite{suffix}-{r}", count, heavy))
            keep("bare sqlite" + suffix, self._timed(floor.two_commits, f"bare{suffix}-{r}",
                                                     count, heavy))
            keep("default+bare" + suffix, self._timed(
                lambda p, f=floor, d=default: _around(f.claim, d, p, f.complete),
                f"both{suffix}-{r}", count, heavy))
        floor, default = self.bare[False], defaults[False]
        for name in ("sqlite effects", "sqlite effects inline"):
            if name in self.boxes:
                keep(name, self._timed(lambda p, b=self.boxes[name]: _handle(b, p),
                                       f"{name}-{r}", count))
        keep("bare effects", self._timed(floor.side_effect_commits, f"bare-fx-{r}", count))
        keep("default+bare effects", self._timed(
            lambda p: _around(floor.claim, default, p, floor.side_effects), f"both-fx-{r}",
            count))

    def report(self, each: dict[str, list[float]], med: dict[str, float], suffix: str) -> None:
        """The 2-commit row of the realistic ("") or heavier (" heavy") tools."""
        print(f"  {'sqlite store (WAL, synchronous=FULL), handle':48s} "
              f"{med['sqlite' + suffix] * 1e6:8.1f} us  "
              f"{paired(each, 'sqlite' + suffix, 'default+bare' + suffix):5.2f}x of default + "
              f"bare sqlite3's 2 commits (target <= 1.2x; timed apart: "
              f"{paired(each, 'sqlite' + suffix, 'default' + suffix, 'bare sqlite' + suffix):.2f}"
              "x)")
        print(f"    bare sqlite3, the same 2 commits: {med['bare sqlite' + suffix] * 1e6:8.1f} us "
              f"alone, with default's handle {med['default+bare' + suffix] * 1e6:8.1f} us")

    def report_effects(self, each: dict[str, list[float]], med: dict[str, float]) -> None:
        print("side effects, the realistic 8 tools:")
        print(f"  {'sqlite store, side_effects=True tools, handle':48s} "
              f"{med['sqlite effects'] * 1e6:8.1f} us  "
              f"{paired(each, 'sqlite effects', 'default+bare effects'):5.2f}x of default + "
              "bare sqlite3's 10 commits (target <= 1.2x; timed apart: "
              f"{paired(each, 'sqlite effects', 'default', 'bare effects'):.2f}x)")
        if "sqlite effects inline" in each:
            print(f"  {'the same with InlineExecutor (no worker threads)':48s} "
                  f"{med['sqlite effects inline'] * 1e6:8.1f} us  "
                  f"{paired(each, 'sqlite effects inline', 'default+bare effects'):5.2f}x")
        print(f"    bare sqlite3, the 10 commits:     {med['bare effects'] * 1e6:8.1f} us alone, "
              f"with default's handle {med['default+bare effects'] * 1e6:8.1f} us")

    def close(self) -> None:
        for box in self.boxes.values():
            box.close()
        for floor in self.bare.values():
            floor.close()


def _handle(box: toolbridge.Toolbox, payload: dict[str, Any]) -> None:
    box.handle("openai-agents", payload)


def _around(before: Callable[[Any], None], box: toolbridge.Toolbox, payload: dict[str, Any],
            after: Callable[[Any], None]) -> None:
    """The bare claim, the default ``handle``, the bare rest: one payload of the floor."""
    before(payload)
    box.handle("openai-agents", payload)
    after(payload)


def stored_results(where: Path, toolbox: Callable[..., toolbridge.Toolbox],
                   payload: Callable[[str, int, bool], dict[str, Any]], heavy: bool) -> list[str]:
    """The result JSON the SQLite store writes for the 8 calls, in their order (read back
    from a store that answered one payload)."""
    path = where / f"sample{int(heavy)}.db"
    box = toolbox(store=f"sqlite:///{path}", heavy=heavy)
    box.handle("openai-agents", payload("sample", 8, heavy))
    box.close()
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute(
            "SELECT result FROM toolbridge_calls ORDER BY call_id")]
