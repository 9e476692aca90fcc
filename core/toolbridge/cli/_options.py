"""What the commands share: exit codes, and reading their arguments.

``MODULE:TOOLBOX`` specs, ``key=value`` options (values read as JSON when they parse) and the
``--fault`` settings of an emulator.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..toolbox import Toolbox

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "add_command", "load_toolbox",
           "parse_fault_options",
           "parse_key_values", "print_json"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_command(sub: Any, name: str, summary: str, description: str, *examples: str,
                **options: Any) -> Any:
    """A subcommand whose ``--help`` has a description and examples."""
    import argparse

    epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
    return sub.add_parser(name, help=summary, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter, **options)


def load_toolbox(spec: str) -> Toolbox:
    """The `Toolbox` named by ``MODULE:TOOLBOX``, the module imported from the working directory."""
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
    if not hasattr(module, attr):
        raise UsageError(f"module {module_name!r} has no attribute {attr!r}")
    toolbox = getattr(module, attr)
    if not isinstance(toolbox, Toolbox):
        raise UsageError(f"{spec!r} is not a toolbridge.Toolbox (found {type(toolbox).__name__})")
    return toolbox


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def parse_key_values(pairs: Iterable[str], what: str = "option", *,
                     raw: bool = False) -> dict[str, Any]:
    """``["a=1", "b-c=x"]`` -> ``{"a": 1, "b_c": "x"}`` (values read as JSON when they parse;
    ``raw``: kept as text, for typed options that convert them); `UsageError` for a pair
    without ``=``."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{what} {pair!r} must look like name=value")
        name = key.strip().replace("-", "_")
        if raw:
            options[name] = text
            continue
        try:
            options[name] = json.loads(text)
        except ValueError:
            options[name] = text
    return options


def parse_fault_options(options: Iterable[str]) -> dict[str, Any]:
    """Fault settings from ``name=value`` strings (values are JSON, else plain strings); the
    emulator checks them (an unknown name is refused with its list of valid ones)."""
    return parse_key_values(options, "fault option")
