"""`Toolbox.add_mcp`: an MCP server's tools as tools of a toolbox.

One connection per server, held by a session task on a daemon thread's own event loop (the
SDK's sessions live in one task group); handlers on any thread or loop send their calls to it.
Imported tools run through the pipeline like local ones: the toolbox's timeouts cancel the
remote call, the store keeps their results, hooks and approvals apply.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import re
import shlex
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from toolbridge import BackendError, Content, ImagePart, TextPart, ToolError, UsageError
from toolbridge.http import redact_text, redact_url
from toolbridge.tools import NeedsApproval, ToolContext

from . import translate
from .wire import IDEMPOTENCY_META

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client

    from toolbridge import Toolbox, ToolDefinition

__all__ = ["McpTools", "attach"]

_UNFIT = re.compile(r"[^A-Za-z0-9_-]")


def server_label(server: Any) -> str:
    """How messages name the server: a URL without credentials or query, or the command."""
    if isinstance(server, str) and server.startswith(("http://", "https://")):
        return redact_url(server, keep_query=False)
    if isinstance(server, (str, Sequence)):  # the program only: arguments may hold secrets
        argv = shlex.split(server) if isinstance(server, str) else list(server)
        return os.path.basename(str(argv[0])) if argv else "<empty command>"
    return type(server).__name__


def _said(exc: BaseException) -> str:
    """``Type: text`` of an exception (the one inside a group of one), for a message: URLs
    in it without credentials or query."""
    while len(getattr(exc, "exceptions", ())) == 1:  # an exception group of one
        exc = getattr(exc, "exceptions")[0]  # noqa: B009  (any group type)
    return f"{type(exc).__name__}: {redact_text(str(exc))}".rstrip(": ")


def _client(server: Any, env: Mapping[str, str] | None, cwd: str | None) -> Client:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    if isinstance(server, str) and server.startswith(("http://", "https://")):
        return Client(server)
    if isinstance(server, (str, Sequence)):
        argv = shlex.split(server) if isinstance(server, str) else [str(a) for a in server]
        if not argv:
            raise UsageError("add_mcp: the server command is empty; give a command line "
                             "(\"python server.py\") or a URL")
        params = StdioServerParameters(command=argv[0], args=argv[1:],
                                       env=dict(env) if env is not None else None, cwd=cwd)
        # the server's stderr to ours as it is now (the SDK's default is bound at its import)
        return Client(stdio_client(params, errlog=sys.stderr))
    return Client(server)  # an SDK `Transport` or in-process server, as `mcp.Client` takes


class _Session:
    """A live client session on its own thread and loop; `call` from anywhere."""

    def __init__(self, client: Client, label: str, connect_timeout: float) -> None:
        self.label = label
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name=f"toolbridge-mcp {label}")
        self._thread.start()
        self._ready: concurrent.futures.Future[list[types.Tool]] = concurrent.futures.Future()
        self._gone: BaseException | None = None
        self._closing = asyncio.Event()
        self._inflight: set[asyncio.Task[Any]] = set()
        self._client = client
        self._main = asyncio.run_coroutine_threadsafe(self._hold(), self._loop)
        try:
            self.tools = self._ready.result(connect_timeout)
        except concurrent.futures.TimeoutError:
            self.close()
            raise BackendError(f"MCP server {label} did not answer tools/list within "
                               f"{connect_timeout:g} s") from None
        except Exception as exc:
            self.close()
            raise BackendError(f"MCP server {label} could not be reached: "
                               f"{_said(exc)}") from None

    async def _hold(self) -> None:
        """Enter the client, list its tools, hold the session until `close`."""
        try:
            async with self._client as client:
                listed = await client.list_tools()
                tools = list(listed.tools)
                while listed.next_cursor:
                    listed = await client.list_tools(cursor=listed.next_cursor)
                    tools.extend(listed.tools)
                self._ready.set_result(tools)
                await self._closing.wait()
        except BaseException as exc:
            self._gone = exc
            if not self._ready.done():
                self._ready.set_exception(exc)
            for task in list(self._inflight):
                task.cancel()  # nothing will answer them: fail them now, not at a timeout
            if not isinstance(exc, Exception):
                raise

    async def _call(self, name: str, arguments: dict[str, Any], key: str) -> Any:
        task = asyncio.current_task()
        assert task is not None
        self._inflight.add(task)
        try:
            if self._gone is not None:
                raise ConnectionError(_said(self._gone))
            # an open map (PEP 728 ``extra_items``), which mypy does not read yet
            meta = cast("types.RequestParamsMeta", {IDEMPOTENCY_META: key})
            return await self._client.call_tool(name, arguments, meta=meta)
        except asyncio.CancelledError:
            if self._gone is None:
                raise  # the caller's cancellation (a timeout): the SDK tells the server
            raise ConnectionError(_said(self._gone)) from None
        finally:
            self._inflight.discard(task)

    async def call(self, name: str, arguments: dict[str, Any], key: str) -> Any:
        """``tools/call`` on the session's loop; cancelling this cancels the remote call."""
        future = asyncio.run_coroutine_threadsafe(self._call(name, arguments, key), self._loop)
        try:
            return await asyncio.wrap_future(future)
        except ToolError:
            raise
        except ConnectionError as exc:
            raise ToolError(f"MCP server {self.label} is gone ({exc}); the call was not "
                            "answered") from None
        except Exception as exc:
            from mcp import MCPError
            from mcp_types.jsonrpc import CONNECTION_CLOSED

            if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
                self._gone = exc  # every later call fails at once
                raise ToolError(f"MCP server {self.label} is gone (its connection closed); "
                                "the call was not answered") from None
            if isinstance(exc, MCPError):
                raise ToolError(f"MCP server {self.label} refused the call: {_said(exc)}"
                                ) from None
            if self._gone is not None or not self._thread.is_alive():
                raise ToolError(f"MCP server {self.label} is gone ("
                                f"{_said(exc)}); the call was not answered") from None
            raise ToolError(f"MCP server {self.label}: {_said(exc)}"
                            ) from None

    def close(self) -> None:
        """End the session and its thread (idempotent)."""
        if not self._loop.is_closed():
            if self._loop.is_running():
                self._loop.call_soon_threadsafe(self._closing.set)
                # the session's own end, whatever it was, was already reported to calls
                with contextlib.suppress(BaseException):
                    self._main.result(10)
                self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            if not self._thread.is_alive():
                self._loop.close()


def result_output(result: types.CallToolResult) -> Any:
    """The output of a ``CallToolResult``: ``structuredContent`` when sent, else its text
    (`toolbridge.Content` when it holds images); ``isError`` raises `ToolError` with its text."""
    import mcp_types as types

    texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    if result.is_error:
        raise ToolError("\n".join(texts) or "the MCP tool reported an error")
    if result.structured_content is not None:
        return result.structured_content
    parts: list[TextPart | ImagePart] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(TextPart(text=block.text))
        elif isinstance(block, types.ImageContent):
            parts.append(ImagePart(url=f"data:{block.mime_type};base64,{block.data}"))
        else:
            parts.append(TextPart(text=block.model_dump_json(by_alias=True, exclude_none=True)))
    if all(isinstance(p, TextPart) for p in parts):
        return "\n".join(p.text for p in parts if isinstance(p, TextPart))
    return Content(parts=tuple(parts))


def _handler(session: _Session, remote: str) -> Callable[..., Any]:
    async def call_remote(context: ToolContext, **arguments: Any) -> Any:
        result = await session.call(remote, arguments, context.idempotency_key)
        return result_output(result)

    call_remote.__name__ = _UNFIT.sub("_", remote)
    return call_remote


class McpTools:
    """The tools a toolbox imported from one MCP server, and the session that runs them.

    `close` ends the session (the toolbox's own `close` does too); its tools then answer
    with error results.
    """

    def __init__(self, session: _Session, names: list[str]) -> None:
        self._session = session
        self.names = names
        """The imported tools' names in the toolbox (prefixed)."""

    @property
    def server(self) -> str:
        """The server, as messages name it (never with credentials)."""
        return self._session.label

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> McpTools:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<McpTools {self.server} {self.names}>"


def attach(toolbox: Toolbox, server: Any, *, prefix: str | None = None,
           timeout: float | None = None, env: Mapping[str, str] | None = None,
           cwd: str | None = None, connect_timeout: float = 30.0,
           needs_approval: NeedsApproval = False) -> McpTools:
    """Import ``server``'s tools into ``toolbox`` (`toolbridge.Toolbox.add_mcp`)."""
    if prefix is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", prefix):
        raise UsageError(f"add_mcp: prefix {prefix!r} must match [A-Za-z0-9_-]{{1,32}}")
    label = server_label(server)
    session = _Session(_client(server, env, cwd), label, connect_timeout)
    try:
        definitions: list[tuple[ToolDefinition, Callable[..., Any]]] = []
        for i, tool in enumerate(session.tools):
            wire = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
            neutral = translate.read_tool(wire, f"tools[{i}]")
            neutral = neutral.model_copy(update={
                "name": translate.local_name(tool.name, prefix), "timeout": timeout})
            definitions.append((neutral, _handler(session, tool.name)))
        added = toolbox.add_all(definitions, needs_approval=needs_approval)
    except BaseException:
        session.close()
        raise
    return McpTools(session, [d.name for d in added])
