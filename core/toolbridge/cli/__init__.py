"""The ``toolbridge`` command.

Exit codes: 0 success; 1 the work failed (a backend error, a lossy conversion under
``--policy error``, a demo conversation that went wrong); 2 the command line was wrong (unknown
dialect, module or option). Errors are one line on stderr saying what to fix.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ToolbridgeError, UsageError
from ..plugin import dialects, get_dialect, hookimpl, register_plugin
from ..toolbox import Toolbox
from ._options import parse_key_values

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _load_toolbox(spec: str) -> Toolbox:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{spec!r} must look like MODULE:TOOLBOX, e.g. myapp.tools:toolbox")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import {module_name!r}: {exc}") from None
    finally:
        sys.path.pop(0)
    toolbox = getattr(module, attr, None)
    if not isinstance(toolbox, Toolbox):
        raise UsageError(f"{spec!r} is not a toolbridge.Toolbox (found {type(toolbox).__name__})")
    return toolbox


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def cmd_dialects(args: argparse.Namespace) -> int:
    registry = dialects()
    if not registry:
        print("no dialects installed")
        return EXIT_OK
    width = max(len(n) for n in registry)
    for name, dialect in registry.items():
        print(f"{name:<{width}}  plugin {registry.provider(name)}  "
              f"({type(dialect).__module__}.{type(dialect).__name__})")
    return EXIT_OK


def cmd_tools(args: argparse.Namespace) -> int:
    toolbox = _load_toolbox(args.toolbox)
    names = args.dialect or list(dialects())
    for name in names:
        rendered = toolbox.render(name, policy=args.policy)
        print(f"== {name}")
        _print_json(rendered.definitions)
        losses = [(tool, loss) for tool, items in rendered.losses.items() for loss in items]
        if losses:
            print(f"-- schema losses ({len(losses)})")
            for tool, loss in losses:
                print(f"   {tool}: {loss}")
        else:
            print("-- schema losses: none")
    return EXIT_OK


def cmd_convert(args: argparse.Namespace) -> int:
    from ._convert import convert_file

    _print_json(convert_file(Path(args.file), args.source, args.target, policy=args.policy))
    return EXIT_OK


def cmd_emulate(args: argparse.Namespace) -> int:
    from ..emulation import parse_fault_options

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
    toolbox = _load_toolbox(args.toolbox)
    dialect = get_dialect(args.dialect)
    options = parse_key_values(args.option)
    if args.store:
        from ..store import open_store

        toolbox.store = open_store(args.store)
    print(f"serving {args.dialect} with tools {', '.join(toolbox.names())}", file=sys.stderr,
          flush=True)
    if not args.quiet:
        register_plugin(_Progress(), "toolbridge.cli.progress")
    try:
        result = asyncio.run(dialect.aserve(toolbox, **options))
    except KeyboardInterrupt:
        return EXIT_OK
    if result is not None:
        print(result.render() if hasattr(result, "render") else result)
    return EXIT_OK


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


def cmd_demo(args: argparse.Namespace) -> int:
    from ._demo import run_demo

    return EXIT_OK if run_demo(args.dialect, real=args.real, show_wire=args.show_wire) else (
        EXIT_FAILED)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolbridge",
        description="Write a tool handler once; serve it on every function-calling backend.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("demo", help="run example tools on every built-in backend's emulator",
                       description="Start the emulators on loopback and hold a scripted "
                       "conversation on each backend, printing a transcript per backend.")
    p.add_argument("--dialect", action="append", help="only this dialect (repeatable)")
    p.add_argument("--real", action="store_true",
                   help="use the real services, with credentials from the environment")
    p.add_argument("--show-wire", action="store_true", help="print the wire payloads too")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("dialects", help="list installed dialects and their plugins")
    p.set_defaults(func=cmd_dialects)

    p = sub.add_parser("tools", help="print a toolbox's definitions per dialect, with losses")
    p.add_argument("toolbox", metavar="MODULE:TOOLBOX")
    p.add_argument("--dialect", action="append", help="only this dialect (repeatable)")
    p.add_argument("--policy", choices=["allow", "describe", "error"], default="describe",
                   help="what to do with schema keywords a dialect cannot carry")
    p.set_defaults(func=cmd_tools)

    p = sub.add_parser("convert", help="convert a file of tool definitions between dialects")
    p.add_argument("--from", dest="source", required=True,
                   help="a dialect name, 'neutral' (ToolDefinition JSON) or 'openapi'")
    p.add_argument("--to", dest="target", required=True, help="a dialect name or 'neutral'")
    p.add_argument("--policy", choices=["allow", "describe", "error"], default="describe")
    p.add_argument("file", help="JSON file (a list of definitions, or an OpenAPI document)")
    p.set_defaults(func=cmd_convert)

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
