"""`Toolbox.add_mcp` following the server: its tool list changing at runtime
(``notifications/tools/list_changed``, on both protocol eras) and a remote call's progress
reaching the call's heartbeat hook, and through a toolbridge server on to its MCP client.
The server is ``sdk_server.py``, written with the SDK's own server API, on stdio."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_support import HERE, lines

from toolbridge import Toolbox, ToolCall, ToolResult
from toolbridge.tools import heartbeats

SERVER = [sys.executable, str(HERE / "sdk_server.py")]
ERAS = {"2026-07-28": [], "handshake": ["--handshake-only"]}


def call(name: str, call_id: str = "c1", **arguments: object) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments, dialect="test")


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    """Poll until true (no timing is asserted: the limit only ends a hang)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("era", ERAS)
def test_the_tools_follow_the_servers_list(era: str, tmp_path: Path) -> None:
    log, flag = tmp_path / "server.log", tmp_path / "release"
    with Toolbox(store=None, timeout=60) as box:
        desk = box.add_mcp([*SERVER, str(log), *ERAS[era]], prefix="desk")
        assert "city" in box.get("desk_forecast").parameters["required"]
        held: list[ToolResult] = []
        holding = threading.Thread(target=lambda: held.extend(
            box.execute([call("desk_hold", "h1", flag=str(flag))])))
        holding.start()
        wait_for(lambda: "hold started" in lines(log), "the held call started")

        reshaped, = box.execute([call("desk_reshape")])
        assert reshaped.success, reshaped.error
        wait_for(lambda: "desk_added" in box, "the added tool was imported")

        assert box.names() == ["desk_forecast", "desk_explode", "desk_slow", "desk_die",
                               "desk_reshape", "desk_crunch", "desk_added"]
        assert sorted(desk.names) == sorted(box.names())
        forecast = box.get("desk_forecast")  # replaced in place: a new schema
        assert forecast.read_only and forecast.parameters["required"] == ["city", "days"]
        added, booked, again, week = box.execute([
            call("desk_added", "1", count=3), call("desk_book_room", "2", room="A"),
            call("desk_hold", "3", flag=str(flag)),
            call("desk_forecast", "4", city="Oslo", days=7)])
        assert added.success and added.output == {"result": "added 3"}
        for removed, name in ((booked, "desk_book_room"), (again, "desk_hold")):
            assert not removed.success and f"unknown tool {name!r}" in (removed.error or "")
        assert week.output == {"city": "Oslo", "temp_c": 7}

        flag.touch()  # the call in flight since before the change ends on its old handler
        holding.join(60)
        assert [r.output for r in held] == [{"result": "released"}]
    assert lines(log) == ["hold started", "reshaped", "added 3", "forecast Oslo 7"]


def test_a_changed_list_that_does_not_fit_keeps_the_tools(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = tmp_path / "server.log"
    with Toolbox(store=None, timeout=60) as box, caplog.at_level(logging.WARNING):
        box.add(  # a local tool holding the name the server's new tool would take
            {"name": "desk_added", "parameters": {"type": "object"}}, lambda: "local")
        desk = box.add_mcp([*SERVER, str(log)], prefix="desk")
        before = box.names()
        box.execute([call("desk_reshape")])
        wait_for(lambda: "not imported" in caplog.text, "the refused list was reported")
        assert box.names() == before == ["desk_added", *desk.names]  # nothing changed
        assert "'desk_added' is already defined" in caplog.text
        local, = box.execute([call("desk_added")])
    assert local.output == "local"


@pytest.mark.parametrize("era", ERAS)
def test_remote_progress_reaches_the_heartbeat_hook(era: str, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with Toolbox(store=None, timeout=60) as box:
        box.add_mcp([*SERVER, str(log), *ERAS[era]], prefix="desk")
        beats: list[tuple[object, ...]] = []
        with heartbeats(lambda *details: beats.append(details)):
            crunched, = box.execute([call("desk_crunch", steps=3)])
        unwatched, = box.execute([call("desk_crunch", "c2", steps=2)])  # no hook: no token
    assert crunched.output == {"result": "crunched 3"}
    assert beats == [("step 1 of 3",), ("step 2 of 3",), ("step 3 of 3",)]
    assert unwatched.output == {"result": "crunched 2"}
    assert lines(log) == ["crunched 3 (progress asked)", "crunched 2"]


def test_progress_travels_on_through_a_toolbridge_server(tmp_path: Path) -> None:
    """An MCP client of a toolbox serving an imported tool sees the remote server's
    progress: each notification is a heartbeat, which our server sends as progress."""
    import asyncio

    from mcp import Client

    from toolbridge_mcp import ToolboxServer

    with Toolbox(store=None, timeout=60) as box:
        box.add_mcp([*SERVER, str(tmp_path / "server.log")])
        seen: list[str | None] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            seen.append(message)

        async def main() -> object:
            async with Client(ToolboxServer(box, progress_interval=600).server) as client:
                return (await client.call_tool("crunch", {"steps": 2},
                                               progress_callback=progress)).structured_content

        assert asyncio.run(main()) == {"result": "crunched 2"}
    assert seen == ["step 1 of 2", "step 2 of 2"]
