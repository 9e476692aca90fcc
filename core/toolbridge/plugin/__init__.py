"""What a dialect author imports: the `Dialect` base class, the registry, and the hooks.

A dialect plugin subclasses `Dialect`, registers an instance from its
`toolbridge_register_dialects` hook (marked with `hookimpl`) and is found through the
``toolbridge`` entry-point group, or registered at run time with `register_plugin`. Every hook
is declared in `toolbridge.plugin.hookspecs`.
"""

from ._dialect import (
    Dialect,
    DialectLimits,
    ImportedTools,
    LossPolicy,
    PendingCalls,
    RenderedTools,
    SkippedTool,
)
from ._limits import MAX_ARGUMENT_BYTES, MAX_NESTING_DEPTH, MAX_PAYLOAD_BYTES, nests_deeper_than
from ._manager import dialects, get_dialect, plugin_manager, register_plugin
from ._registry import DialectRegistry
from .hookspecs import hookimpl, hookspec

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "MAX_NESTING_DEPTH",
    "MAX_PAYLOAD_BYTES",
    "Dialect",
    "DialectLimits",
    "DialectRegistry",
    "ImportedTools",
    "LossPolicy",
    "PendingCalls",
    "RenderedTools",
    "SkippedTool",
    "dialects",
    "get_dialect",
    "hookimpl",
    "hookspec",
    "nests_deeper_than",
    "plugin_manager",
    "register_plugin",
]
