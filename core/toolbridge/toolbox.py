"""`Toolbox`: define tools once, render them for any dialect, answer any dialect's calls."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

from .errors import ToolDefinitionError, UsageError
from .model import ToolCall, ToolDefinition, ToolResult
from .plugin import Dialect, LossPolicy, RenderedTools, get_dialect
from .runtime import SizePolicy, execute_calls, execute_calls_sync
from .runtime._output import default_error_formatter
from .runtime._payload import to_data
from .store import ResultStore, open_store
from .tools import RegisteredTool, inspect_function

__all__ = ["Toolbox"]

log = logging.getLogger("toolbridge")

F = TypeVar("F", bound=Callable[..., Any])


class Toolbox:
    """A set of tools with their handlers, servable on every installed dialect.

    ``max_concurrency`` bounds how many calls of one payload run at once; ``timeout`` is the
    default per-call limit in seconds; ``error_formatter`` turns a handler exception into the
    text the agent sees (never a traceback; a `ToolError`'s message is always sent verbatim).
    ``store`` keeps each call's state and result (a `ResultStore`, or a URL: ``memory://``, the
    default, or ``sqlite:///results.db``; ``None`` stores nothing); ``oversize`` is the
    `SizePolicy` for results over the dialect's limit.

    `close` (or leaving a ``with Toolbox(...) as toolbox:`` block) closes a store the toolbox
    opened from a URL; a `ResultStore` passed in stays open, its owner closes it.
    """

    def __init__(
        self,
        *,
        max_concurrency: int = 16,
        timeout: float | None = None,
        error_formatter: Callable[[BaseException], str] = default_error_formatter,
        store: ResultStore | str | None = "memory://",
        oversize: SizePolicy = "error",
    ) -> None:
        if max_concurrency < 1:
            raise UsageError("max_concurrency must be at least 1")
        if not (oversize in ("error", "truncate") or callable(oversize)):
            raise UsageError(f"oversize must be 'error', 'truncate' or a callable, not "
                             f"{oversize!r}")
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.error_formatter = error_formatter
        self.store: ResultStore | None = None if store is None else open_store(store)
        self._owns_store = isinstance(store, str)
        self.oversize: SizePolicy = oversize
        self._tools: dict[str, RegisteredTool] = {}

    # ------------------------------------------------------------------ defining tools
    @overload
    def tool(self, func: F, /) -> F: ...
    @overload
    def tool(
        self, /, *, name: str | None = None, description: str | None = None,
        side_effects: bool = False, timeout: float | None = None, defer_loading: bool = False,
        strict: bool | None = None, inline: bool = False,
        vendor_extras: Mapping[str, dict[str, Any]] | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self, func: Callable[..., Any] | None = None, /, *, name: str | None = None,
        description: str | None = None, side_effects: bool = False,
        timeout: float | None = None, defer_loading: bool = False, strict: bool | None = None,
        inline: bool = False, vendor_extras: Mapping[str, dict[str, Any]] | None = None,
    ) -> Any:
        """Register a sync or async function as a tool; use bare or with options.

        ``inline=True`` runs a sync handler on the event loop instead of a worker thread: only
        for cheap, non-blocking handlers.
        """

        def register(f: F) -> F:
            tool_name = name or f.__name__
            signature = inspect_function(f, tool_name)
            definition = self._define(
                name=tool_name,
                description=signature.description if description is None else description,
                parameters=signature.parameters, returns=signature.returns,
                side_effects=side_effects, timeout=timeout, defer_loading=defer_loading,
                strict=strict, vendor_extras=dict(vendor_extras or {}),
            )
            self._insert(RegisteredTool.from_function(definition, f, signature, inline))
            return f

        return register(func) if func is not None else register

    def add(
        self, definition: ToolDefinition, handler: Callable[..., Any], *, inline: bool = False
    ) -> ToolDefinition:
        """Register a hand-written definition; ``handler`` gets the arguments as keywords."""
        self._insert(RegisteredTool.from_definition(definition, handler, inline))
        return definition

    def _define(self, **fields: Any) -> ToolDefinition:
        try:
            return ToolDefinition(**fields)
        except ValueError as exc:
            raise ToolDefinitionError(f"tool {fields['name']!r}: {exc}") from None

    def _insert(self, tool: RegisteredTool) -> None:
        name = tool.definition.name
        if name in self._tools:
            raise ToolDefinitionError(
                f"tool name {name!r} is already defined in this toolbox; pass name=... to "
                "give the second one another name"
            )
        if tool.inline and (tool.is_async or tool.definition.timeout is not None):
            why = "is async" if tool.is_async else "has a timeout, which only a worker thread"
            raise ToolDefinitionError(
                f"tool {name!r}: inline=True runs a sync handler on the caller's thread, but it "
                f"{why} can enforce; drop inline=True" + ("" if tool.is_async else " or timeout")
            )
        self._tools[name] = tool

    # ------------------------------------------------------------------ reading tools
    def names(self) -> list[str]:
        """Names of the registered tools, in registration order."""
        return list(self._tools)

    def get(self, name: str) -> ToolDefinition:
        """The definition of tool ``name``."""
        try:
            return self._tools[name].definition
        except KeyError:
            raise UsageError(f"no tool {name!r}; tools: {', '.join(self._tools)}") from None

    def _registered(self, name: str) -> RegisteredTool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[ToolDefinition]:
        return (t.definition for t in self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __repr__(self) -> str:
        return f"<Toolbox tools={list(self._tools)}>"

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Close the result store if this toolbox opened it from a URL (idempotent)."""
        if self._owns_store and self.store is not None:
            self.store.close()

    def __enter__(self) -> Toolbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ dialects
    def render(self, dialect: str | Dialect, *, policy: LossPolicy = "describe") -> RenderedTools:
        """The tool list in ``dialect``'s wire form, with the schema loss report per tool."""
        return get_dialect(dialect).render_tools(list(self), policy=policy)

    def definitions(
        self, dialect: str | Dialect, *, policy: LossPolicy = "describe"
    ) -> list[dict[str, Any]]:
        """The tool list in ``dialect``'s wire form (see `render` for the loss report)."""
        return self.render(dialect, policy=policy).definitions

    async def aexecute(
        self, calls: Sequence[ToolCall], **context: Any
    ) -> list[ToolResult]:
        """Answer ``calls``, one result each in order; ``context`` goes to `ToolContext.extra`."""
        return await execute_calls(self, calls, context)

    def execute(self, calls: Sequence[ToolCall], **context: Any) -> list[ToolResult]:
        """Blocking form of `aexecute`."""
        _no_running_loop()
        results = execute_calls_sync(self, calls, context)
        return results if results is not None else asyncio.run(execute_calls(self, calls, context))

    async def ahandle(self, dialect: str | Dialect, payload: Any, *,
                      conversation: str | None = None, **context: Any) -> dict[str, Any]:
        """Answer every pending call in a backend payload; return the body that submits them.

        ``payload`` may be a dict, JSON text or bytes, or an official SDK object.
        ``conversation`` names the conversation the payload belongs to, for dialects whose wire
        does not (``openai-chat``): it keys the result store (`Dialect.read_calls_in`).
        """
        d, calls = _read(dialect, payload, conversation)
        return d.write_results(await execute_calls(self, calls, context, d))

    def handle(self, dialect: str | Dialect, payload: Any, *, conversation: str | None = None,
               **context: Any) -> dict[str, Any]:
        """Blocking form of `ahandle`; inside a running event loop use ``await ahandle``.

        When every call's tool is sync and ``inline`` (or the payload holds one call of a sync
        tool without a timeout), the calls run in this thread with no event loop at all.
        """
        _no_running_loop()
        d, calls = _read(dialect, payload, conversation)
        results = execute_calls_sync(self, calls, context, d)
        if results is None:
            results = asyncio.run(execute_calls(self, calls, context, d))
        return d.write_results(results)


def _read(dialect: str | Dialect, payload: Any, conversation: str | None
          ) -> tuple[Dialect, Sequence[ToolCall]]:
    d = get_dialect(dialect)
    data = to_data(payload, d.name)
    pending = d.read_calls(data) if conversation is None else d.read_calls_in(data, conversation)
    if pending.unhandled:
        log.warning("%s: %d required action(s) are not function calls and were left to the "
                    "caller: %s", d.name, len(pending.unhandled),
                    ", ".join(str(a.get("type")) for a in pending.unhandled))
    return d, pending.calls


def _no_running_loop() -> None:
    if asyncio.events._get_running_loop() is None:  # not get_running_loop(): no exception
        return
    raise UsageError("called the blocking form inside a running event loop; use the "
                     "async form (ahandle / aexecute) with await instead")
