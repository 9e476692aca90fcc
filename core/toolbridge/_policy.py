"""`LossPolicy`, spelled once: `toolbridge.schema` and `toolbridge.plugin` both export it, and
loading plugins must load no schema code."""

from typing import Literal

__all__ = ["LossPolicy"]

LossPolicy = Literal["allow", "describe", "error", "lossless"]
"""What to do with what a target cannot carry exactly.

``allow``: drop it silently; ``describe``: write it into the node's description; ``error``:
describe, and raise if a loss is not enforced (nothing checks it on arrival); ``lossless``: raise
on any loss, enforced or not.
"""
