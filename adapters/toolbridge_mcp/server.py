"""A toolbox served over MCP: ``tools/list`` renders it, ``tools/call`` runs the one pipeline.

Built on the SDK's low-level `mcp.server.Server`, which negotiates the protocol revision
(the initialize handshake through 2025-11-25, the per-request envelope of 2026-07-28).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server import Server

from toolbridge import UsageError, WireFormatError
from toolbridge.errors import AwaitingApproval
from toolbridge.tools import heartbeats

from . import translate
from .wire import DIALECT, SERVER_NAME

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolbridge import Toolbox

__all__ = ["ToolboxServer", "serve_http", "serve_stdio"]

log = logging.getLogger("toolbridge.mcp")


class ToolboxServer:
    """``toolbox`` as an MCP server (`server` is the SDK's `mcp.server.Server`).

    Each ``tools/call`` goes through `toolbridge.Toolbox.aexecute`, with the toolbox's store,
    timeouts, limits, hooks and approvals. When the client sends a ``progressToken``, each
    ``ToolContext.heartbeat`` of the handler and, every ``progress_interval`` seconds of a
    long call, a tick, are sent as progress notifications. A client's cancellation cancels
    the call (an async handler is cancelled; a sync one's result is not sent).
    """

    def __init__(self, toolbox: Toolbox, *, name: str = SERVER_NAME, version: str = "",
                 instructions: str | None = None, progress_interval: float = 2.0) -> None:
        if progress_interval <= 0:
            raise UsageError(f"progress_interval must be positive, not {progress_interval!r}")
        self.toolbox = toolbox
        self.progress_interval = progress_interval
        from toolbridge import __version__

        self.server: Server[Any] = Server(
            name, version=version or __version__, instructions=instructions,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        self.tools()  # a name MCP refuses (`UsageError`), or a schema that cannot go, fail here

    def tools(self) -> list[types.Tool]:
        """The toolbox's tools as MCP lists them; each schema's losses (none: MCP takes JSON
        Schema 2020-12 whole) are logged as every dialect's are."""
        rendered = self.toolbox.render(DIALECT)
        for tool_name, losses in rendered.losses.items():
            log.warning("mcp: tool %r loses %s", tool_name, "; ".join(map(str, losses)))
        return [types.Tool.model_validate(d) for d in rendered.definitions]

    async def _list_tools(self, ctx: ServerRequestContext[Any],
                          params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools())

    async def _call_tool(self, ctx: ServerRequestContext[Any],
                         params: types.CallToolRequestParams) -> types.CallToolResult:
        wire = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        try:
            call = translate.read_call(wire, ctx.request_id)
        except WireFormatError as exc:  # e.g. a key that is not text: this call's error
            return _failed(str(exc))
        async with _progress(ctx, self.progress_interval) as beat:
            with heartbeats(beat):
                try:
                    result, = await self.toolbox.aexecute([call])
                except AwaitingApproval:
                    return _failed(f"{call.name} awaits a person's approval (toolbridge "
                                   "approvals list); call it again with the same idempotency "
                                   "key once it is decided")
        body = translate.write_results([result])["result"]
        return types.CallToolResult.model_validate(body)

    async def run_stdio(self) -> None:
        """Serve one client on this process's stdin and stdout until it disconnects."""
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    def http_app(self, *, host: str = "127.0.0.1", path: str = "/mcp") -> Any:
        """The streamable HTTP ASGI app (Starlette), serving ``path``."""
        return self.server.streamable_http_app(streamable_http_path=path, host=host)

    async def run_http(self, host: str = "127.0.0.1", port: int = 8000, *,
                       path: str = "/mcp") -> None:
        """Serve streamable HTTP on ``host:port`` until cancelled."""
        import uvicorn

        config = uvicorn.Config(self.http_app(host=host, path=path), host=host, port=port,
                                log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve()


def _failed(text: str) -> types.CallToolResult:
    return types.CallToolResult(is_error=True, content=[types.TextContent(type="text",
                                                                           text=text)])


@contextlib.asynccontextmanager
async def _progress(ctx: ServerRequestContext[Any], interval: float) -> AsyncIterator[Any]:
    """A heartbeat hook sending progress notifications in order (from any thread), and a
    tick every ``interval`` seconds; all are sent before the call's reply. The session sends
    them only when the client asked (a ``progressToken``, or an in-process client's
    callback); otherwise they are no-ops."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    async def send() -> None:
        for count in itertools.count(1):
            message = await queue.get()
            if message is None:
                return
            try:
                await ctx.session.report_progress(count, None, message or None)
            except Exception as exc:  # a client gone mid-call: the reply fails too
                log.debug("mcp: a progress notification was not sent: %r", exc)

    async def tick() -> None:
        for seconds in itertools.count(1):
            await asyncio.sleep(interval)
            queue.put_nowait(f"running ({seconds * interval:g} s)")

    def beat(*details: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, " ".join(map(str, details)))

    sender, ticker = loop.create_task(send()), loop.create_task(tick())
    try:
        yield beat
    finally:
        ticker.cancel()
        queue.put_nowait(None)
        try:
            await asyncio.wait_for(sender, _FLUSH_SECONDS)
        except asyncio.TimeoutError:
            log.debug("mcp: progress notifications still unsent at the reply were dropped")
        finally:
            sender.cancel()


_FLUSH_SECONDS = 10.0
"""How long a reply waits for its progress notifications to be written (a stuck client)."""


def serve_stdio(toolbox: Toolbox, **options: Any) -> None:
    """Serve ``toolbox`` over stdio (blocking): what a desktop host starts (``options``:
    `ToolboxServer`'s)."""
    asyncio.run(ToolboxServer(toolbox, **options).run_stdio())


def serve_http(toolbox: Toolbox, host: str = "127.0.0.1", port: int = 8000, *,
               path: str = "/mcp", **options: Any) -> None:
    """Serve ``toolbox`` over streamable HTTP on ``host:port`` (blocking)."""
    asyncio.run(ToolboxServer(toolbox, **options).run_http(host, port, path=path))
