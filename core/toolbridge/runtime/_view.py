"""`ToolboxView`: what the runtime reads from a `toolbridge.Toolbox`.

A protocol, so that the runtime never imports ``toolbox`` (which imports the runtime): the
toolbox passes itself in, and mypy checks that it fits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..store import ResultStore
    from ..tools import RegisteredTool
    from ._limits import SizePolicy

__all__ = ["ToolboxView"]


class ToolboxView(Protocol):
    """The tools and settings of a `toolbridge.Toolbox` that answering its calls needs."""

    @property
    def _tools(self) -> dict[str, RegisteredTool]: ...
    @property
    def store(self) -> ResultStore | None: ...
    @property
    def max_concurrency(self) -> int: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def error_formatter(self) -> Callable[[BaseException], str]: ...
    @property
    def oversize(self) -> SizePolicy: ...

    def names(self) -> list[str]:
        """Names of the registered tools, in registration order."""
        ...
