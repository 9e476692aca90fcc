"""`Worker`: many conversations at once, bounded, given, fed or discovered."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import toolbridge
from toolbridge.plugin import Step
from toolbridge.serve import DriverSettings, Job, Transcript, Worker
from toolbridge.testing import ScriptedBackend, ScriptedConnection, emulator

SCRIPT = {"turns": [{"rounds": [[{"name": "echo", "arguments": {"text": "a"}}],
                                [{"name": "echo", "arguments": {"text": "b"}}]],
                     "reply": "{outputs}"}]}


def make_toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    async def echo(text: str) -> str:
        """Echo."""
        await asyncio.sleep(0.001)
        return text

    return box


class Counted(ScriptedBackend):
    """Counts how many conversations are being held at once."""

    active = 0
    peak = 0

    async def send(self, message: str) -> Step | None:
        Counted.active += 1
        Counted.peak = max(Counted.peak, Counted.active)
        return await super().send(message)

    async def aclose(self) -> None:
        Counted.active -= 1
        await super().aclose()


def test_many_conversations_given_up_front_bounded() -> None:
    box = make_toolbox()
    backends = {f"c{i}": Counted(SCRIPT, tools=list(box), conversation=f"c{i}")
                for i in range(40)}
    answered: list[str] = []
    worker = Worker(box, "openai-agents", connection=ScriptedConnection(backends),
                    concurrency=4, settings=DriverSettings(
                        keep=False, on_answer=lambda t, r, s: answered.append(t.conversation)))
    done = asyncio.run(worker.run([Job(c, ("go",)) for c in backends]))
    assert len(done) == 40 and all(t.status == "completed" for t in done)
    assert Counted.peak <= 4 and Counted.active == 0
    assert sorted(answered) == sorted([c for c in backends] * 2)  # a line per answered call
    assert all(t.entries == [] and t.answered == 2 for t in done)  # summaries only


def test_conversations_fed_by_the_application() -> None:
    box = make_toolbox()
    connection = ScriptedConnection(script=SCRIPT, tools=list(box))
    ended: list[Transcript] = []

    async def main() -> list[Transcript]:
        worker = Worker(box, "openai-agents", connection=connection, concurrency=3,
                        on_done=ended.append)
        running = asyncio.create_task(worker.run(feed=True))
        for _ in range(10):
            worker.add(messages=["go"])
            await asyncio.sleep(0)
        worker.close()
        return await asyncio.wait_for(running, 10)

    assert asyncio.run(main()) == []  # with on_done nothing is kept
    assert len(ended) == 10 and all(t.ok for t in ended)


def test_discovery_needs_a_backend_that_lists() -> None:
    box = make_toolbox()
    worker = Worker(box, "openai-agents", connection=ScriptedConnection(script=SCRIPT))
    with pytest.raises(toolbridge.UsageError, match="cannot list"):
        asyncio.run(worker.run(discover=True))


def test_agents_sessions_are_discovered_by_metadata() -> None:
    box = make_toolbox()
    with emulator("openai-agents", script=SCRIPT) as emu:
        from toolbridge_openai_agents import AgentsClient

        with AgentsClient(base_url=emu.base_url + "/v1") as client:
            mine = [client.create_session(box, input="go", metadata={"pool": "blue"})["id"]
                    for _ in range(5)]
            other = client.create_session(box, input="go", metadata={"pool": "red"})["id"]
        ended: list[Transcript] = []

        async def main() -> None:
            worker = Worker(box, "openai-agents", {
                "base_url": emu.base_url, "metadata": {"pool": "blue"},
                "discover_every": 0.05}, on_done=ended.append)
            running = asyncio.create_task(worker.run(discover=True))
            for _ in range(400):
                await asyncio.sleep(0.01)
                if len(ended) == len(mine):
                    break
            running.cancel()
            with pytest.raises(asyncio.CancelledError):
                await running

        asyncio.run(main())
        assert all(emu.state.sessions[s].status == "idle" for s in mine)
        assert emu.state.sessions[other].status == "requires_action"  # not its pool
    assert sorted(t.conversation for t in ended) == sorted(mine)
    assert all(t.ok and t.answered == 2 for t in ended)


def test_one_conversation_giving_up_does_not_stop_the_others() -> None:
    from toolbridge.http import RetryPolicy
    from toolbridge.testing import SeamFault

    box = make_toolbox()
    backends: dict[str, Any] = {f"c{i}": ScriptedBackend(SCRIPT, tools=list(box),
                                                          conversation=f"c{i}")
                                for i in range(3)}
    backends["c1"].faults = [SeamFault("submit", n) for n in range(1, 30)]
    settings = DriverSettings(keep=False, recovery=RetryPolicy(max_attempts=2, backoff=0.001))
    worker = Worker(box, "openai-agents", connection=ScriptedConnection(backends),
                    settings=settings)
    done = {t.conversation: t for t in asyncio.run(worker.run(
        [Job(c, ("go",)) for c in backends]))}
    assert done["c0"].ok and done["c2"].ok
    assert done["c1"].status == "failed" and "gave up" in str(done["c1"].error)
