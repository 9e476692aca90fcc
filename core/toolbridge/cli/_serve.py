"""``toolbridge emulate`` and ``serve``: an emulated backend, and a worker answering a backend."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from ..plugin import get_dialect, hookimpl, register_plugin
from ._options import EXIT_FAILED, EXIT_OK, load_toolbox, parse_fault_options, parse_key_values

__all__ = ["add_parsers"]


def cmd_emulate(args: argparse.Namespace) -> int:
    faults = parse_fault_options(args.fault)
    emulator = get_dialect(args.dialect).create_emulator(script=args.script, faults=faults)
    with emulator.run(args.host, args.port) as running:
        print(f"{args.dialect} emulator on {running.base_url} (journal: "
              f"{running.base_url}/_emulator/journal); Ctrl-C stops it", flush=True)
        try:
            while True:
                asyncio.run(asyncio.sleep(3600))
        except KeyboardInterrupt:
            pass
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    toolbox = load_toolbox(args.toolbox)
    dialect = get_dialect(args.dialect)
    options = parse_key_values(args.option)
    if args.store:
        from ..store import open_store

        toolbox.store = open_store(args.store)
    print(f"serving {args.dialect} with tools {', '.join(toolbox.names())}", file=sys.stderr,
          flush=True)
    if not args.quiet:
        register_plugin(_Progress(), "toolbridge.cli.progress")
    legacy: Any = dialect
    try:
        if hasattr(legacy, "aserve"):  # an adapter with its own loop, until it is ported
            result = asyncio.run(legacy.aserve(toolbox, **options))
        else:
            from ..serve import aserve

            result = asyncio.run(aserve(toolbox, dialect, options))
    except KeyboardInterrupt:
        return EXIT_OK
    if result is not None:
        print(result.render() if hasattr(result, "render") else result)
    return EXIT_FAILED if getattr(result, "status", "completed") not in (
        "completed", "in_progress") else EXIT_OK


class _Progress:
    """A line on stderr per answered call: the worker's progress."""

    def __init__(self) -> None:
        self.count = 0

    @hookimpl(wrapper=True)
    def toolbridge_execute_call(self, call: Any, tool: Any, invoke: Any) -> Any:
        started = time.perf_counter()
        result = yield
        self.count += 1
        outcome = "ok" if result.success else f"error: {str(result.error)[:80]}"
        print(f"[{self.count}] {call.name} ({call.id}) {outcome} "
              f"in {(time.perf_counter() - started) * 1000:.0f} ms", file=sys.stderr, flush=True)
        return result


def add_parsers(sub: Any) -> None:
    """Add the ``emulate`` and ``serve`` commands to ``sub``."""
    p = sub.add_parser("emulate", help="run a dialect's emulated backend on loopback")
    p.add_argument("dialect")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--script", help="JSON script file for the scripted model")
    p.add_argument("--fault", action="append", default=[], metavar="NAME=VALUE",
                   help="inject a fault, e.g. latency_ms=50 or drop_stream_after=3")
    p.set_defaults(func=cmd_emulate)

    p = sub.add_parser("serve", help="run a worker answering a backend's calls")
    p.add_argument("dialect")
    p.add_argument("toolbox", metavar="MODULE:TOOLBOX")
    p.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                   help="dialect option (base_url, session_id, ...); see the dialect's docs")
    p.add_argument("--quiet", "-q", action="store_true", help="no line per answered call")
    p.add_argument("--store", metavar="URL",
                   help="result store for this worker, e.g. sqlite:///results.db (default: the "
                   "toolbox's own)")
    p.set_defaults(func=cmd_serve)
