"""A small MCP server written with the SDK's own server API (`MCPServer`), for the client
side's tests: ``python sdk_server.py [LOG] [--handshake-only]`` serves stdio (every revision,
or only the initialize handshake's, up to 2025-11-25); each call appends a line to LOG.
``reshape`` changes its tool list at runtime and says so; ``crunch`` reports progress."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("weather-desk")
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
LOG = Path(ARGS[0]) if ARGS else None


def _log(line: str) -> None:
    if LOG is not None:
        with LOG.open("a") as out:
            out.write(line + "\n")


class Forecast(BaseModel):
    city: str
    temp_c: int


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def forecast(city: str) -> Forecast:
    """Tomorrow's forecast for a city."""
    _log(f"forecast {city}")
    return Forecast(city=city, temp_c=len(city) + 10)


@server.tool(name="book.room")
def book_room(room: str) -> str:
    """Book a meeting room (a dotted name, as MCP allows)."""
    _log(f"book {room}")
    return f"booked {room}"


@server.tool()
def explode(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"exploded: {reason}")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then answers."""
    _log("slow started")
    await asyncio.sleep(seconds)
    return "slept"


@server.tool()
def die() -> str:
    """Kills this server mid-call."""
    _log("die")
    os._exit(3)


@server.tool()
async def hold(flag: str) -> str:
    """Answers once the file ``flag`` exists (a call kept in flight by the test)."""
    _log("hold started")
    while not Path(flag).exists():
        await asyncio.sleep(0.02)
    return "released"


def added(count: int) -> str:
    """A tool that exists once `reshape` ran."""
    _log(f"added {count}")
    return f"added {count}"


def forecast_days(city: str, days: int) -> Forecast:
    """The forecast for a city, ``days`` ahead (what `forecast` becomes)."""
    _log(f"forecast {city} {days}")
    return Forecast(city=city, temp_c=days)


@server.tool()
async def reshape(ctx: Context) -> str:
    """Adds `added`, removes `book.room` and `hold`, gives `forecast` a `days` parameter;
    says so."""
    server.add_tool(added)
    server.remove_tool("book.room")
    server.remove_tool("hold")
    server.remove_tool("forecast")
    server.add_tool(forecast_days, name="forecast",
                    annotations=ToolAnnotations(read_only_hint=True))
    await ctx.notify_tools_changed()  # 2026-07-28: to the subscriptions/listen streams
    await ctx.session.send_tool_list_changed()  # earlier revisions: the notification itself
    _log("reshaped")
    return "reshaped"


@server.tool()
async def crunch(steps: int, ctx: Context) -> str:
    """Reports progress ``steps`` times, then answers."""
    meta = ctx.request_context.meta or {}
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    _log(f"crunched {steps}" + (" (progress asked)" if "progress_token" in meta else ""))
    return f"crunched {steps}"


async def serve_handshake_era() -> None:
    """Stdio with the handshake-only loop: a client's ``server/discover`` probe is refused
    and it falls back to ``initialize`` (the SDK's runner; MCPServer does not offer it)."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # no public handle on it
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        await serve_loop(lowlevel, read, write, lifespan_state=state,
                         init_options=lowlevel.create_initialization_options())


if __name__ == "__main__":
    if "--handshake-only" in sys.argv:
        asyncio.run(serve_handshake_era())
    else:
        server.run("stdio")
