"""``toolbridge mcp serve``: a toolbox served to MCP clients (the `toolbridge_mcp` package).

The core never imports the plugin at import time: it is loaded when the command runs, and a
missing ``mcp`` extra is a `UsageError` saying what to install.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from typing import Any

from ..errors import UsageError
from ._options import EXIT_OK, add_command, load_toolbox

__all__ = ["add_parsers", "mcp_plugin"]


def mcp_plugin() -> Any:
    """`toolbridge_mcp`, or a `UsageError` naming the extra to install."""
    try:
        return importlib.import_module("toolbridge_mcp.server")
    except ImportError as exc:
        raise UsageError("MCP needs the `mcp` extra: pip install 'toolbridge[mcp]' "
                         f"({exc})") from None


def _address(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8000")
    return host.strip("[]"), int(port)


def cmd_mcp(args: argparse.Namespace) -> int:
    plugin = mcp_plugin()
    toolbox = load_toolbox(args.toolbox)
    options = {"name": args.name} if args.name else {}
    if args.http is None:
        # stdout is the protocol's channel: what a person reads goes to stderr
        print(f"toolbridge mcp: serving {len(toolbox)} tools on stdio", file=sys.stderr,
              flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            plugin.serve_stdio(toolbox, **options)
        return EXIT_OK
    host, port = _address(args.http)
    print(f"toolbridge mcp: serving {len(toolbox)} tools on http://{host}:{port}{args.path}; "
          "Ctrl-C stops it", file=sys.stderr, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        plugin.serve_http(toolbox, host, port, path=args.path, **options)
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Add the ``mcp`` command to ``sub``."""
    p = add_command(sub, "mcp", "serve a toolbox to MCP clients (stdio or streamable HTTP)",
                    "Serve the toolbox's tools over the Model Context Protocol: on stdin and "
                    "stdout (what a desktop host starts), or with --http on streamable HTTP. "
                    "Every call runs through the toolbox (store, timeouts, limits, hooks, "
                    "approvals). Needs the `mcp` extra.",
                    "toolbridge mcp serve toolbridge.examples:toolbox",
                    "toolbridge mcp serve --http 127.0.0.1:8000 myapp.tools:toolbox")
    p.add_argument("action", choices=["serve"], help="serve: serve the toolbox")
    p.add_argument("toolbox", metavar="MODULE:TOOLBOX")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP on this address instead of stdio")
    p.add_argument("--path", default="/mcp", help="the HTTP endpoint's path (default: /mcp)")
    p.add_argument("--name", help="the server name announced to clients (default: toolbridge)")
    p.set_defaults(func=cmd_mcp)
