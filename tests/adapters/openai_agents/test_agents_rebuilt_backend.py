"""An Agents backend rebuilt from its cursor in the middle of a turn (another worker of a
fleet takes the conversation over): it goes on with that turn, and its end brings the reply
(not the reply-less end of serving)."""

from __future__ import annotations

import asyncio

import toolbridge
from toolbridge.plugin import Step, capabilities
from toolbridge.testing import emulated_options, emulator

D = "openai-agents"
SCRIPT = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}]],
                     "reply": "done {outputs}"}]}


def make_toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    return box


async def _final(backend: toolbridge.plugin.Backend) -> Step:
    while True:
        step = await backend.next()
        if step.final:
            return step


async def test_a_backend_rebuilt_mid_turn_ends_the_turn_with_its_reply() -> None:
    box = make_toolbox()
    d = toolbridge.get_dialect(D)
    with emulator(D, script=SCRIPT) as emu:
        options = emulated_options(d, emu.base_url)
        async with capabilities().serving(d.name).connect(options, list(box)) as conn:
            first = conn.backend(None)
            await first.send("go")
            step = await first.next()
            cursor, session = first.checkpoint(), first.conversation
            await first.aclose()  # its worker is gone
            rebuilt = conn.backend(session)
            rebuilt.restore(cursor)
            calls = rebuilt.dialect.read_calls(step.payload or {}).calls
            results = await box.aexecute(list(calls))
            await rebuilt.submit(step, rebuilt.dialect.write_results(results))
            final = await asyncio.wait_for(_final(rebuilt), 20)
            await rebuilt.aclose()
    assert step.status == "requires_action" and cursor["started"] is True
    assert final.status == "completed" and final.reply == 'done ["value of a"]'


def test_a_message_refused_while_a_turn_runs_is_recovered_from() -> None:
    # The turn may be the one an earlier attempt of the same message started (a worker that
    # was only slow): the driver asks `sent` rather than ending the conversation.
    d = toolbridge.get_dialect(D)
    with emulator(D, script=SCRIPT) as emu:
        options = emulated_options(d, emu.base_url)
        conn = capabilities().serving(d.name).connect(options, [])
        backend = conn.backend("sess_1")
        busy = toolbridge.BackendError("busy", status=400, body={"error": {
            "message": "Session 'sess_1' already has an active turn", "code": "session_busy"}})
        other = toolbridge.BackendError("bad", status=400, body={"error": {"code": None}})
        assert backend.retryable(busy) and not backend.retryable(other)
        asyncio.run(conn.aclose())
