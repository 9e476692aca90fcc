"""The Model Context Protocol, both ways, as the toolbridge dialect ``mcp``.

Serve a toolbox to any MCP client (`serve_stdio`, `serve_http`, ``toolbridge mcp serve``), and
bring an MCP server's tools into a toolbox (`toolbridge.Toolbox.add_mcp`). The dialect's
translations: a `toolbridge.ToolDefinition` is an MCP ``Tool``, a pending call a
``tools/call`` request, a result the JSON-RPC response carrying a ``CallToolResult``
(docs/mcp.md). MCP clients call us, so there is no serve backend or emulator.

Importing this package is light: the ``mcp`` SDK loads when a server or a client starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from toolbridge import ToolDefinition, ToolResult
from toolbridge.plugin import (
    Dialect,
    DialectLimits,
    DialectRegistry,
    hookimpl,
    lazy_attributes,
    lazy_module,
)

from .wire import DIALECT, IDEMPOTENCY_META, NAME_RULE

if TYPE_CHECKING:
    from toolbridge.plugin import PendingCalls, RenderedTools

    from . import translate
    from .client import McpTools, attach
    from .server import ToolboxServer, serve_http, serve_stdio
    from .translate import McpCorrelation
else:
    translate = lazy_module(f"{__name__}.translate")

__all__ = [
    "IDEMPOTENCY_META",
    "McpCorrelation",
    "McpDialect",
    "McpTools",
    "ToolboxServer",
    "attach",
    "serve_http",
    "serve_stdio",
]


class McpDialect(Dialect):
    """MCP tools: ``tools/list`` entries, ``tools/call`` requests, ``CallToolResult`` answers."""

    name: ClassVar[str] = DIALECT
    limits: ClassVar[DialectLimits] = DialectLimits(name_pattern=NAME_RULE, content_parts=True)

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        """MCP ``Tool`` entries; a name outside MCP's rule is a `UsageError` naming it."""
        rendered = translate.render_tools(tools, policy=policy)
        bad = [d["name"] for d in rendered.definitions
               if not self.limits.name_pattern.match(d["name"])]
        if bad:
            from toolbridge import UsageError

            raise UsageError(f"{DIALECT}: tool names {bad} do not match MCP's rule "
                             "[A-Za-z0-9._-]{1,128} (SEP-986); rename them")
        return rendered

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return translate.read_calls(payload)

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return translate.write_results(results)

    def read_tools(self, definitions: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
        """The ``Tool`` entries of a ``tools/list`` result."""
        return translate.read_tools(definitions)


_LAZY = {
    "McpCorrelation": ".translate",
    "McpTools": ".client", "attach": ".client",
    "ToolboxServer": ".server", "serve_http": ".server",
    "serve_stdio": ".server",
}

__getattr__ = lazy_attributes(__name__, _LAZY)


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(McpDialect())
