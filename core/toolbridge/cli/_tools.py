"""``toolbridge dialects``, ``tools`` and ``convert``: what is installed, and tool definitions."""

from __future__ import annotations

import argparse
import json
import sys
import typing
from pathlib import Path
from typing import Any

from ..errors import SchemaConversionError
from ..plugin import LossPolicy, capabilities, dialects, get_dialect
from ._options import EXIT_OK, add_command, load_toolbox, print_json

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
    declared = capabilities()
    for name, dialect in registry.items():
        print(f"{name:<{width}}  plugin {registry.provider(name)}  "
              f"({type(dialect).__module__}.{type(dialect).__name__})")
        print(f"{'':<{width}}  {', '.join(['translations', *declared.of(name)])}")
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

    converted = convert_file(Path(args.file), args.source, args.target, policy=args.policy)
    if args.target == "neutral":
        print_json(converted)
        return EXIT_OK
    print_json(converted["tools"])
    report = {key: converted[key] for key in ("losses", "skipped", "not_converted")
              if key in converted}
    if args.report:
        Path(args.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n",
                                     encoding="utf-8")
        return EXIT_OK
    for tool, losses in report["losses"].items():
        for loss in losses:
            print(f"toolbridge: loss: {tool}: {loss}", file=sys.stderr)
    for entry in report["skipped"]:
        print(f"toolbridge: skipped: {entry}", file=sys.stderr)
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Add the ``dialects``, ``tools`` and ``convert`` commands to ``sub``."""
    p = add_command(sub, "dialects", "list installed dialects and their plugins",
                    "List the installed dialects, each with the plugin providing it.",
                    "toolbridge dialects")
    p.set_defaults(func=cmd_dialects)

    p = add_command(sub, "tools", "print a toolbox's definitions per dialect, with losses",
                    "Print the tool definitions each dialect receives for a toolbox, with the "
                    "schema loss report; exits 1 when a dialect fails --policy.",
                    "toolbridge tools myapp.tools:toolbox",
                    "toolbridge tools myapp.tools:toolbox --dialect google-ces --policy error")
    p.add_argument("toolbox", metavar="MODULE:TOOLBOX")
    p.add_argument("--dialect", action="append", help="only this dialect (repeatable)")
    p.add_argument("--policy", choices=POLICIES, default="describe", help=POLICY_HELP)
    p.set_defaults(func=cmd_tools)

    p = add_command(sub, "convert", "convert a file of tool definitions between dialects",
                    "Read a file of tool definitions in one form and print the tool list the "
                    "target backend takes (ready for agent.tools or "
                    "assistants.create(tools=...)); the loss report and skipped entries go to "
                    "stderr, or to --report FILE as JSON.",
                    "toolbridge convert --from openai-assistants --to google-ces tools.json",
                    "toolbridge convert --from openapi --to openai-agents api.json "
                    "--report losses.json")
    p.add_argument("--from", dest="source", required=True,
                   help="a dialect name, 'neutral' (ToolDefinition JSON) or 'openapi'")
    p.add_argument("--to", dest="target", required=True, help="a dialect name or 'neutral'")
    p.add_argument("--policy", choices=POLICIES, default="describe", help=POLICY_HELP)
    p.add_argument("--report", metavar="FILE",
                   help="write the loss report as JSON here instead of stderr")
    p.add_argument("file", help="JSON file (a list of definitions, or an OpenAPI document)")
    p.set_defaults(func=cmd_convert)
