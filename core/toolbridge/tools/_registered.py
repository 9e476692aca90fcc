"""A registered tool: its definition plus how to call its handler."""

from __future__ import annotations

import inspect
import logging
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..errors import ArgumentError, SchemaConversionError, ToolDefinitionError, validation_text
from ..model import ToolCall, ToolDefinition
from ._context import ToolContext
from ._handlers import handler_mismatches
from ._signature import FunctionSignature, validation_message

__all__ = ["NeedsApproval", "RegisteredTool", "schema_validator"]

log = logging.getLogger("toolbridge.runtime")


def schema_validator(schema: Mapping[str, Any]) -> Callable[[Any], None]:
    """A compiled JSON Schema check that raises `ArgumentError` listing every violation.

    The verdict is the `jsonschema` package's: a fast validator (jsonschema-rs, when installed)
    accepts the common case, and every rejection is confirmed and explained by `jsonschema`, so
    the two can never disagree on a rejection and the messages carry `jsonschema`'s JSON paths.
    The same holds for the schema itself against its metaschema (`ToolDefinitionError`).
    """
    import jsonschema  # loaded on first use: keeps `import toolbridge` light

    from ..schema._convert import fast_valid, patterns_compile
    from ..schema._walk import check_bounds

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:  # the metaschema check, with its formats: jsonschema-rs and `re` accept it first
        check_bounds(schema)
        checked = fast_valid(schema) and patterns_compile(schema)
    except SchemaConversionError:
        checked = False  # deeper than the bound: `jsonschema` decides
    try:
        if not checked:
            cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ToolDefinitionError(f"invalid parameters schema: {exc.message}") from None
    except RecursionError:
        raise ToolDefinitionError("the parameters schema is nested too deeply") from None
    reference = cls(schema)
    fast = _fast_check(schema)

    def explain(arguments: Any) -> None:
        try:
            errors = [(_pointer(e), e.message) for e in reference.iter_errors(arguments)]
        except RecursionError:
            raise ArgumentError("the arguments nest too deeply to be checked", path="") from None
        if errors:
            raise ArgumentError("; ".join(
                f"/{'/'.join(str(p) for p in path)}: {message}"
                for path, message in sorted(errors, key=lambda e: [str(p) for p in e[0]])
            ), path="")

    if fast is None:
        return explain

    def validate(arguments: Any) -> None:
        try:
            accepted = fast(arguments)
        except (ValueError, TypeError, OverflowError):  # e.g. a lone surrogate, 10**400
            accepted = False  # the reference decides, and explains
        if not accepted:
            explain(arguments)

    return validate


def _pointer(error: Any) -> list[Any]:
    """The error's JSON path; for a missing required property, the property's own path."""
    path = list(error.absolute_path)
    if error.validator == "required" and isinstance(error.validator_value, list):
        for name in error.validator_value:
            if error.message == f"{name!r} is a required property":
                path.append(name)
                break
    return path


def _fast_check(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """jsonschema-rs's ``is_valid`` for ``schema``, or ``None`` when it is absent or refuses it."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    if _diverges(schema):
        return None  # keep the reference verdict exact where the two may disagree
    try:
        # jsonschema treats "format" as an annotation unless asked; do the same.
        checker: Callable[[Any], bool] = jsonschema_rs.validator_for(
            dict(schema), validate_formats=False).is_valid
    except Exception as exc:  # what Rust refuses, the reference checks
        log.debug("jsonschema-rs refuses a tool schema (%s: %s); jsonschema checks it",
                  type(exc).__name__, exc)
        return None
    return checker


def _diverges(node: Any) -> bool:
    """Whether ``node`` uses a keyword whose verdict may differ between Rust and Python.

    Plain patterns (no escapes, no ``(?`` groups) only differ where Rust is the stricter one
    (``$`` before a final newline, ``.`` and line breaks): a Rust rejection is re-checked by
    the reference, so those stay exact.
    """
    if isinstance(node, dict):
        patterns = [node.get("pattern")]
        if isinstance(node.get("patternProperties"), dict):
            patterns.extend(node["patternProperties"])
        if any(isinstance(p, str) and ("\\" in p or "(?" in p or "{," in p) for p in patterns):
            return True
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return True  # never let the fast validator fetch a remote schema
        if isinstance(node.get("multipleOf"), float):
            return True  # jsonschema's float division rejects 0.07 for 0.01; Rust may not
        return any(_diverges(v) for k, v in node.items() if k not in ("enum", "const"))
    if isinstance(node, list):
        return any(_diverges(v) for v in node)
    return False


def _accept(arguments: Any) -> None:
    """A check that accepts everything."""


_PLAIN_TYPES = (str, int, float, bool)


def _plain_types(signature: FunctionSignature) -> dict[str, frozenset[type]] | None:
    """For a function whose parameters are all ``str``, ``int``, ``float`` or ``bool`` (or one
    of them ``| None``) with no constraints: the value types pydantic returns unchanged, per
    parameter; else ``None``.

    Such a function's schema says only that: each property's JSON type, which are required,
    and no others. So arguments holding every required name, no other name, and values of
    exactly those types are what the schema accepts and what pydantic returns unchanged: they
    skip both (omitted parameters take the function's own defaults, which are the model's).
    Anything else (an ``int`` for a ``float``, a missing name) goes the general way.
    """
    if signature.field_defaults:
        return None  # omitted arguments would take the function's defaults: `FieldInfo`s
    plain: dict[str, frozenset[type]] = {}
    for name, info in signature.args_model.model_fields.items():
        annotation = info.annotation
        if info.metadata or info.alias is not None:
            return None
        if isinstance(annotation, type) and annotation in _PLAIN_TYPES:
            plain[name] = frozenset((annotation,))
            continue
        members = typing.get_args(annotation)
        if not (typing.get_origin(annotation) in (typing.Union, types.UnionType)
                and len(members) == 2 and type(None) in members):
            return None
        other = members[0] if members[1] is type(None) else members[1]
        if other not in _PLAIN_TYPES:
            return None
        plain[name] = frozenset((other, type(None)))
    return plain


def _context_param(handler: Callable[..., Any]) -> str | None:
    try:
        hints = typing.get_type_hints(handler)
    except Exception as exc:  # unresolvable annotations: no ToolContext can be asked for
        log.warning("handler %s: its type hints cannot be resolved (%s: %s); it is given no "
                    "ToolContext", getattr(handler, "__qualname__", handler), type(exc).__name__,
                    exc)
        hints = {}
    for name, hint in hints.items():
        if hint is ToolContext:
            return name
    return None



NeedsApproval = bool | Callable[[ToolCall], bool]
"""A tool's ``needs_approval``: always, never, or a predicate over the call."""

@dataclass
class RegisteredTool:
    """A tool definition and its handler, with the argument check compiled once."""

    definition: ToolDefinition
    handler: Callable[..., Any]
    is_async: bool
    inline: bool
    context_param: str | None
    signature: FunctionSignature | None = None
    _validate: Callable[[Any], None] | None = None
    _plain: dict[str, frozenset[type]] | None = None
    """Per parameter, the exact types pydantic passes through unchanged (see `_plain_types`)."""
    _required: tuple[str, ...] = ()
    side_effects: bool = field(init=False, default=False)
    """The definition's flag, read on every call (a plain attribute reads faster)."""
    timeout: float | None = field(init=False, default=None)
    """The definition's timeout, read on every call."""
    needs_approval: NeedsApproval = field(init=False, default=False)
    """Whether a person must approve a call first: ``True``, or a predicate over the call."""
    reconciles: bool = field(init=False, default=False)
    """Whether a call a gone worker had entered is reconciled, not run again: side effects
    whose downstream does not honour the idempotency key."""

    def __post_init__(self) -> None:
        self.side_effects = self.definition.side_effects
        self.reconciles = self.side_effects and not self.definition.idempotent
        self.timeout = self.definition.timeout

    @classmethod
    def from_function(
        cls, definition: ToolDefinition, handler: Callable[..., Any],
        signature: FunctionSignature, inline: bool,
    ) -> RegisteredTool:
        return cls(definition, handler, inspect.iscoroutinefunction(handler), inline,
                   signature.context_param, signature)

    @classmethod
    def from_definition(
        cls, definition: ToolDefinition | Mapping[str, Any], handler: Callable[..., Any],
        inline: bool
    ) -> RegisteredTool:
        """A hand-written definition (or its JSON form) with its handler, both checked.

        The schema must be valid JSON Schema (and nested at most `MAX_DEPTH` levels), and the
        handler able to take what it allows (see `handler_mismatches`); else
        `ToolDefinitionError` names the tool and every parameter that does not fit.
        """
        from ..schema import normalize_schema  # lazy: keeps `import toolbridge` light
        from ..schema._walk import check_bounds

        definition = _definition_of(definition)
        name = definition.name
        if not callable(handler):
            raise ToolDefinitionError(f"tool {name!r}: handler is not callable")
        try:
            check_bounds(definition.parameters, what="its parameters schema")
            normalize_schema(definition.parameters)  # every $ref resolves, inside the schema
            validate = schema_validator(definition.parameters)
        except (ToolDefinitionError, SchemaConversionError) as exc:
            raise ToolDefinitionError(f"tool {name!r}: {exc}") from None
        context_param = _context_param(handler)
        problems = handler_mismatches(definition, handler, context_param)
        if problems:
            what = getattr(handler, "__qualname__", None) or type(handler).__name__
            raise ToolDefinitionError(
                f"tool {name!r}: the handler {what} cannot take the arguments its schema "
                "allows: " + "; ".join(problems), [f"tool {name!r}: {p}" for p in problems])
        return cls(definition, handler, inspect.iscoroutinefunction(handler), inline,
                   context_param, None, validate)

    def _compile(self) -> Callable[[Any], None]:
        """The schema check, compiled once (on first use for function tools: compiling
        imports jsonschema, which registering a tool should not)."""
        try:
            return schema_validator(self.definition.parameters)
        except ToolDefinitionError as exc:
            if self.signature is None:
                raise
            log.warning("tool %s: its generated schema cannot be compiled (%s); its arguments "
                        "are checked by pydantic alone", self.definition.name, exc)
            return _accept

    def bind_plain(self, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """A copy of ``arguments`` when they are plain for this tool (see `_plain_types`): the
        schema accepts them and pydantic would return them unchanged; else ``None`` (then
        `bind` decides, and reports)."""
        plain = self._plain
        if plain is None:
            return None
        for name, value in arguments.items():
            if type(value) not in plain.get(name, ()):
                return None
        for name in self._required:
            if name not in arguments:
                return None
        return dict(arguments)

    def bind(self, arguments: dict[str, Any], context: ToolContext | None, *,
             not_plain: bool = False) -> dict[str, Any]:
        """Validate ``arguments`` and build the handler's keyword arguments.

        ``context`` is injected when the handler asks for it (it may be ``None`` otherwise).
        ``not_plain``: `bind_plain` already returned ``None`` for these arguments.
        """
        kwargs = None if not_plain else self.bind_plain(arguments)
        if kwargs is not None:
            if self.context_param and context is not None:
                kwargs[self.context_param] = context
            return kwargs
        validate = self._validate
        if validate is None:
            validate = self._validate = self._compile()
            if self.signature is not None and validate is not _accept:
                self._plain = _plain_types(self.signature)
                self._required = tuple(self.definition.parameters.get("required", ()))
        # The verdict is the published schema's, for function tools too (pydantic's lax mode
        # would take "5" or True for an integer); pydantic then converts into their types.
        validate(arguments)
        if self.signature is not None:
            # `FunctionSignature.bind` inlined, validating with pydantic-core directly (it is
            # on every call's path; `model_validate` costs a third more).
            try:
                parsed = self.signature.args_model.__pydantic_validator__.validate_python(
                    arguments)
            except ValidationError as exc:
                raise ArgumentError(validation_message(exc), path="") from None
            kwargs = dict(parsed.__dict__)  # exactly the fields: the model forbids extras
        else:
            kwargs = dict(arguments)
        if self.context_param and context is not None:
            kwargs[self.context_param] = context
        return kwargs


def _definition_of(definition: Any) -> ToolDefinition:
    """``definition`` as a `ToolDefinition` (a mapping is validated); else `ToolDefinitionError`."""
    if isinstance(definition, ToolDefinition):
        return definition
    if not isinstance(definition, Mapping):
        raise ToolDefinitionError(f"expected a ToolDefinition or its JSON object, got "
                                  f"{type(definition).__name__}")
    try:
        return ToolDefinition.model_validate(definition)
    except ValidationError as exc:
        name = definition.get("name")
        where = f"tool {name!r}" if isinstance(name, str) else "tool definition"
        raise ToolDefinitionError(f"{where}: {validation_text(exc)}") from None

