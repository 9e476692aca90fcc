"""`Toolbox`: define tools once, render them for any dialect, answer any dialect's calls."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar, overload

from pydantic import ValidationError

from .errors import ToolDefinitionError, UsageError, validation_text
from .model import ToolCall, ToolDefinition, ToolResult, ToolRetry
from .plugin import Dialect, LossPolicy, PendingCalls, RenderedTools, get_dialect
from .runtime import Approvals, Executor, Pipeline, SizePolicy
from .runtime._output import default_error_formatter
from .runtime._pipeline import read_pending
from .store import ResultStore, open_store
from .tools import NeedsApproval, RegisteredTool, inspect_function

__all__ = ["Toolbox"]

F = TypeVar("F", bound=Callable[..., Any])


class _DefaultStore(str):
    """The ``store`` a toolbox gets when none is given: ``memory://``, but told apart from a
    user's explicit ``"memory://"`` (only the implicit default warns about side effects)."""

    __slots__ = ()


DEFAULT_STORE = _DefaultStore("memory://")


def _setting(name: str, doc: str) -> Any:
    """A toolbox attribute that is its pipeline's setting of the same name."""

    def get(self: Toolbox) -> Any:
        return getattr(self._pipeline, name)

    def set_(self: Toolbox, value: Any) -> None:
        setattr(self._pipeline, name, value)

    return property(get, set_, doc=doc)


class Toolbox:
    """A set of tools with their handlers, servable on every installed dialect.

    ``max_concurrency`` bounds how many calls of one payload run at once; ``timeout`` is the
    default per-call limit in seconds; ``error_formatter`` turns a handler exception into the
    text the agent sees (never a traceback; a `ToolError`'s message is always sent verbatim).
    ``store`` keeps each call's state and result (a `ResultStore`, or a URL: ``memory://``, the
    default, or ``sqlite:///results.db``; ``None`` stores nothing; only the default warns
    when a side-effecting tool runs on a store a restart forgets); ``oversize`` is the
    `SizePolicy` for results over the dialect's limit; ``executor`` decides where handlers run
    (a `toolbridge.runtime.Executor`; default: `toolbridge.runtime.ThreadExecutor`).
    ``approval_expiry`` is how many seconds a call's approval request waits for a decision
    (``None``: no limit; docs/approvals.md).

    `close` (or leaving a ``with Toolbox(...) as toolbox:`` block) closes a store the toolbox
    opened from a URL; a `ResultStore` passed in stays open, its owner closes it.
    """

    def __init__(
        self,
        *,
        max_concurrency: int = 16,
        timeout: float | None = None,
        error_formatter: Callable[[BaseException], str] = default_error_formatter,
        store: ResultStore | str | None = DEFAULT_STORE,
        oversize: SizePolicy = "error",
        executor: Executor | None = None,
        approval_expiry: float | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise UsageError("max_concurrency must be at least 1")
        if not (oversize in ("error", "truncate") or callable(oversize)):
            raise UsageError(f"oversize must be 'error', 'truncate' or a callable, not "
                             f"{oversize!r}")
        self._tools: dict[str, RegisteredTool] = {}
        self._changing = threading.Lock()  # while the table changes (readers: a snapshot)
        self._pipeline = Pipeline(
            self._tools, store=None, max_concurrency=max_concurrency, timeout=timeout,
            error_formatter=error_formatter, oversize=oversize, executor=executor,
            approval_expiry=approval_expiry)
        if store is DEFAULT_STORE:
            self._pipeline.store = open_store(store)
        else:
            self.store = None if store is None else open_store(store)
        self._owns_store = isinstance(store, str)
        self._attached: list[Any] = []
        """Connections whose tools this toolbox holds (`add_mcp`), closed by `close`."""

    max_concurrency: int = _setting("max_concurrency", "Calls of one payload run at once.")
    timeout: float | None = _setting("timeout", "Default per-call limit in seconds.")
    approval_expiry: float | None = _setting(
        "approval_expiry", "Seconds an approval request waits for a decision (None: no limit).")
    error_formatter: Callable[[BaseException], str] = _setting(
        "error_formatter", "Turns a handler exception into the agent's error text.")
    @property
    def store(self) -> ResultStore | None:
        """Where call states and results live."""
        return self._pipeline.store

    @store.setter
    def store(self, store: ResultStore | None) -> None:
        # A store the user chose: they know whether it survives a restart, no warning for it.
        if store is not None:
            store.warned_side_effects = True
        self._pipeline.store = store

    @property
    def approvals(self) -> Approvals:
        """The calls of this toolbox's store that wait for a person, and the decisions on
        them (`toolbridge.runtime.Approvals`; docs/approvals.md)."""
        return Approvals(self._pipeline.store, self._tools)

    oversize: SizePolicy = _setting("oversize", "What to do with results over the limit.")
    executor: Executor | None = _setting("executor", "Where handlers run (None: the default).")

    # ------------------------------------------------------------------ defining tools
    @overload
    def tool(self, func: F, /) -> F: ...
    @overload
    def tool(
        self, /, *, name: str | None = None, description: str | None = None,
        side_effects: bool = False, timeout: float | None = None, defer_loading: bool = False,
        strict: bool | None = None, inline: bool = False,
        vendor_extras: Mapping[str, dict[str, Any]] | None = None,
        retry: ToolRetry | None = None, idempotent: bool = False,
        needs_approval: NeedsApproval = False, read_only: bool = False,
    ) -> Callable[[F], F]: ...

    def tool(
        self, func: Callable[..., Any] | None = None, /, *, name: str | None = None,
        description: str | None = None, side_effects: bool = False,
        timeout: float | None = None, defer_loading: bool = False, strict: bool | None = None,
        inline: bool = False, vendor_extras: Mapping[str, dict[str, Any]] | None = None,
        retry: ToolRetry | None = None, idempotent: bool = False,
        needs_approval: NeedsApproval = False, read_only: bool = False,
    ) -> Any:
        """Register a sync or async function as a tool; use bare or with options.

        ``retry`` is how a fleet worker retries a call whose run did not complete
        (`toolbridge.model.ToolRetry`, see docs/scaling.md).

        ``inline=True`` runs a sync handler in the caller's thread (on the event loop, under
        ``ahandle``) instead of a worker thread: only for cheap, non-blocking handlers.

        ``idempotent=True``: the handler passes `ToolContext.idempotency_key` downstream, so
        a side effect left started by a dead worker is run again with the same key.
        ``needs_approval``: ``True``, or a predicate over the `ToolCall`, for calls a person
        must approve first (docs/approvals.md).
        ``read_only=True``: the tool only reads (MCP's ``readOnlyHint``); ``side_effects=False``,
        the default, only says a call is safe to run again.
        """

        def register(f: F) -> F:
            tool_name = name or f.__name__
            signature = inspect_function(f, tool_name)
            definition = self._define(
                name=tool_name,
                description=signature.description if description is None else description,
                parameters=signature.parameters, returns=signature.returns,
                side_effects=side_effects, timeout=timeout, defer_loading=defer_loading,
                strict=strict, vendor_extras=dict(vendor_extras or {}), retry=retry,
                idempotent=idempotent, read_only=read_only,
            )
            tool = RegisteredTool.from_function(definition, f, signature, inline)
            tool.needs_approval = needs_approval
            self._insert(tool)
            return f

        return register(func) if func is not None else register

    def add(
        self, definition: ToolDefinition | Mapping[str, Any], handler: Callable[..., Any], *,
        inline: bool = False, needs_approval: NeedsApproval = False
    ) -> ToolDefinition:
        """Register a hand-written definition (a `ToolDefinition` or its JSON object);
        ``handler`` gets the arguments as keywords (``needs_approval``: see `tool`).

        The handler must take the schema's properties (or ``**kwargs``) and require only
        required ones; `ToolDefinitionError` names the tool and the parameter otherwise.
        """
        tool = RegisteredTool.from_definition(definition, handler, inline)
        tool.needs_approval = needs_approval
        self._insert(tool)
        return tool.definition

    def add_all(
        self, tools: Iterable[tuple[ToolDefinition | Mapping[str, Any], Callable[..., Any]]], *,
        inline: bool = False, needs_approval: NeedsApproval = False,
        replace: Collection[str] = (),
    ) -> list[ToolDefinition]:
        """Register many ``(definition, handler)`` pairs at once, e.g. tools just imported
        (``needs_approval``, for each of them: see `tool`).

        All or nothing: when any pair does not fit (see `add`; names must be unique), one
        `ToolDefinitionError` lists every problem (also one per line in ``problems``) and no
        tool is registered.

        ``replace`` names registered tools this set takes the place of (a re-imported tool
        list): a new tool of the same name replaces one in place, the others are removed,
        in one change. A call already running finishes on the old handler; the next finds
        the new table (an unknown-tool error result for a removed name).
        """
        built: list[RegisteredTool] = []
        ready: list[RegisteredTool] = []
        problems: list[str] = []
        for definition, handler in tools:
            try:
                built.append(RegisteredTool.from_definition(definition, handler, inline))
            except ToolDefinitionError as exc:
                problems.extend(exc.problems)
        with self._changing:
            if unknown := [name for name in replace if name not in self._tools]:
                raise UsageError(f"add_all: replace names tools not in this toolbox: {unknown}")
            taken = set(self._tools) - set(replace)
            for tool in built:
                tool.needs_approval = needs_approval
                try:
                    self._check_insert(tool, taken)
                except ToolDefinitionError as exc:
                    problems.extend(exc.problems)
                    continue
                taken.add(tool.definition.name)
                ready.append(tool)
            if problems:
                raise ToolDefinitionError(
                    f"{len(problems)} problem(s); no tool was added:\n"
                    + "\n".join(f"  - {p}" for p in problems), problems)
            for tool in ready:  # a replaced name is overwritten, never briefly missing
                self._tools[tool.definition.name] = tool
            for name in set(replace) - {tool.definition.name for tool in ready}:
                del self._tools[name]
        return [tool.definition for tool in ready]

    def remove(self, *names: str) -> list[ToolDefinition]:
        """Unregister tools (all, or none: a name not registered is a `UsageError`); returns
        their definitions. Running calls finish; later ones get unknown-tool error results."""
        with self._changing:
            if unknown := [name for name in names if name not in self._tools]:
                raise UsageError(f"no tool {unknown[0]!r} to remove; tools: {list(self._tools)}")
            return [self._tools.pop(name).definition for name in dict.fromkeys(names)]

    def add_mcp(self, server: str | Sequence[str], *, prefix: str | None = None,
                timeout: float | None = None, env: Mapping[str, str] | None = None,
                cwd: str | None = None, connect_timeout: float = 30.0,
                needs_approval: NeedsApproval = False) -> Any:
        """Import an MCP server's tools (``server``: a URL for streamable HTTP, or the
        command that starts it on stdio, a line or an argv list); returns the
        `toolbridge_mcp.McpTools` handle. Needs the ``mcp`` extra (docs/mcp.md).

        ``prefix`` names them ``<prefix>_<tool>``, for servers whose names collide;
        ``timeout`` is each call's limit (default: the toolbox's); ``needs_approval`` as for
        `tool`, for each of them. They run like local tools;
        a server that is gone answers with error results. `close` ends the connection.
        """
        import importlib  # the plugin, on first use: the core imports no adapter

        try:
            plugin = importlib.import_module("toolbridge_mcp.client")
        except ImportError as exc:
            raise UsageError("Toolbox.add_mcp needs the `mcp` extra: pip install "
                             f"'toolbridge[mcp]' ({exc})") from None
        tools = plugin.attach(self, server, prefix=prefix, timeout=timeout, env=env, cwd=cwd,
                              connect_timeout=connect_timeout, needs_approval=needs_approval)
        self._attached.append(tools)
        return tools

    def _define(self, **fields: Any) -> ToolDefinition:
        try:
            return ToolDefinition(**fields)
        except ValidationError as exc:
            raise ToolDefinitionError(f"tool {fields['name']!r}: {validation_text(exc)}") from None

    def _insert(self, tool: RegisteredTool) -> None:
        with self._changing:
            self._check_insert(tool, self._tools)
            self._tools[tool.definition.name] = tool

    @staticmethod
    def _check_insert(tool: RegisteredTool, taken: Container[str]) -> None:
        name = tool.definition.name
        if name in taken:
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

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter([t.definition for t in list(self._tools.values())])  # a snapshot

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __repr__(self) -> str:
        return f"<Toolbox tools={list(self._tools)}>"

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Close the result store if this toolbox opened it from a URL, and the MCP
        connections of `add_mcp` (idempotent)."""
        while self._attached:
            self._attached.pop().close()
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
        self, calls: Sequence[ToolCall], *, context: Mapping[str, Any] | None = None
    ) -> list[ToolResult]:
        """Answer ``calls``, one result each in order; ``context`` becomes `ToolContext.extra`."""
        return await self._pipeline.arun(calls, _context(context))

    def execute(self, calls: Sequence[ToolCall], *,
                context: Mapping[str, Any] | None = None) -> list[ToolResult]:
        """Blocking form of `aexecute`."""
        return self._pipeline.run(calls, _context(context))

    def pending(self, dialect: str | Dialect, payload: Any, *,
                conversation: str | None = None) -> PendingCalls:
        """What ``payload`` asks of us, read as `handle` reads it, without running anything:
        its calls, the actions left to the caller, and (`PendingCalls.reason`) why nothing
        is pending when nothing is (e.g. a run already ``completed``)."""
        return read_pending(dialect, payload, conversation)

    async def ahandle(self, dialect: str | Dialect, payload: Any, *,
                      conversation: str | None = None,
                      context: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Answer every pending call in a backend payload; return the body that submits them.

        ``payload`` may be a dict, JSON text or bytes, or an official SDK object.
        ``conversation`` names the conversation the payload belongs to, for dialects whose wire
        does not (``openai-chat``): it keys the result store (`Dialect.read_calls_in`).
        ``context`` (e.g. ``{"user": "u1"}``) becomes every handler's `ToolContext.extra`.
        """
        return await self._pipeline.ahandle(dialect, payload, _context(context), conversation)

    def handle(self, dialect: str | Dialect, payload: Any, *, conversation: str | None = None,
               context: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Blocking form of `ahandle`; inside a running event loop use ``await ahandle``.

        Sync handlers run in worker threads and this one, with no event loop; a payload with
        async handlers runs on this thread's own event loop, made once and reused.
        """
        return self._pipeline.handle(dialect, payload, _context(context), conversation)


_NO_CONTEXT: Mapping[str, Any] = MappingProxyType({})


def _context(context: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``context`` as `ToolContext.extra` gets it: a mapping with text keys, copied."""
    if context is None:
        return _NO_CONTEXT
    if not isinstance(context, Mapping):
        raise UsageError(f"context must be a mapping (e.g. {{'user': 'u1'}}), not "
                         f"{type(context).__name__}")
    bad = next((key for key in context if not isinstance(key, str)), None)
    if bad is not None:
        raise UsageError(f"context keys must be strings; got {bad!r}")
    return dict(context)
