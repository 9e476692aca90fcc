"""The execution hook: a plugin times every call, another refuses one."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

from meeting import AsyncMeeting

import toolbridge
import toolbridge.plugin
from toolbridge import Toolbox, ToolCall, ToolDefinition, ToolResult
from toolbridge.plugin import hookimpl


class Timing:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.threads: set[str] = set()

    @hookimpl(wrapper=True)
    def toolbridge_execute_call(
        self, call: ToolCall, tool: ToolDefinition, invoke: Callable[[], ToolResult]
    ) -> Generator[None, ToolResult, ToolResult]:
        started = time.perf_counter()
        self.threads.add(threading.current_thread().name)
        result = yield
        self.timings[call.id] = time.perf_counter() - started
        return result


class Refuse:
    @hookimpl(tryfirst=True)
    def toolbridge_execute_call(
        self, call: ToolCall, tool: ToolDefinition, invoke: Callable[[], ToolResult]
    ) -> ToolResult | None:
        if tool.name == "delete_everything":
            return ToolResult.failed(call, "refused by policy: needs human approval")
        return None


class Broken:
    @hookimpl(tryfirst=True)
    def toolbridge_execute_call(self, call: ToolCall) -> ToolResult | None:
        raise RuntimeError("plugin bug")


def tools() -> tuple[Toolbox, list[str]]:
    toolbox = Toolbox()
    ran: list[str] = []

    @toolbox.tool(inline=True)
    def delete_everything() -> str:
        ran.append("delete")
        return "gone"

    @toolbox.tool
    async def nap(seconds: float) -> str:
        await asyncio.sleep(seconds)
        ran.append("nap")
        return "rested"

    return toolbox, ran


PAYLOAD: dict[str, Any] = {"conversation": "c", "calls": [
    {"id": "1", "tool": "nap", "args": {"seconds": 0.05}},
    {"id": "2", "tool": "delete_everything"},
]}


def test_a_wrapper_times_every_call(echo_dialect: str) -> None:
    timing = Timing()
    toolbridge.plugin.register_plugin(timing, "timing")
    toolbox, ran = tools()
    body = toolbox.handle(echo_dialect, PAYLOAD)
    assert [a["value"] for a in body["answers"]] == ["rested", "gone"]
    assert sorted(ran) == ["delete", "nap"]
    assert set(timing.timings) == {"1", "2"}
    assert timing.timings["1"] >= 0.05 > timing.timings["2"]
    assert threading.current_thread().name not in timing.threads  # run in worker threads


def test_a_plugin_refuses_a_call_and_the_handler_never_runs(echo_dialect: str) -> None:
    toolbridge.plugin.register_plugin(Refuse(), "refuse")
    toolbridge.plugin.register_plugin(Timing(), "timing")
    toolbox, ran = tools()
    body = toolbox.handle(echo_dialect, PAYLOAD)
    assert body["answers"][1] == {"id": "2", "ok": False,
                                  "error": "refused by policy: needs human approval"}
    assert body["answers"][0]["value"] == "rested"
    assert ran == ["nap"]


def test_hooks_run_on_the_loop_free_path_too(echo_dialect: str) -> None:
    timing = Timing()
    toolbridge.plugin.register_plugin(timing, "timing")
    toolbridge.plugin.register_plugin(Refuse(), "refuse")
    toolbox, ran = tools()
    body = toolbox.handle(echo_dialect, {"calls": [{"id": "9", "tool": "delete_everything"}]})
    assert body["answers"][0]["error"] == "refused by policy: needs human approval"
    assert ran == [] and "9" in timing.timings


async def test_a_failing_hook_becomes_an_error_result(echo_dialect: str) -> None:
    toolbridge.plugin.register_plugin(Broken(), "broken")
    toolbox, ran = tools()
    body = await toolbox.ahandle(echo_dialect, PAYLOAD)
    assert [a["error"] for a in body["answers"]] == ["RuntimeError: plugin bug"] * 2
    assert ran == []


class Wrap:
    @hookimpl(wrapper=True)
    def toolbridge_execute_call(
        self, call: ToolCall, tool: ToolDefinition, invoke: Callable[[], ToolResult]
    ) -> Generator[None, ToolResult, ToolResult]:
        return (yield)


async def test_a_wrapper_does_not_cap_concurrency(echo_dialect: str) -> None:
    toolbridge.plugin.register_plugin(Wrap(), "wrap")
    default_threads = min(32, (os.cpu_count() or 1) + 4)  # asyncio's default executor
    count = 3 * default_threads + 1  # more than that executor holds at once
    toolbox = Toolbox(max_concurrency=count, store=None)
    meeting = AsyncMeeting(count)

    @toolbox.tool
    async def nap() -> str:
        await meeting.arrive()  # every call inside at once
        return "rested"

    calls = [{"id": str(i), "tool": "nap"} for i in range(count)]
    body = await toolbox.ahandle(echo_dialect, {"calls": calls})
    assert [a["value"] for a in body["answers"]] == ["rested"] * count
