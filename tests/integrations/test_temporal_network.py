"""A fleet activity reaches its backend through a real forward proxy (proxy.py on loopback,
its own access log read back), set in the worker's own dialect options (never the history)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import fleet_toolbox
import pytest
from network_support import ForwardProxy, forward_proxy
from temporalio.client import Client

from toolbridge.testing import emulated_options, emulator
from toolbridge_temporal import FleetSettings, Outcome, serve, worker

SCRIPT = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}]],
                     "reply": "done {outputs}"}]}
FAST = FleetSettings(heartbeat_timeout=2.0, task_timeout=2.0, recovery_backoff=0.05,
                     recovery_max_delay=0.2)


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[ForwardProxy]:
    with forward_proxy(tmp_path) as running:
        yield running


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ledger"
    monkeypatch.setenv("TOOLBRIDGE_FLEET_LEDGER", str(path))
    return path


async def test_an_activity_reaches_its_backend_through_the_proxy(
        temporal: Client, proxy: ForwardProxy, ledger: Path, tmp_path: Path) -> None:
    queue = f"q-{uuid.uuid4().hex}"
    box = fleet_toolbox.make_toolbox(f"sqlite:///{tmp_path / 'store.db'}")
    with emulator("openai-chat", script=SCRIPT) as emu:
        local = {"openai-chat": {"api_key": "emulator", "proxy": proxy.url}}
        running, activities = worker(temporal, queue, box, dialect_options=local)
        where = emulated_options("openai-chat", emu.base_url).model_dump(
            mode="json", exclude_unset=True, exclude={"api_key"})
        async with running:
            handle = await serve(temporal, "openai-chat", messages=["go"], options=where,
                                 task_queue=queue, settings=FAST)
            outcome = await asyncio.wait_for(handle.result(), 60)
        await activities.aclose()
        received = len(emu.journal)
    assert isinstance(outcome, Outcome) and outcome.status == "completed", outcome
    assert received >= 2
    assert await asyncio.to_thread(proxy.saw, emu.base_url.split("://", 1)[1]), proxy.log()
