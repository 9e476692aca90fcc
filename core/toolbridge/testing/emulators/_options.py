"""`EmulatorOptions`: what every emulator takes (a dialect's emulator adds its own fields)."""

from __future__ import annotations

from typing import Any

from ...plugin import DialectOptions

__all__ = ["EmulatorOptions"]


class EmulatorOptions(DialectOptions):
    """Options of an emulated backend (`toolbridge.plugin.Emulates`)."""

    script: Any = None
    """The scripted model: a `Script`, its dict, JSON text or a JSON file's path."""
    faults: Any = None
    """Faults to inject: the emulator's `Faults` or a dict (unknown names are refused)."""
