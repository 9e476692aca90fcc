"""`check_backend`: a dialect's serve backend against its emulator, seam by seam."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..plugin import Backend, Dialect, Step, StreamingBackend, capabilities, get_dialect
from ._emulators import emulated_options, emulator

__all__ = ["acheck_backend", "check_backend"]

MESSAGE = "conformance kit: add 2 and 3, and echo kit"
KIT_SCRIPT: dict[str, Any] = {"turns": [{
    "rounds": [[{"name": "kit_add", "arguments": {"a": 2, "b": 3}},
                {"name": "kit_echo", "arguments": {"text": "kit"}}]],
    "reply": "kit done: {outputs}",
}]}
"""One turn: two parallel calls, then a reply naming their outputs."""


def _kit_toolbox() -> Any:
    from ..toolbox import Toolbox

    toolbox = Toolbox(store="memory://")

    @toolbox.tool
    def kit_add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @toolbox.tool
    def kit_echo(text: str) -> str:
        """Echo the text back in capitals."""
        return text.upper()

    return toolbox


async def acheck_backend(dialect: str, *, timeout: float = 30.0) -> None:
    """Conformance checks of ``dialect``'s serve backend against its emulator (both declared
    capabilities); `AssertionError` names the rule.

    Checked, on one scripted turn with two parallel calls: `check_dialect` on the pending
    payload the backend read; ``send`` starts the turn (its step, or through ``next`` for a
    backend that `Backend.streams`) with both calls pending and the conversation's id known;
    ``sent`` says the message arrived or cannot tell (a backend that keeps nothing,
    `toolbridge.plugin.ServeCapability.waits` false, may say no); ``state`` lists the same
    calls (`Step.fresh`) where the backend `Backend.lists_pending`; the checkpoint is JSON; a
    successor backend of the same conversation, restored from that checkpoint, resumes the
    pending step (or, where nothing lists it, takes the answer the driver would resend); the
    answers it submits end the turn ``completed`` with the handlers' outputs in the reply; and
    the emulator's journal shows the user message arriving in one request only where the
    backend keeps the conversation.
    """
    name = get_dialect(dialect).name
    serving = capabilities().serving(name)
    toolbox = _kit_toolbox()
    try:
        with emulator(name, script=KIT_SCRIPT) as emu:
            options = emulated_options(name, emu.base_url)
            async with serving.connect(options, list(toolbox)) as connection:
                await asyncio.wait_for(_turn(connection, toolbox, serving.waits), timeout)
            _check_journal(emu.journal, serving.waits)
    finally:
        toolbox.close()


def check_backend(dialect: str, *, timeout: float = 30.0) -> None:
    """Blocking `acheck_backend` (not inside a running event loop)."""
    asyncio.run(acheck_backend(dialect, timeout=timeout))


async def _turn(connection: Any, toolbox: Any, keeps: bool) -> None:
    first: Backend = connection.backend(None)
    try:
        step = await _first_step(first, await first.send(MESSAGE), "send")
        assert step.status == "requires_action", f"send: the turn is {step.status}, not waiting"
        ids = _call_ids(first, step)
        assert len(ids) == 2, f"send: {len(ids)} pending calls, the script makes 2"
        assert first.conversation, "send: the conversation's id is still unknown"
        from ._dialect_kit import check_dialect  # the translations, on a live payload

        assert step.payload is not None
        assert isinstance(first.dialect, Dialect), "a backend's dialect is not a Dialect"
        await asyncio.to_thread(check_dialect, first.dialect, list(toolbox), step.payload)
        arrived = await first.sent(MESSAGE)
        assert arrived in (True, None) or not keeps, (
            f"sent(message) answered {arrived!r} after it was sent")
        if first.lists_pending:
            state = await first.state()
            assert state is not None and state.fresh, "state: no fresh step while calls wait"
            assert _call_ids(first, state) == ids, "state lists other calls than send did"
        checkpoint = first.checkpoint()
        json.dumps(checkpoint)
    finally:
        await first.aclose()
    successor: Backend = connection.backend(first.conversation)
    try:
        successor.restore(checkpoint)
        resumed = await successor.resume()
        if resumed is None and not successor.streams:
            # A backend that cannot list pending calls: the driver resends the answer it
            # persisted with the checkpoint, to the step it had.
            assert not first.lists_pending, "resume: no step, though state lists pending calls"
            resumed = step
        resumed = await _first_step(successor, resumed, "resume")
        assert resumed.status == "requires_action", (
            f"resume: a successor sees the turn {resumed.status}, not waiting")
        assert _call_ids(successor, resumed) == ids, "resume lists other calls than send did"
        body = await toolbox.ahandle(successor.dialect, resumed.payload)
        final = await _first_step(successor, await successor.submit(resumed, body), "submit")
        while (final.status == "requires_action" and not _call_ids(successor, final) - ids
               and isinstance(successor, StreamingBackend)):
            final = await successor.next()  # a stream may repeat the answered step
        assert final.status == "completed", (
            f"submit: the turn ended {final.status} ({final.error}), not completed")
        assert final.reply and "5" in final.reply and "KIT" in final.reply, (
            f"the reply {final.reply!r} lacks the handlers' outputs (5, KIT)")
    finally:
        await successor.aclose()


async def _first_step(backend: Backend, step: Step | None, what: str) -> Step:
    if step is not None:
        return step
    assert isinstance(backend, StreamingBackend), (
        f"{what} returned no step, and the backend does not stream")
    return await backend.next()


def _call_ids(backend: Backend, step: Step) -> set[str]:
    assert step.payload is not None, "a requires_action step without its payload"
    return {call.id for call in backend.dialect.read_calls(step.payload).calls}


def _check_journal(journal: Any, keeps_conversations: bool) -> None:
    carrying = [e for e in journal.entries() if e.method != "GET"
                and MESSAGE in json.dumps(e.body, ensure_ascii=False)]
    assert carrying, "the emulator's journal shows no request carrying the user message"
    if keeps_conversations:
        assert len(carrying) == 1, (
            f"the user message reached the backend in {len(carrying)} requests, not once")
