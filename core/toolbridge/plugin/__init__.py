"""What a dialect author imports: the `Dialect` base class, the serve seam, the registry, the hooks.

A dialect plugin subclasses `Dialect`, registers an instance from its
`toolbridge_register_dialects` hook (marked with `hookimpl`) and is found through the
``toolbridge`` entry-point group, or registered at run time with `register_plugin`. Every hook
is declared in `toolbridge.plugin.hookspecs`. To be served by the core driver a dialect gives a
`Connection` and a per-conversation `Backend` (their contract: docs/serving.md, and the
`Backend` docstrings), configured by its typed `ServeOptions`; argument text is decoded with
the bounded `read_arguments`.
"""

from .._lazy import lazy_attributes, lazy_module
from ._arguments import Arguments, read_arguments
from ._backend import Backend, Connection, Step, StepStatus, Translations
from ._dialect import (
    Dialect,
    DialectLimits,
    ImportedTools,
    LossPolicy,
    RenderedTools,
    SkippedTool,
)
from ._limits import MAX_ARGUMENT_BYTES, MAX_NESTING_DEPTH, MAX_PAYLOAD_BYTES, nests_deeper_than
from ._manager import dialects, get_dialect, plugin_manager, register_plugin
from ._options import DialectOptions, OptionHelp, ServeOptions, lazy_options
from ._pending import PendingCalls
from ._registry import DialectRegistry
from .hookspecs import hookimpl, hookspec

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "MAX_NESTING_DEPTH",
    "MAX_PAYLOAD_BYTES",
    "Arguments",
    "Backend",
    "Connection",
    "Dialect",
    "DialectLimits",
    "DialectOptions",
    "DialectRegistry",
    "ImportedTools",
    "LossPolicy",
    "OptionHelp",
    "PendingCalls",
    "RenderedTools",
    "ServeOptions",
    "SkippedTool",
    "Step",
    "StepStatus",
    "Translations",
    "dialects",
    "get_dialect",
    "hookimpl",
    "hookspec",
    "lazy_attributes",
    "lazy_module",
    "lazy_options",
    "nests_deeper_than",
    "plugin_manager",
    "read_arguments",
    "register_plugin",
]
