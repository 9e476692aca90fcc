"""Answering calls: the execution pipeline, its executors, result shaping and size limits.

`toolbridge.Toolbox` drives a `Pipeline`. An `Executor` decides where a payload's calls run:
`ThreadExecutor` (the default), `LoopExecutor`, `InlineExecutor`, or your own, given to
``Toolbox(executor=...)``; it sees each call as a `PlannedCall`. Applications import
`SizePolicy` / `Oversize` from here to write an oversize policy, and dialect authors
`output_text` to put an output on their wire (`output_is_json`: whether a ``returns``
schema describes that text). `Approvals` lists and decides the calls that wait for a person
(``toolbox.approvals``).
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes as _lazy_attributes
from ._output import output_is_json, output_text

if TYPE_CHECKING:
    from ._call import PlannedCall
    from ._decide import Approvals
    from ._executors import Executor, InlineExecutor, LoopExecutor, ThreadExecutor
    from ._limits import Oversize, SizePolicy
    from ._pipeline import Pipeline

__all__ = [
    "Approvals", "Executor", "InlineExecutor", "LoopExecutor", "Oversize", "Pipeline",
    "PlannedCall", "SizePolicy", "ThreadExecutor", "output_is_json", "output_text",
]

# Adapters import `output_text` (light); the pipeline, with asyncio, the worker threads and the
# store, loads when a toolbox first needs it.
_LAZY: dict[str, str] = {
    "PlannedCall": "._call", "Approvals": "._decide", "Executor": "._executors",
    "InlineExecutor": "._executors",
    "LoopExecutor": "._executors", "ThreadExecutor": "._executors", "Pipeline": "._pipeline",
    "Oversize": "._limits", "SizePolicy": "._limits",
}


__getattr__ = _lazy_attributes(__name__, _LAZY)
