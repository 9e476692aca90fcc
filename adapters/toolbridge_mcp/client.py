"""`Toolbox.add_mcp`: an MCP server's tools as tools of a toolbox.

One connection per server, held by a session task on a daemon thread's own event loop (the
SDK's sessions live in one task group); handlers on any thread or loop send their calls to it.
Imported tools run through the pipeline like local ones: the toolbox's timeouts cancel the
remote call, the store keeps their results, hooks and approvals apply. When the server says
its tools changed, they are listed again and the toolbox's copies replaced in one change; a
remote call's progress notifications are the running call's `ToolContext.heartbeat`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
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
    from mcp.client.session import IncomingMessage, MessageHandlerFnT

    from toolbridge import Toolbox, ToolDefinition

__all__ = ["McpTools", "attach"]

log = logging.getLogger("toolbridge.mcp")

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


def _client(server: Any, env: Mapping[str, str] | None, cwd: str | None,
            on_message: MessageHandlerFnT) -> Client:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    if isinstance(server, str) and server.startswith(("http://", "https://")):
        return Client(server, message_handler=on_message)
    if isinstance(server, (str, Sequence)):
        argv = shlex.split(server) if isinstance(server, str) else [str(a) for a in server]
        if not argv:
            raise UsageError("add_mcp: the server command is empty; give a command line "
                             "(\"python server.py\") or a URL")
        params = StdioServerParameters(command=argv[0], args=argv[1:],
                                       env=dict(env) if env is not None else None, cwd=cwd)
        # the server's stderr to ours as it is now (the SDK's default is bound at its import)
        return Client(stdio_client(params, errlog=sys.stderr), message_handler=on_message)
    # an SDK `Transport` or in-process server, as `mcp.Client` takes
    return Client(server, message_handler=on_message)


Progress = Callable[[str], None]
"""Where a remote call's progress goes: the text of one notification."""


class _Session:
    """A live client session on its own thread and loop; `call` from anywhere.

    A ``notifications/tools/list_changed`` (on 2026-07-28 connections, teed from the
    ``subscriptions/listen`` stream the session holds) marks the listing stale; once
    `watch` is given a callback, each stale mark re-lists the tools and hands them to it.
    """

    def __init__(self, make_client: Callable[[MessageHandlerFnT], Client], label: str,
                 connect_timeout: float) -> None:
        self.label = label
        self._client = make_client(self._on_message)  # before the thread: it may refuse
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name=f"toolbridge-mcp {label}")
        self._thread.start()
        self._ready: concurrent.futures.Future[list[types.Tool]] = concurrent.futures.Future()
        self._gone: BaseException | None = None
        self._closing = asyncio.Event()
        self._inflight: set[asyncio.Task[Any]] = set()
        self._stale = asyncio.Event()
        self._background: set[asyncio.Task[None]] = set()
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

    async def _list(self, cache_mode: Any = "use") -> list[types.Tool]:
        """Every page of ``tools/list`` (``cache_mode="refresh"``: past the SDK's cache)."""
        listed = await self._client.list_tools(cache_mode=cache_mode)
        tools = list(listed.tools)
        while listed.next_cursor:
            listed = await self._client.list_tools(cursor=listed.next_cursor,
                                                   cache_mode=cache_mode)
            tools.extend(listed.tools)
        return tools

    async def _on_message(self, message: IncomingMessage) -> None:
        import mcp_types as types

        if isinstance(message, types.ToolListChangedNotification):
            self._stale.set()

    def _start(self, work: Any) -> None:
        """Run ``work`` on the session's loop until the session ends (in its task)."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _listen(self) -> None:
        """Hold a ``subscriptions/listen`` stream for tool changes (2026-07-28 connections;
        its events reach `_on_message` too). Earlier revisions send the notification
        unasked."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if self._client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        try:
            async with self._client.listen(tools_list_changed=True) as subscription:
                async for _ in subscription:
                    pass
        except Exception as exc:  # a server without subscriptions: its tools stay as listed
            log.debug("mcp: %s: no tool-change subscription (%s)", self.label, _said(exc))

    async def _refresh(self, on_tools: Callable[[list[types.Tool]], None]) -> None:
        """Each time the listing is stale: list again, hand the tools to ``on_tools``."""
        while True:
            await self._stale.wait()
            self._stale.clear()
            try:
                on_tools(await self._list(cache_mode="refresh"))
            except Exception as exc:  # the toolbox keeps the tools it had
                log.warning("mcp: %s: its changed tool list was not imported: %s",
                            self.label, _said(exc))

    def watch(self, on_tools: Callable[[list[types.Tool]], None]) -> None:
        """From now on, hand each changed tool listing to ``on_tools`` (on the session's
        thread)."""
        async def start() -> None:
            if self._gone is None and not self._closing.is_set():  # else nothing will list
                self._start(self._refresh(on_tools))

        if not self._loop.is_closed():
            asyncio.run_coroutine_threadsafe(start(), self._loop)

    async def _hold(self) -> None:
        """Enter the client, list its tools, hold the session until `close`."""
        try:
            async with self._client:
                self._ready.set_result(await self._list())
                self._start(self._listen())
                try:
                    await self._closing.wait()
                finally:
                    for task in list(self._background):
                        task.cancel()
                    await asyncio.gather(*self._background, return_exceptions=True)
        except BaseException as exc:
            self._gone = exc
            if not self._ready.done():
                self._ready.set_exception(exc)
            for task in list(self._inflight):
                task.cancel()  # nothing will answer them: fail them now, not at a timeout
            if not isinstance(exc, Exception):
                raise

    async def _call(self, name: str, arguments: dict[str, Any], key: str,
                    on_progress: Progress | None) -> Any:
        task = asyncio.current_task()
        assert task is not None
        self._inflight.add(task)
        try:
            if self._gone is not None:
                raise ConnectionError(_said(self._gone))
            # an open map (PEP 728 ``extra_items``), which mypy does not read yet
            meta = cast("types.RequestParamsMeta", {IDEMPOTENCY_META: key})
            if on_progress is None:
                return await self._client.call_tool(name, arguments, meta=meta)
            answered = False

            async def forward(progress: float, total: float | None, message: str | None) -> None:
                if not answered:  # one sent before the reply but read after it: dropped
                    on_progress(message or f"progress {progress:g}"
                                + ("" if total is None else f"/{total:g}"))

            try:  # the SDK sends a progressToken in _meta for the callback
                return await self._client.call_tool(name, arguments, meta=meta,
                                                    progress_callback=forward)
            finally:
                answered = True
        except asyncio.CancelledError:
            if self._gone is None:
                raise  # the caller's cancellation (a timeout): the SDK tells the server
            raise ConnectionError(_said(self._gone)) from None
        finally:
            self._inflight.discard(task)

    async def call(self, name: str, arguments: dict[str, Any], key: str,
                   progress: Progress | None = None) -> Any:
        """``tools/call`` on the session's loop; cancelling this cancels the remote call.
        ``progress`` gets the text of each progress notification of the call (on the
        session's thread)."""
        future = asyncio.run_coroutine_threadsafe(self._call(name, arguments, key, progress),
                                                  self._loop)
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
        # progress is asked for only where something watches the call's heartbeats
        progress = context.heartbeat if context.on_heartbeat is not None else None
        result = await session.call(remote, arguments, context.idempotency_key, progress)
        return result_output(result)

    call_remote.__name__ = _UNFIT.sub("_", remote)
    return call_remote


class McpTools:
    """The tools a toolbox imported from one MCP server, and the session that runs them.

    The set follows the server: on its ``notifications/tools/list_changed`` the tools are
    listed again and `sync` replaces them in the toolbox. `close` ends the session (the
    toolbox's own `close` does too); its tools then answer with error results.
    """

    def __init__(self, session: _Session, toolbox: Toolbox, *, prefix: str | None,
                 timeout: float | None, needs_approval: NeedsApproval) -> None:
        self._session = session
        self._toolbox = toolbox
        self._prefix, self._timeout, self._needs_approval = prefix, timeout, needs_approval
        self._syncing = threading.Lock()
        self.names: list[str] = []
        """The imported tools' names in the toolbox (prefixed), as of the last listing."""

    def sync(self, tools: Sequence[types.Tool]) -> None:
        """Make the toolbox's copies of this server's tools ``tools`` (a ``tools/list``):
        new ones added, missing ones removed, the others replaced, all in one change, or
        none (a `ToolDefinitionError`, e.g. a new name another tool holds)."""
        definitions: list[tuple[ToolDefinition, Callable[..., Any]]] = []
        for i, tool in enumerate(tools):
            wire = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
            neutral = translate.read_tool(wire, f"tools[{i}]")
            neutral = neutral.model_copy(update={
                "name": translate.local_name(tool.name, self._prefix), "timeout": self._timeout})
            definitions.append((neutral, _handler(self._session, tool.name)))
        with self._syncing:
            added = self._toolbox.add_all(definitions, needs_approval=self._needs_approval,
                                          replace=[n for n in self.names if n in self._toolbox])
            before, self.names = self.names, [d.name for d in added]
        if before and before != self.names:
            log.info("mcp: %s: tools now %s", self.server, self.names)

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
    session = _Session(lambda on_message: _client(server, env, cwd, on_message), label,
                       connect_timeout)
    imported = McpTools(session, toolbox, prefix=prefix, timeout=timeout,
                        needs_approval=needs_approval)
    try:
        imported.sync(session.tools)
    except BaseException:
        session.close()
        raise
    session.watch(imported.sync)
    return imported
