"""Tool definitions from Python functions: parameters from type hints, text from docstrings."""

from __future__ import annotations

import copy
import inspect
import logging
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from ..errors import ArgumentError, ToolDefinitionError
from ..model import NoTitles, schema_of_model
from ._context import ToolContext

log = logging.getLogger("toolbridge.runtime")

__all__ = ["FunctionSignature", "inspect_function", "validation_message"]


@dataclass(frozen=True)
class FunctionSignature:
    """What toolbridge learned from a function."""

    description: str
    parameters: dict[str, Any]
    returns: dict[str, Any] | None
    context_param: str | None
    args_model: type[BaseModel]
    field_defaults: bool = False
    """Some parameter's default is a pydantic ``Field(...)`` (the FastAPI / ``validate_call``
    idiom): the handler must get every argument from the model, never its own defaults."""

    def bind(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validate ``arguments`` and return the keyword arguments for the function."""
        try:
            parsed = self.args_model.model_validate(arguments)
        except ValidationError as exc:
            raise ArgumentError(validation_message(exc), path="") from None
        return dict(parsed.__dict__)  # exactly the fields: the model forbids extras


def validation_message(exc: ValidationError) -> str:
    """Every violation of a pydantic `ValidationError`, one ``/path: message`` each, compact."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False):
        pointer = "/" + "/".join(str(p) for p in err["loc"]) if err["loc"] else "/"
        parts.append(f"{pointer}: {err['msg']}")
    return "; ".join(parts)


def _is_context(annotation: Any) -> bool:
    return annotation is ToolContext or (
        typing.get_origin(annotation) is typing.Annotated
        and typing.get_args(annotation)[0] is ToolContext
    )


def _first_unschematizable(fields: dict[str, Any]) -> str | None:
    for name, (annotation, _) in fields.items():
        try:
            TypeAdapter(annotation).json_schema()
        except Exception as exc:  # whatever pydantic raises, this is the field to name
            log.debug("parameter %s has no JSON Schema: %s: %s", name, type(exc).__name__, exc)
            return name
    return None


def inspect_function(func: Callable[..., Any], tool_name: str) -> FunctionSignature:
    """Read a function's signature and docstring; mistakes raise `ToolDefinitionError`."""
    where = f"tool {tool_name!r} (function {getattr(func, '__qualname__', func)!r})"
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(f"{where}: cannot resolve type hints: {exc}") from exc
    doc = docstring_parser.parse(inspect.getdoc(func) or "")
    param_docs = {p.arg_name: p.description for p in doc.params if p.description}
    fields: dict[str, Any] = {}
    context_param = None
    field_defaults = False
    for name, param in inspect.signature(func).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            star = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise ToolDefinitionError(
                f"{where}: parameter {star}{name} is not allowed; name every argument the "
                "model may pass"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"{where}: parameter {name!r} is positional-only; tools are called by keyword"
            )
        annotation = hints.get(name, Any)
        if _is_context(annotation):
            context_param = name
            continue
        # Where a parameter's description comes from: Field(description=...), then a bare
        # string in Annotated[...], then the docstring.
        text = _annotated_description(annotation) or param_docs.get(name)
        if isinstance(param.default, FieldInfo):
            field = copy.copy(param.default)  # `q: str = Field(..., description="...")`
            if field.description is None and text and not _annotated_field(annotation):
                field.description = text
            field_defaults = True
        else:
            default = ... if param.default is param.empty else param.default
            field = Field(default, description=text) if text and not _annotated_field(
                annotation) else Field(default)
        fields[name] = (annotation, field)
    try:
        args_model = create_model(
            f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
        )
        parameters = schema_of_model(args_model)
    except Exception as exc:
        culprit = _first_unschematizable(fields)
        which = f"parameter {culprit!r}" if culprit else "a parameter"
        raise ToolDefinitionError(
            f"{where}: the type of {which} cannot become a JSON Schema ({exc}). Use "
            "JSON-friendly types: str, int, float, bool, list, dict, Literal, Enum, pydantic "
            "models, dataclasses, TypedDict"
        ) from None
    parameters.setdefault("properties", {})
    returns = None
    ret = hints.get("return", Any)
    if ret is not Any and ret is not None and ret is not type(None):
        try:
            returns = TypeAdapter(ret).json_schema(schema_generator=NoTitles)
            returns.pop("title", None)
        except Exception as exc:  # an unschematizable return type loses `returns`, not the tool
            log.warning("tool %s: its return type has no JSON Schema (%s: %s); the definition "
                        "has no returns", tool_name, type(exc).__name__, exc)
            returns = None
    description = "\n\n".join(
        part for part in (doc.short_description, doc.long_description) if part
    )
    return FunctionSignature(description, parameters, returns, context_param, args_model,
                             field_defaults)


def _annotated_description(annotation: Any) -> str | None:
    """The first bare string in ``Annotated[T, "text", ...]`` (a common way to describe a
    parameter, read by other tool libraries too)."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return None
    return next((m for m in annotation.__metadata__ if isinstance(m, str) and m), None)


def _annotated_field(annotation: Any) -> bool:
    """Whether ``Annotated[T, Field(description=...)]`` already describes the parameter."""
    return typing.get_origin(annotation) is typing.Annotated and any(
        isinstance(m, FieldInfo) and m.description for m in annotation.__metadata__)
