"""What a dialect author imports: the `Dialect` base class, the serve seam, the registry, the hooks.

A dialect plugin subclasses `Dialect` (its translations: the core contract), registers an
instance from its `toolbridge_register_dialects` hook (marked with `hookimpl`) and is found
through the ``toolbridge`` entry-point group, or registered at run time with `register_plugin`.
What else it can do it declares through capability hooks (`Serves`, `Emulates`, `Demos`,
`MigratesTo`, `MigratesFrom`, `ApprovesItems`; `capabilities` collects them). Every hook is
declared in `toolbridge.plugin.hookspecs`. To be served by the core driver a dialect gives a
`Connection` and a per-conversation `Backend` (their contract: docs/serving.md, and the `Backend`
docstrings), configured by its typed `ServeOptions`; argument text is decoded with the bounded
`read_arguments`. A dialect may also read and write the runtime's per-call `CallRecord`
(`Dialect.read_records`, `write_records`, `decode_record`: optional, their defaults adapt the
public methods). A new dialect's guide is docs/plugins.md; the conformance kit
(`toolbridge.testing.check_dialect`, `toolbridge.testing.check_backend`) checks it.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes, lazy_module, lazy_options
from .._lazy import moved_attributes as _moved_attributes
from ._approval_items import ApprovalItemsCapability, ApprovesItems, BackendApproval
from ._capabilities import (
    Capabilities,
    DemoCapability,
    Demos,
    Emulates,
    EmulatorCapability,
    MigratesFrom,
    MigratesTo,
    MigrationSourceCapability,
    MigrationTargetCapability,
    ServeCapability,
    Serves,
)
from ._dialect import Dialect, DialectLimits, LossPolicy
from ._manager import capabilities, dialects, get_dialect, plugin_manager, register_plugin
from ._registry import DialectRegistry
from .hookspecs import hookimpl

if TYPE_CHECKING:
    from ._arguments import Arguments, read_arguments
    from ._backend import (
        Backend,
        Connection,
        DiscoveringConnection,
        Step,
        StepStatus,
        StreamingBackend,
        Translations,
    )
    from ._limits import (
        MAX_ARGUMENT_BYTES,
        MAX_NESTING_DEPTH,
        MAX_PAYLOAD_BYTES,
        nests_deeper_than,
    )
    from ._options import DialectOptions, OptionHelp, ServeOptions
    from ._record import CallRecord, PendingRecords, Reading, reading
    from ._translated import ImportedTools, PendingCalls, RenderedTools, SkippedTool

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "MAX_NESTING_DEPTH",
    "MAX_PAYLOAD_BYTES",
    "ApprovalItemsCapability",
    "ApprovesItems",
    "Arguments",
    "Backend",
    "BackendApproval",
    "CallRecord",
    "Capabilities",
    "Connection",
    "DemoCapability",
    "Demos",
    "Dialect",
    "DialectLimits",
    "DialectOptions",
    "DialectRegistry",
    "DiscoveringConnection",
    "Emulates",
    "EmulatorCapability",
    "ImportedTools",
    "LossPolicy",
    "MigratesFrom",
    "MigratesTo",
    "MigrationSourceCapability",
    "MigrationTargetCapability",
    "OptionHelp",
    "PendingRecords",
    "Reading",
    "PendingCalls",
    "RenderedTools",
    "ServeCapability",
    "ServeOptions",
    "Serves",
    "SkippedTool",
    "Step",
    "StepStatus",
    "StreamingBackend",
    "Translations",
    "capabilities",
    "dialects",
    "get_dialect",
    "hookimpl",
    "lazy_attributes",
    "lazy_module",
    "lazy_options",
    "nests_deeper_than",
    "plugin_manager",
    "read_arguments",
    "reading",
    "register_plugin",
]

# Plugin discovery imports every dialect's package, which needs only `Dialect`, `DialectLimits`
# and the hook markers to define itself: what its translations, its serve backend and its
# options use comes on first access.
_LAZY: dict[str, str] = {
    "Arguments": "._arguments", "read_arguments": "._arguments",
    "Backend": "._backend", "Connection": "._backend", "Step": "._backend",
    "StepStatus": "._backend", "Translations": "._backend",
    "DiscoveringConnection": "._backend", "StreamingBackend": "._backend",
    "MAX_ARGUMENT_BYTES": "._limits", "MAX_NESTING_DEPTH": "._limits",
    "MAX_PAYLOAD_BYTES": "._limits", "nests_deeper_than": "._limits",
    "DialectOptions": "._options", "OptionHelp": "._options", "ServeOptions": "._options",
    "ImportedTools": "._translated", "PendingCalls": "._translated",
    "CallRecord": "._record", "PendingRecords": "._record", "Reading": "._record",
    "reading": "._record",
    "RenderedTools": "._translated", "SkippedTool": "._translated",
}

# Deprecated for one release: only toolbridge declares hooks (a plugin implements them).
_MOVED = {"hookspec": "toolbridge.plugin.hookspecs.hookspec"}

__getattr__ = _moved_attributes(__name__, _MOVED, then=lazy_attributes(__name__, _LAZY))
