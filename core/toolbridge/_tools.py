"""A registered tool: its definition plus how to call its handler."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._signature import FunctionSignature
from .context import ToolContext
from .errors import ArgumentError, ToolDefinitionError
from .model import ToolDefinition

__all__ = ["RegisteredTool", "schema_validator"]


def schema_validator(schema: Mapping[str, Any]) -> Callable[[dict[str, Any]], None]:
    """A compiled JSON Schema check that raises `ArgumentError` listing every violation."""
    import jsonschema  # loaded on first use: keeps `import toolbridge` light

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ToolDefinitionError(f"invalid parameters schema: {exc.message}") from None
    validator = cls(schema)

    def validate(arguments: dict[str, Any]) -> None:
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if errors:
            raise ArgumentError("; ".join(
                f"/{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors
            ), path="")

    return validate


def _context_param(handler: Callable[..., Any]) -> str | None:
    try:
        hints = typing.get_type_hints(handler)
    except Exception:
        hints = {}
    for name, hint in hints.items():
        if hint is ToolContext:
            return name
    return None


@dataclass
class RegisteredTool:
    """A tool definition and its handler, with the argument check compiled once."""

    definition: ToolDefinition
    handler: Callable[..., Any]
    is_async: bool
    inline: bool
    context_param: str | None
    signature: FunctionSignature | None = None
    _validate: Callable[[dict[str, Any]], None] | None = None

    @classmethod
    def from_function(
        cls, definition: ToolDefinition, handler: Callable[..., Any],
        signature: FunctionSignature, inline: bool,
    ) -> RegisteredTool:
        return cls(definition, handler, inspect.iscoroutinefunction(handler), inline,
                   signature.context_param, signature)

    @classmethod
    def from_definition(
        cls, definition: ToolDefinition, handler: Callable[..., Any], inline: bool
    ) -> RegisteredTool:
        if not callable(handler):
            raise ToolDefinitionError(f"tool {definition.name!r}: handler is not callable")
        return cls(definition, handler, inspect.iscoroutinefunction(handler), inline,
                   _context_param(handler))

    def bind(self, arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        """Validate ``arguments`` and build the handler's keyword arguments."""
        if self.signature is not None:
            kwargs = self.signature.bind(arguments)
        else:
            if self._validate is None:
                self._validate = schema_validator(self.definition.parameters)
            self._validate(arguments)
            kwargs = dict(arguments)
        if self.context_param:
            kwargs[self.context_param] = context
        return kwargs
