"""`toolbridge worker`: a missing `temporal` extra is a usage error naming it; heartbeats of
`ToolContext` reach the hook `toolbridge.tools.heartbeats` installs."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

import toolbridge
from toolbridge.cli import main
from toolbridge.tools import heartbeats


def test_worker_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    real = importlib.import_module

    def missing(name: str, *args: Any) -> Any:
        if name == "toolbridge_temporal":
            raise ImportError("No module named 'temporalio'")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", missing)
    code = main(["worker", "--temporal", "127.0.0.1:1", "--task-queue", "q", "m:t"])
    assert code == 2
    assert "toolbridge[temporal]" in capsys.readouterr().err


async def test_tool_context_heartbeats_reach_the_hook() -> None:
    box = toolbridge.Toolbox()
    seen: list[tuple[Any, ...]] = []

    @box.tool
    def slow(context: toolbridge.ToolContext) -> str:
        """Report progress twice."""
        context.heartbeat(1)
        context.heartbeat("half", 2)
        return "done"

    call = toolbridge.ToolCall(id="c1", name="slow", dialect="openai-chat")
    with heartbeats(lambda *details: seen.append(details)):
        [result] = await box.aexecute([call])
    assert result.success and seen == [(1,), ("half", 2)]
    [again] = await box.aexecute([call.model_copy(update={"id": "c2"})])  # no hook: no-op
    assert again.success and len(seen) == 2
