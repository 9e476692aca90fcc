"""``toolbridge worker``: a Temporal worker of the fleet (the `toolbridge_temporal` package).

The core never imports the integration at import time: it is loaded when the command runs,
and a missing ``temporal`` extra is a `UsageError` saying what to install.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
from datetime import timedelta
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
    """Add the ``worker`` command to ``sub``."""
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
