"""`ToolContext`: what a handler can learn about the call it is answering."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import ToolCall, ToolDefinition

__all__ = ["ToolContext"]


@dataclass(frozen=True)
class ToolContext:
    """Injected into a handler parameter annotated ``ToolContext``; never part of the schema."""

    call: ToolCall
    """The pending call being answered."""
    tool: ToolDefinition
    """The definition of the tool being run."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """The keyword arguments given to `Toolbox.handle` / `ahandle` (e.g. a user id)."""

    @property
    def call_id(self) -> str:
        """The call's id as the backend sent it."""
        return self.call.id

    @property
    def dialect(self) -> str:
        """Name of the dialect the call came from."""
        return self.call.dialect

    @property
    def conversation(self) -> str:
        """The session or thread of the call."""
        return self.call.conversation
