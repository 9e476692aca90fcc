"""The idempotency key across a real Temporal activity retry: a `toolbridge worker` process is
SIGKILLed inside an idempotent handler after the handler saw its key; Temporal retries the
call activity (its heartbeat times out) on another worker, which runs the handler again
(``idempotent=True``) with the same key. Keys are read from the ledger the handler writes."""

from __future__ import annotations

import asyncio
import json

import fleet_toolbox
from temporalio.client import Client
from test_temporal import FAST, where
from test_temporal_kills import Workers, until, workers  # noqa: F401  (the fixture)

from toolbridge.store import StoreKey, idempotency_key
from toolbridge.testing import emulator
from toolbridge_temporal import serve

SCRIPT = {"turns": [{"rounds": [[{"name": "pay", "arguments": {"amount": 5}}]],
                     "reply": "done {outputs}"}]}
DIALECT = "openai-agents"
PAYING = "fleet_toolbox:paying"


async def test_the_key_survives_an_activity_retry_on_another_worker(
        temporal: Client, workers: Workers) -> None:  # noqa: F811
    with emulator(DIALECT, script=SCRIPT) as emu:
        first = workers.start(PAYING, TOOLBRIDGE_FLEET_SLOW="30")
        handle = await serve(temporal, DIALECT, messages=["pay"], options=where(DIALECT, emu),
                             task_queue=workers.queue, settings=FAST)
        await until(lambda: fleet_toolbox.entries("pay"))
        first.kill()  # inside the handler, after it handed its key on
        first.wait()
        workers.start(PAYING)
        outcome = await asyncio.wait_for(handle.result(), 90)
        posts = [e.body for e in emu.journal.entries("POST")]
    assert outcome.status == "completed", outcome
    first_key, retried_key = fleet_toolbox.entries("pay")  # run again: idempotent
    assert first_key == retried_key and first_key.startswith("tb_")
    calls = {(i["turn_id"], i["call_id"]) for i in emu.state.sessions[outcome.conversation].items
             if i.get("type") == "function_call"}
    assert len(calls) == 1, calls
    [(turn, call_id)] = calls
    assert first_key == idempotency_key(StoreKey(DIALECT, outcome.conversation,
                                                 turn, call_id))
    assert json.dumps(posts).count(f"paid 5 under {first_key}") == 1  # answered once
