"""A worker process for the approval and idempotency tests: one delivery of one call.

``approval_worker.py DB RUNS MODE``: the call ``pay(amount=5)`` (conversation ``c``, turn
``t``, id ``call_1``) on the SQLite file DB. Each handler run appends its idempotency key
to RUNS. MODE ``request``: the tool needs approval; print the outcome as JSON and wait to be
killed. MODE ``hang`` / ``hang-idempotent``: a side effect that appends, then hangs (the
parent kills it mid-run).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from toolbridge import Toolbox, ToolCall, ToolContext
from toolbridge.errors import AwaitingApproval

db, runs, mode = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
toolbox = Toolbox(store=f"sqlite:///{db}")


@toolbox.tool(side_effects=True, idempotent=mode == "hang-idempotent",
              needs_approval=mode == "request")
def pay(amount: int, context: ToolContext) -> str:
    with runs.open("a") as out:
        out.write(context.idempotency_key + "\n")
    if mode.startswith("hang"):
        time.sleep(3600)
    return f"paid {amount}"


call = ToolCall(id="call_1", name="pay", arguments={"amount": 5}, dialect="demo",
                conversation="c", turn="t")
try:
    results = toolbox.execute([call])
    print(json.dumps({"output": results[0].output}), flush=True)
except AwaitingApproval as exc:
    print(json.dumps({"awaiting": [r.tool for r in exc.requests]}), flush=True)
time.sleep(3600)  # the parent kills this process
