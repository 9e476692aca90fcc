"""Idempotency keys: one per call, the same for every delivery, worker and restart.

A side effect declared ``idempotent=True`` whose worker was SIGKILLed inside the handler is
run again with the same key; without the flag it goes to reconciliation ("outcome unknown").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from toolbridge import Toolbox, ToolCall, ToolContext
from toolbridge.store import SqliteStore, StoreKey, idempotency_key

WORKER = Path(__file__).parent / "workers" / "approval_worker.py"


def keys_toolbox(store: object, seen: list[str]) -> Toolbox:
    toolbox = Toolbox(store=store)  # type: ignore[arg-type]

    @toolbox.tool
    def where(context: ToolContext) -> str:
        seen.append(context.idempotency_key)
        return context.idempotency_key

    return toolbox


def test_the_key_is_the_store_key_rule_stable_and_distinct(tmp_path: Path) -> None:
    seen: list[str] = []
    first = ToolCall(id="call_1", name="where", dialect="demo", conversation="c", turn="t")
    toolbox = keys_toolbox(None, seen)  # no store: every delivery runs, the key stays
    toolbox.execute([first])
    toolbox.execute([first.model_copy()])
    keys_toolbox(None, seen).execute([first])  # another worker
    others = [first.model_copy(update=change) for change in (
        {"id": "call_2"}, {"turn": "t2"}, {"conversation": "c2"}, {"dialect": "echo"})]
    toolbox.execute(others)
    assert seen[0] == seen[1] == seen[2] == idempotency_key(StoreKey("demo", "c", "t", "call_1"))
    assert len(set(seen[2:])) == 5  # distinct between calls
    assert seen[0].startswith("tb_") and len(seen[0]) == 35
    # what a fleet activity (and each of its retries) gets: the call as JSON, rebuilt
    rebuilt = ToolCall.model_validate(json.loads(json.dumps(first.model_dump(mode="json"))))
    toolbox.execute([rebuilt])
    assert seen[-1] == seen[0]


def _killed_mid_run(tmp_path: Path, mode: str) -> tuple[Path, Path]:
    db, runs = tmp_path / "results.db", tmp_path / "runs.txt"
    worker = subprocess.Popen([sys.executable, str(WORKER), str(db), str(runs), mode])
    deadline = time.monotonic() + 60
    while not (runs.exists() and runs.read_text()):
        assert time.monotonic() < deadline and worker.poll() is None
        time.sleep(0.02)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    return db, runs


def _deliver_again(db: Path, runs: Path, idempotent: bool) -> str:
    toolbox = Toolbox(store=SqliteStore(db))

    @toolbox.tool(side_effects=True, idempotent=idempotent)
    def pay(amount: int, context: ToolContext) -> str:
        with runs.open("a") as out:
            out.write(context.idempotency_key + "\n")
        return f"paid {amount}"

    call = ToolCall(id="call_1", name="pay", arguments={"amount": 5}, dialect="demo",
                    conversation="c", turn="t")
    result = toolbox.execute([call])[0]
    return result.output if result.success else f"error: {result.error}"


def test_an_idempotent_side_effect_runs_again_with_the_same_key_after_sigkill(
        tmp_path: Path) -> None:
    db, runs = _killed_mid_run(tmp_path, "hang-idempotent")
    assert _deliver_again(db, runs, idempotent=True) == "paid 5"
    killed, again = runs.read_text().split()
    assert killed == again == idempotency_key(StoreKey("demo", "c", "t", "call_1"))
    assert _deliver_again(db, runs, idempotent=True) == "paid 5"  # now stored: replayed
    assert len(runs.read_text().split()) == 2


def test_without_idempotent_the_side_effect_is_reconciled_not_repeated(tmp_path: Path) -> None:
    db, runs = _killed_mid_run(tmp_path, "hang")
    answer = _deliver_again(db, runs, idempotent=False)
    assert answer.startswith("error: the outcome of pay (call call_1) is unknown")
    assert len(runs.read_text().split()) == 1
