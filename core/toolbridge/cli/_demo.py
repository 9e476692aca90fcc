"""``toolbridge demo``: one toolbox, every backend declaring a demo, one scripted conversation
each."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import ToolbridgeError, UsageError
from ..plugin import Dialect, ServeOptions, capabilities, get_dialect
from ._options import EXIT_FAILED, EXIT_OK, add_command, print_json

__all__ = ["DEMO_MESSAGES", "DEMO_SCRIPT", "add_parsers", "run_demo"]

DEMO_MESSAGES = [
    "Customer 42 says their delivery is late. Open a ticket and check the weather in Lima.",
]

DEMO_SCRIPT: dict[str, Any] = {"turns": [{
    "rounds": [
        [{"name": "get_customer", "arguments": {"customer_id": "42"}}],
        [{"name": "create_ticket",
          "arguments": {"customer_id": "42", "subject": "Late delivery", "priority": "high"}},
         {"name": "get_weather", "arguments": {"city": "Lima", "days": 2}}],
    ],
    "reply": "I opened the ticket and checked the forecast. Tool outputs: {outputs}",
}]}
"""What the emulated model does: look the customer up, then two parallel calls, then reply."""


@contextlib.contextmanager
def _backend(dialect: Dialect, real: bool) -> Iterator[ServeOptions]:
    """The dialect's serve options: for an emulator on loopback, or the real service."""
    declared = capabilities()
    options = declared.serving(dialect.name).options
    if real:
        yield options()
        return
    emulator = declared.emulator(dialect.name).create({"script": DEMO_SCRIPT})
    with emulator.run() as running:
        yield options.emulated(running.base_url)


def run_demo(only: Sequence[str] | None = None, *, real: bool = False,
             show_wire: bool = False, as_json: bool = False) -> bool:
    """Run the demo on each dialect that declares one (`toolbridge.plugin.Demos`), or
    ``only`` these; True when all completed.

    Prints each transcript (``as_json``: one JSON list of them all, at the end).
    """
    from ..examples import tickets, toolbox
    from ..store import open_store

    declared = capabilities()
    names = list(only) if only else [demo.dialect for demo in declared.demos()]
    for name in names:
        get_dialect(name)  # an unknown name is a command-line error, before any output
        declared.serving(name)
        declared.emulator(name)
    if not names:
        raise UsageError("no installed dialect declares a demo; reinstall toolbridge")
    where = "the real services" if real else "emulators on loopback"
    if not as_json:
        print(f"toolbridge demo: tools {', '.join(toolbox.names())} on {len(names)} backends "
              f"({where}); results kept in a SQLite store\n")
    ok = True
    transcripts: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolbridge-demo-") as tmp:
        toolbox.store = open_store(f"sqlite:///{tmp}/results.db")
        try:
            for name in names:
                opened = len(tickets)
                transcript = _converse(get_dialect(name), real, toolbox)
                if transcript is None:
                    ok = False
                    continue
                ok = transcript.ok and ok
                if as_json:
                    transcripts.append(transcript.to_dict())
                    continue
                print(transcript.render(show_data=show_wire))
                print(f"  note   side-effecting create_ticket ran {len(tickets) - opened} "
                      "time(s)\n")
        finally:
            store, toolbox.store = toolbox.store, open_store("memory://")
            store.close()
    if as_json:
        print_json(transcripts)
    return ok


def _converse(dialect: Dialect, real: bool, toolbox: Any) -> Any:
    """One backend's transcript; ``None`` (reported on stderr) when it could not start."""
    from ..serve import aconverse

    try:
        with _backend(dialect, real) as options:
            return asyncio.run(aconverse(toolbox, dialect, DEMO_MESSAGES, options))
    except UsageError:
        raise
    except ToolbridgeError as exc:
        print(f"== {dialect.name}\n  failed: {exc}\n", file=sys.stderr)
        return None


def cmd_demo(args: argparse.Namespace) -> int:
    if args.mcp:
        from ._mcp import mcp_plugin

        mcp_plugin()  # a missing extra is a usage error
        import importlib

        demo = importlib.import_module("toolbridge_mcp.demo")
        return EXIT_OK if demo.run_demo(DEMO_SCRIPT) else EXIT_FAILED
    completed = run_demo(args.dialect, real=args.real, show_wire=args.show_wire,
                         as_json=args.json)
    return EXIT_OK if completed else EXIT_FAILED


def add_parsers(sub: Any) -> None:
    """Add the ``demo`` command to ``sub``."""
    p = add_command(sub, "demo", "run example tools on every demo backend's emulator",
                    "Start the emulators on loopback and hold a scripted conversation on each "
                    "backend, printing a transcript per backend; exits 1 when a conversation "
                    "did not complete.",
                    "toolbridge demo",
                    "toolbridge demo --dialect openai-agents --show-wire",
                    "toolbridge demo --mcp")
    p.add_argument("--dialect", action="append", help="only this dialect (repeatable)")
    p.add_argument("--real", action="store_true",
                   help="use the real services, with credentials from the environment")
    p.add_argument("--show-wire", action="store_true", help="print each entry's data too")
    p.add_argument("--json", action="store_true", help="print the transcripts as JSON")
    p.add_argument("--mcp", action="store_true",
                   help="instead: serve the example tools over MCP (stdio) to an MCP client "
                   "session and call them (needs the `mcp` extra)")
    p.set_defaults(func=cmd_demo)
