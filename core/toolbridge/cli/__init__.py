"""The ``toolbridge`` command.

Exit codes: 0 success; 1 the work failed (a backend error, a lossy conversion under
``--policy error``, a demo conversation that went wrong); 2 the command line was wrong (unknown
dialect, module or option). Errors are one line on stderr saying what to fix.

One module per command group: `_demo` (demo), `_tools` (dialects, tools, convert), `_serve`
(emulate, serve), `_migrate` (migrate), `_worker` (worker: the Temporal fleet, loaded
lazily), `_mcp` (mcp serve: the MCP plugin, loaded lazily), `_approvals` (approvals
list | approve | deny); `_options` holds what they share.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import ToolbridgeError, UsageError
from . import _approvals, _demo, _mcp, _migrate, _serve, _tools, _worker
from ._options import EXIT_FAILED, EXIT_USAGE

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolbridge",
        description="Write a tool handler once; serve it on every function-calling backend.",
        epilog="example: toolbridge demo    (every built-in backend's emulator, one "
        "conversation each)")
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"toolbridge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (_demo, _tools, _serve, _migrate, _worker, _mcp, _approvals):
        group.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except UsageError as exc:
        print(f"toolbridge: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ToolbridgeError as exc:
        print(f"toolbridge: failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return code
