"""A small MCP server written with the SDK's own server API (`MCPServer`), for the client
side's tests: ``python sdk_server.py [LOG]`` serves stdio; each call appends a line to LOG.
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
LOG = Path(sys.argv[1]) if len(sys.argv) > 1 else None


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
    """Adds `added`, removes `book.room`, gives `forecast` a `days` parameter; says so."""
    server.add_tool(added)
    server.remove_tool("book.room")
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
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    _log(f"crunched {steps}")
    return f"crunched {steps}"


if __name__ == "__main__":
    server.run("stdio")
