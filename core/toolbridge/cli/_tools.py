"""``toolbridge dialects``, ``tools`` and ``convert``: what is installed, and tool definitions."""

from __future__ import annotations

import argparse
import typing
from pathlib import Path
from typing import Any

from ..errors import SchemaConversionError
from ..plugin import LossPolicy, dialects, get_dialect
from ._options import EXIT_OK, load_toolbox, print_json

__all__ = ["add_parsers"]

POLICIES = list(typing.get_args(LossPolicy))
POLICY_HELP = ("what to do with what a dialect's schemas cannot carry: 'allow' drops it, "
               "'describe' (default) writes it into the description, 'error' also fails on a "
               "loss nothing checks on arrival, 'lossless' fails on any loss")


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
    toolbox = load_toolbox(args.toolbox)
    names = args.dialect or list(dialects())
    for name in names:
        get_dialect(name)  # an unknown name is a command-line error, before any output
    failed: list[tuple[str, SchemaConversionError]] = []
    for name in names:
        try:
            rendered = toolbox.render(name, policy=args.policy)
        except SchemaConversionError as exc:
            # Print what the dialect would get anyway, then go on: every dialect is shown.
            failed.append((name, exc))
            rendered = toolbox.render(name, policy="describe")
        print(f"== {name}")
        print_json(rendered.definitions)
        losses = [(tool, loss) for tool, items in rendered.losses.items() for loss in items]
        if losses:
            print(f"-- schema losses ({len(losses)})")
            for tool, loss in losses:
                print(f"   {tool}: {loss}")
        else:
            print("-- schema losses: none")
        if failed and failed[-1][0] == name:
            print(f"-- fails --policy {args.policy}: {failed[-1][1]}")
    if failed:
        listed = ", ".join(name for name, _ in failed)
        raise SchemaConversionError(f"--policy {args.policy}: {len(failed)} of {len(names)} "
                                    f"dialect(s) fail it: {listed} (see each dialect's report "
                                    "above)")
    return EXIT_OK


def cmd_convert(args: argparse.Namespace) -> int:
    from ._convert import convert_file

    print_json(convert_file(Path(args.file), args.source, args.target, policy=args.policy))
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Add the ``dialects``, ``tools`` and ``convert`` commands to ``sub``."""
    p = sub.add_parser("dialects", help="list installed dialects and their plugins")
    p.set_defaults(func=cmd_dialects)

    p = sub.add_parser("tools", help="print a toolbox's definitions per dialect, with losses")
    p.add_argument("toolbox", metavar="MODULE:TOOLBOX")
    p.add_argument("--dialect", action="append", help="only this dialect (repeatable)")
    p.add_argument("--policy", choices=POLICIES, default="describe", help=POLICY_HELP)
    p.set_defaults(func=cmd_tools)

    p = sub.add_parser("convert", help="convert a file of tool definitions between dialects")
    p.add_argument("--from", dest="source", required=True,
                   help="a dialect name, 'neutral' (ToolDefinition JSON) or 'openapi'")
    p.add_argument("--to", dest="target", required=True, help="a dialect name or 'neutral'")
    p.add_argument("--policy", choices=POLICIES, default="describe", help=POLICY_HELP)
    p.add_argument("file", help="JSON file (a list of definitions, or an OpenAPI document)")
    p.set_defaults(func=cmd_convert)
