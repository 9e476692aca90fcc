"""Answering calls: the execution pipeline, its executors, result shaping and size limits.

`toolbridge.Toolbox` drives a `Pipeline`. An `Executor` decides where a payload's calls run:
`ThreadExecutor` (the default), `LoopExecutor`, `InlineExecutor`, or your own, given to
``Toolbox(executor=...)``; it sees each call as a `PlannedCall`. Applications import
`SizePolicy` / `Oversize` from here to write an oversize policy, and dialect authors
`output_text` to put an output on their wire.
"""

from ._call import PlannedCall
from ._executors import Executor, InlineExecutor, LoopExecutor, ThreadExecutor
from ._limits import Oversize, SizePolicy
from ._output import output_text
from ._pipeline import Pipeline

__all__ = [
    "Executor", "InlineExecutor", "LoopExecutor", "Oversize", "Pipeline", "PlannedCall",
    "SizePolicy", "ThreadExecutor", "output_text",
]
