"""Answering calls: the execution pipeline, its thread pools, result shaping and size limits.

`toolbridge.Toolbox` drives it; applications import `SizePolicy` / `Oversize` from here to
write an oversize policy, and dialect authors `output_text` to put an output on their wire.
"""

from ._limits import Oversize, SizePolicy
from ._output import output_text
from ._pipeline import execute_calls, execute_calls_sync

__all__ = ["Oversize", "SizePolicy", "execute_calls", "execute_calls_sync", "output_text"]
