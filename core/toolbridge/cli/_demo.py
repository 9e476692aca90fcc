"""``toolbridge demo``: one toolbox, every built-in backend, one scripted conversation each."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import ToolbridgeError, UsageError
from ..plugin import dialects, get_dialect
from ._options import EXIT_FAILED, EXIT_OK

__all__ = ["DEMO_MESSAGES", "DEMO_SCRIPT", "add_parsers", "run_demo"]

BUILT_IN = ("openai-agents", "openai-assistants", "google-ces", "openai-responses",
            "openai-chat")

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
def _backend(name: str, real: bool) -> Iterator[Any]:
    """Options for the conversation: an emulator on loopback, or the real service.

    A dialect served by the core driver (`toolbridge.serve`) gets its typed `serve_options`;
    one that still has its own ``aconverse`` gets the keyword options it takes.
    """
    dialect = get_dialect(name)
    legacy = hasattr(dialect, "aconverse")
    if real:
        yield {"base_url": None} if legacy else dialect.serve_options()
        return
    emulator = dialect.create_emulator(script=DEMO_SCRIPT)
    with emulator.run() as running:
        yield ({"base_url": running.base_url, "api_key": "demo-key"} if legacy
               else dialect.serve_options.emulated(running.base_url))


def run_demo(only: Sequence[str] | None = None, *, real: bool = False,
             show_wire: bool = False) -> bool:
    """Run the demo on each built-in dialect (or ``only`` these); True when all succeeded."""
    from ..examples import tickets, toolbox
    from ..store import open_store

    installed = dialects()
    names = list(only) if only else [n for n in BUILT_IN if n in installed]
    if not names:
        raise UsageError("no built-in dialect is installed; reinstall toolbridge")
    where = "the real services" if real else "emulators on loopback"
    print(f"toolbridge demo: tools {', '.join(toolbox.names())} on {len(names)} backends "
          f"({where}); results kept in a SQLite store\n")
    ok = True
    with tempfile.TemporaryDirectory(prefix="toolbridge-demo-") as tmp:
        toolbox.store = open_store(f"sqlite:///{tmp}/results.db")
        try:
            for name in names:
                ok = _converse(name, real, show_wire, toolbox, tickets) and ok
        finally:
            store, toolbox.store = toolbox.store, open_store("memory://")
            store.close()
    return ok


def _converse(name: str, real: bool, show_wire: bool, toolbox: Any, tickets: list[Any]) -> bool:
    """One backend's conversation, printed; False when it failed."""
    opened = len(tickets)
    dialect: Any = get_dialect(name)
    try:
        with _backend(name, real) as options:
            if hasattr(dialect, "aconverse"):
                transcript = asyncio.run(dialect.aconverse(toolbox, DEMO_MESSAGES, **options))
            else:
                from ..serve import aconverse

                transcript = asyncio.run(aconverse(toolbox, dialect, DEMO_MESSAGES, options))
                if transcript.status != "completed":
                    print(transcript.render(show_data=show_wire), file=sys.stderr)
                    return False
    except ToolbridgeError as exc:
        print(f"== {name}\n  failed: {exc}\n", file=sys.stderr)
        return False
    print(transcript.render(show_data=show_wire))
    print(f"  note   side-effecting create_ticket ran {len(tickets) - opened} time(s)\n")
    return True


def cmd_demo(args: argparse.Namespace) -> int:
    return EXIT_OK if run_demo(args.dialect, real=args.real, show_wire=args.show_wire) else (
        EXIT_FAILED)


def add_parsers(sub: Any) -> None:
    """Add the ``demo`` command to ``sub``."""
    p = sub.add_parser("demo", help="run example tools on every built-in backend's emulator",
                       description="Start the emulators on loopback and hold a scripted "
                       "conversation on each backend, printing a transcript per backend.")
    p.add_argument("--dialect", action="append", help="only this dialect (repeatable)")
    p.add_argument("--real", action="store_true",
                   help="use the real services, with credentials from the environment")
    p.add_argument("--show-wire", action="store_true", help="print the wire payloads too")
    p.set_defaults(func=cmd_demo)
