"""``toolbridge emulate`` and ``serve``: an emulated backend, and a worker answering a backend.

``serve`` runs the core driver (`toolbridge.serve`) for any dialect: it answers what the
named conversation(s) wait for, or holds a conversation with ``--message`` / ``--stdin``,
and prints the same transcript shape for every dialect (``--json``: the whole transcript).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import UsageError
from ..plugin import Dialect, capabilities, dialects, get_dialect
from ._options import (
    EXIT_FAILED,
    EXIT_OK,
    add_command,
    load_toolbox,
    parse_fault_options,
    parse_key_values,
    print_json,
)

__all__ = ["add_parsers", "option_help"]


def cmd_emulate(args: argparse.Namespace) -> int:
    emulates = capabilities().emulator(get_dialect(args.dialect).name)
    values: dict[str, Any] = parse_key_values(args.option, raw=True)
    values.update(script=args.script, faults=parse_fault_options(args.fault))
    emulator = emulates.create(values)
    try:
        running_emulator = emulator.run(args.host, args.port)
        running = running_emulator.__enter__()
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; "
                         "pick another --port (0 picks a free one)") from None
    with contextlib.ExitStack() as stack:
        stack.push(running_emulator)
        try:
            print(f"{args.dialect} emulator on {running.base_url}\n"
                  f"  {emulates.sdk_hint(running.base_url)}\n"
                  f"  journal: {running.base_url}/_emulator/journal\n"
                  "Ctrl-C stops it", flush=True)
            while True:
                asyncio.run(asyncio.sleep(3600))
        except KeyboardInterrupt:
            pass
    return EXIT_OK


def _progress(count: list[int]) -> Any:
    def report(transcript: Any, result: Any, seconds: float) -> None:
        count[0] += 1
        outcome = "ok" if result.success else f"error: {str(result.error)[:80]}"
        where = f" [{transcript.conversation}]" if transcript.conversation else ""
        sys.stderr.write(f"[{count[0]}] {result.call.name} ({result.call.id}){where} {outcome} "
                         f"in {seconds * 1000:.0f} ms\n")  # one write: lines never interleave
        sys.stderr.flush()

    return report


def _show(transcript: Any, as_json: bool) -> None:
    if as_json:
        print_json(transcript.to_dict())
    else:
        print(transcript.render(), flush=True)


def cmd_serve(args: argparse.Namespace) -> int:
    from ..serve import DriverSettings, Worker, aanswer_pending, aconverse

    toolbox = load_toolbox(args.toolbox)
    dialect = get_dialect(args.dialect)
    serving = capabilities().serving(dialect.name)
    options = serving.options.parse(parse_key_values(args.option, raw=True))
    if args.store:
        from ..store import open_store

        toolbox.store = open_store(args.store)
    messages: list[str] = list(args.message)
    if args.stdin:
        messages += [line.strip() for line in sys.stdin if line.strip()]
    settings = DriverSettings(on_answer=None if args.quiet else _progress([0]),
                              max_rounds=args.max_rounds)
    if not messages and not serving.waits:
        raise UsageError(f"{dialect.name} has nothing to wait on: its backend keeps no pending "
                         "calls between requests. Hold a conversation with --message/--stdin, "
                         "or answer calls in your app with toolbox.handle(...)")
    print(f"serving {args.dialect} with tools {', '.join(toolbox.names())}", file=sys.stderr,
          flush=True)
    try:
        if messages:
            if len(args.conversation) > 1 or args.discover:
                raise UsageError("--message/--stdin hold one conversation: give at most one "
                                 "--conversation, and no --discover")
            conversation = args.conversation[0] if args.conversation else None
            transcript = asyncio.run(aconverse(toolbox, dialect, messages, options,
                                               conversation=conversation, settings=settings))
            _show(transcript, args.json)
            return EXIT_OK if transcript.ok else EXIT_FAILED
        if len(args.conversation) <= 1 and not args.discover:
            conversation = args.conversation[0] if args.conversation else None
            transcript = asyncio.run(aanswer_pending(toolbox, dialect, options,
                                                     conversation=conversation, settings=settings))
            _show(transcript, args.json)
            return EXIT_OK if transcript.ok else EXIT_FAILED
        failed = [0]

        def done(transcript: Any) -> None:
            failed[0] += not transcript.ok
            _show(transcript, args.json)

        worker = Worker(toolbox, dialect, options, concurrency=args.concurrency,
                        settings=DriverSettings(keep=False, on_answer=settings.on_answer,
                                                max_rounds=args.max_rounds),
                        on_done=done)
        asyncio.run(worker.run(args.conversation, discover=args.discover))
        return EXIT_FAILED if failed[0] else EXIT_OK
    except KeyboardInterrupt:
        return EXIT_OK


def option_help(dialect: Dialect) -> str:
    """The ``-o`` options of ``dialect``'s serve backend, one per line with its docstring."""
    if dialect.name not in {s.dialect for s in capabilities().serve_backends()}:
        return f"{dialect.name} declares no serve backend"
    lines = [f"options of {dialect.name} (-o KEY=VALUE):"]
    for item in capabilities().serving(dialect.name).options.describe():
        lines.append(f"  {item.name} ({item.type}, default {item.default})")
        if item.doc:
            lines.extend(f"      {line}" for line in item.doc.splitlines())
    return "\n".join(lines)


class _ServeHelp(argparse.Action):
    """``--help``: the command's help, then the options of the dialect named before it (or
    of every installed dialect)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        parser.print_help()
        name = getattr(namespace, "dialect", None)
        chosen = [name] if isinstance(name, str) and name in dialects() else sorted(dialects())
        for each in chosen:
            print("\n" + option_help(get_dialect(each)))
        parser.exit()


def add_parsers(sub: Any) -> None:
    """Add the ``emulate`` and ``serve`` commands to ``sub``."""
    p = add_command(sub, "emulate", "run a dialect's emulated backend on loopback",
                    "Run a dialect's emulator until Ctrl-C; prints its base URL, the one the "
                    "official SDK takes, and its journal's URL.",
                    "toolbridge emulate openai-agents --port 8080",
                    "toolbridge emulate google-ces --script script.json --fault latency_ms=50")
    p.add_argument("dialect")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--script", help="JSON script file for the scripted model")
    p.add_argument("--fault", action="append", default=[], metavar="NAME=VALUE",
                   help="inject a fault, e.g. latency_ms=50 or drop_stream_after=3 (unknown "
                   "names are refused with the emulator's list)")
    p.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                   help="an emulator option (e.g. number_style=float for google-ces)")
    p.set_defaults(func=cmd_emulate)

    p = add_command(sub, "serve", "run a worker answering a backend's calls",
                    "Answer what a backend's conversation waits for (or hold one with "
                    "--message/--stdin) through the one serve driver; prints the transcript and "
                    "exits 1 when a conversation did not complete. --help after the dialect "
                    "lists its -o options.",
                    "toolbridge serve openai-agents myapp:toolbox -o session_id=sess_1",
                    "toolbridge serve openai-chat myapp:toolbox -m 'weather in Lima?'",
                    "toolbridge serve openai-assistants --help", add_help=False)
    p.add_argument("--help", "-h", action=_ServeHelp,
                   help="show this help and the dialect's -o options, then exit")
    p.add_argument("dialect")
    p.add_argument("toolbox", metavar="MODULE:TOOLBOX")
    p.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                   help="a dialect option (base_url, session_id, ...): see --help")
    p.add_argument("--message", "-m", action="append", default=[], metavar="TEXT",
                   help="hold a conversation: send this user message (repeatable)")
    p.add_argument("--stdin", action="store_true",
                   help="hold a conversation: one user message per line of stdin")
    p.add_argument("--conversation", "-c", action="append", default=[], metavar="ID",
                   help="the conversation to serve (repeatable: served at once)")
    p.add_argument("--discover", action="store_true",
                   help="also serve the conversations the backend lists as waiting (Agents: "
                   "sessions with the metadata option); runs until Ctrl-C")
    p.add_argument("--concurrency", type=int, default=64,
                   help="conversations served at once (default 64)")
    p.add_argument("--max-rounds", type=int, default=32,
                   help="rounds of calls per turn before it ends incomplete (default 32)")
    p.add_argument("--json", action="store_true", help="print the whole transcript as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no line per answered call")
    p.add_argument("--store", metavar="URL",
                   help="result store for this worker, e.g. sqlite:///results.db (default: the "
                   "toolbox's own); it also keeps the conversations' checkpoints")
    p.set_defaults(func=cmd_serve)
