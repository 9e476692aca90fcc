"""What a dialect's translations return: the pending calls of a payload, the rendered tool
list, the tools read back from one (the dialects, the runtime and the serve driver share them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import SchemaConversionError
from ..model import ToolCall, ToolDefinition

__all__ = ["ImportedTools", "PendingCalls", "RenderedTools", "SkippedTool"]


@dataclass(frozen=True)
class PendingCalls:
    """What a backend payload asks of us."""

    calls: tuple[ToolCall, ...]
    """Function calls to answer."""
    unhandled: tuple[Mapping[str, Any], ...] = ()
    """Other required actions (approvals, reconnections) left to the caller, never dropped."""
    reason: str = ""
    """Why nothing is pending, when nothing is, in the payload's words (e.g. an Assistants
    run whose status is ``completed``); empty when calls or actions wait."""


@dataclass(frozen=True)
class RenderedTools:
    """Tool definitions in a dialect's wire form, with what the schema conversion lost."""

    definitions: list[dict[str, Any]]
    losses: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    """Per tool name, the `SchemaLoss` entries of its conversion (empty when lossless)."""

    @classmethod
    def each(
        cls, tools: Sequence[ToolDefinition],
        render: Callable[[ToolDefinition], tuple[dict[str, Any], tuple[Any, ...]]],
    ) -> RenderedTools:
        """Render every tool with ``render`` (its wire form and its losses); gather the report.

        A tool whose schema fails the loss policy does not stop the others: one
        `SchemaConversionError` then names every such tool with its losses.
        """
        definitions: list[dict[str, Any]] = []
        losses: dict[str, tuple[Any, ...]] = {}
        failed: list[tuple[str, SchemaConversionError]] = []
        for tool in tools:
            try:
                definition, lost = render(tool)
            except SchemaConversionError as exc:
                failed.append((tool.name, exc))
                continue
            definitions.append(definition)
            if lost:
                losses[tool.name] = lost
        if len(failed) == 1:
            name, error = failed[0]
            raise SchemaConversionError(f"tool {name!r}: {error}", error.losses)
        if failed:
            raise SchemaConversionError(
                f"{len(failed)} tools fail the loss policy:\n" + "\n".join(
                    f"tool {name!r}: {error}" for name, error in failed),
                [loss for _, error in failed for loss in error.losses])
        return cls(definitions, losses)


@dataclass(frozen=True)
class SkippedTool:
    """An entry of a backend's tool list that has no neutral form, left out of an import."""

    index: int
    """Its position in the list read."""
    kind: str
    """What it is, in the backend's words (``code_interpreter``, ``file_search``, ...)."""
    reason: str
    """Why it was left out."""

    def __str__(self) -> str:
        return f"tools[{self.index}] ({self.kind}): skipped ({self.reason})"


@dataclass(frozen=True)
class ImportedTools:
    """Neutral definitions read from a backend's tool list, and the entries left out."""

    definitions: list[ToolDefinition]
    skipped: tuple[SkippedTool, ...] = ()
