"""The neutral model: a tool definition, a pending call, and the result that answers it."""

# No ``from __future__ import annotations``: pydantic would evaluate every field's annotation
# string when each class is created, and they are created on import.

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    field_validator,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "NAME_PATTERN",
    "Content",
    "Correlation",
    "DocumentPart",
    "ImagePart",
    "TextPart",
    "ToolCall",
    "ToolDefinition",
    "ToolChoice",
    "ToolResult",
    "ToolRetry",
]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Tool names every built-in dialect accepts: letters, digits, ``_`` and ``-``, 1 to 64."""

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def _slot_setter(name: str) -> Any:
    """The setter of one of `BaseModel`'s slots: twice as fast as ``object.__setattr__``."""
    slot = BaseModel.__dict__.get(name)
    if slot is None or not hasattr(slot, "__set__"):
        return lambda instance, value: object.__setattr__(instance, name, value)
    return slot.__set__


_new = object.__new__
_set_dict, _set_fields_set, _set_extra, _set_private = (_slot_setter(name) for name in (
    "__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"))


class _Frozen(BaseModel):
    # Schemas are built on first validation, not at import (adapters import these).
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")


class ToolRetry(_Frozen):
    """Retries of one tool's call where a fleet runs it (`toolbridge_temporal`): the
    activity's retry policy. The result store still decides whether a retry runs the handler:
    a completed call is answered from the store, a started side-effecting one reconciled."""

    max_attempts: int = Field(default=5, ge=1)
    """Attempts in all (1: never retried)."""
    backoff: float = Field(default=1.0, gt=0)
    """Seconds before the first retry; doubled before each next one."""
    max_delay: float = Field(default=30.0, gt=0)
    """Longest wait between two attempts."""


class ToolDefinition(_Frozen):
    """What a tool is: its name, what it does, and the JSON Schema of its arguments."""

    name: str
    """Unique name, ``[A-Za-z0-9_-]{1,64}``."""
    description: str = ""
    """What the tool does, for the model."""
    parameters: dict[str, Any] = Field(default_factory=lambda: dict(_EMPTY_OBJECT))
    """JSON Schema 2020-12 object schema of the arguments."""
    returns: dict[str, Any] | None = None
    """JSON Schema of the result, when known."""
    strict: bool | None = None
    """Strict schema adherence; ``None`` lets each dialect decide (strict when lossless)."""
    defer_loading: bool = False
    """Hide the tool until the model finds it with tool search (where the dialect has it)."""
    side_effects: bool = False
    """The tool changes the world: its result is stored and it never runs twice for one call.
    ``False`` (the default) means "safe to run again", not "reads only" (see `read_only`)."""
    read_only: bool = False
    """The tool only reads: it changes nothing, so any host may call it freely (MCP's
    ``readOnlyHint``). Implies no side effects; ``side_effects=True`` with it is refused."""
    idempotent: bool = False
    """What the tool calls honours `toolbridge.tools.ToolContext.idempotency_key`: a side
    effect whose worker died after entering it is run again with the same key, instead of
    going to ``toolbridge_reconcile_call``."""
    timeout: float | None = None
    """Seconds a call may run; ``None`` uses the toolbox default."""
    retry: ToolRetry | None = None
    """How a fleet worker retries a call whose run did not complete (its worker lost, the
    store unreachable); ``None``: the fleet's default. A handler's own error is a result,
    never retried; a side-effecting call is retried only as far as the store allows."""
    vendor_extras: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Dialect-specific settings with no neutral home, keyed by dialect name."""

    @classmethod
    def from_model(
        cls, model: type[BaseModel], *, name: str | None = None,
        description: str | None = None, **options: Any,
    ) -> "ToolDefinition":
        """A definition whose parameters are a pydantic model's fields.

        ``name`` defaults to the class name, ``description`` to its docstring; ``options`` are
        the other `ToolDefinition` fields.
        """
        return _definition_from_model(model, name=name, description=description, **options)

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not NAME_PATTERN.match(value):
            raise ValueError(
                f"tool name {value!r} must match [A-Za-z0-9_-]{{1,64}}; "
                "rename the tool (e.g. replace spaces and dots with '_')"
            )
        return value

    @model_validator(mode="after")
    def _check_read_only(self) -> "ToolDefinition":
        if self.read_only and self.side_effects:
            raise ValueError("read_only=True says the tool changes nothing, side_effects=True "
                             "that it changes the world; keep one")
        return self

    @field_validator("parameters")
    @classmethod
    def _check_parameters(cls, value: dict[str, Any]) -> dict[str, Any]:
        kind = value.get("type")
        if kind not in ("object", None) or (kind is None and "properties" not in value
                                             and "$ref" not in value and value):
            raise ValueError("parameters must be a JSON Schema with \"type\": \"object\"")
        return value

    @model_validator(mode="after")
    def _check_sendable(self) -> "ToolDefinition":
        """Every backend gets the definition as UTF-8 JSON: refuse what cannot be written so
        (a lone surrogate such as ``\\ud800``, a value that is not JSON, runaway nesting)
        here, not when a tool list is sent."""
        import json  # here: `import toolbridge` loads no json (definitions are made once)

        from ._jsondata import json_problem

        for field_name in ("parameters", "returns", "vendor_extras"):
            found = json_problem(getattr(self, field_name), 1_000)
            if found is not None and found.problem == "too deep":  # a cycle, too
                raise ValueError(f"the definition's {field_name} is nested too deeply to be "
                                 "sent as JSON")
            if found is not None:
                raise ValueError(f"the definition is not JSON at {field_name}{found.pointer}: "
                                 f"{found.problem}")
        try:
            json.dumps([self.description, self.parameters, self.returns, self.vendor_extras],
                       ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"the definition holds text that is not valid Unicode "
                             f"({exc.object[exc.start:exc.end]!a}); backends take UTF-8 JSON"
                             ) from None
        except RecursionError:
            raise ValueError("the definition is nested too deeply to be sent as JSON") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the definition is not JSON: {exc}") from None
        return self


class Correlation(_Frozen):
    """Base for the data an adapter needs to answer a call (ids to echo, URLs to post to).

    Each dialect subclasses it with typed fields; the core never looks inside.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, extra="allow")

    @classmethod
    def trusted(cls, **fields: Any) -> "Self":
        """No validation: for adapters that already checked the fields' types.

        Equal to ``cls(**fields)`` when ``fields`` holds exactly the declared fields, each
        with a value of its declared type (a wrong value is never caught); any other set of
        names goes through the validating constructor.
        """
        names = _FIELD_SETS.get(cls)
        if names is None:
            names = _FIELD_SETS[cls] = set(cls.__pydantic_fields__)
        if fields.keys() != names:
            return cls(**fields)
        instance = _new(cls)
        _set_dict(instance, fields)
        _set_fields_set(instance, names)
        _set_extra(instance, {})
        _set_private(instance, None)
        return instance


_FIELD_SETS: dict[type[BaseModel], set[str]] = {}
"""Each class's field names, one set shared as the ``model_fields_set`` of the instances the
fast constructors build: frozen models never change it (a copy gets a copy)."""


class ToolCall(_Frozen):
    """A call the backend is waiting on, as the backend asked for it."""

    id: str
    """The call's id, unique within its turn."""
    name: str
    """The tool the backend asked for."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Decoded arguments."""
    raw_arguments: str | None = None
    """The argument text when the wire sent a string (kept for error messages and logs)."""
    argument_error: str | None = None
    """Why the raw arguments could not be decoded, if they could not; the call then fails."""
    dialect: str
    """Name of the dialect the call came from."""
    conversation: str = ""
    """Session or thread the call belongs to (part of the result-store key)."""
    turn: str = ""
    """Turn or run the call belongs to (part of the result-store key)."""
    correlation: SerializeAsAny[Correlation] = Field(default_factory=Correlation)
    """Adapter-owned data needed to answer the call."""

    @classmethod
    def trusted(
        cls, *, id: str, name: str, dialect: str, arguments: dict[str, Any],
        raw_arguments: str | None = None, argument_error: str | None = None,
        conversation: str = "", turn: str = "", correlation: Correlation | None = None,
    ) -> "ToolCall":
        """No validation: for adapters that already checked the fields.

        Equal to ``ToolCall(...)`` with the same values, several times faster (it is on every
        call's path). Every value must already have its declared type: nothing is checked.
        """
        call: ToolCall = _new(cls)
        _set_dict(call, {
            "id": id, "name": name, "arguments": arguments, "raw_arguments": raw_arguments,
            "argument_error": argument_error, "dialect": dialect, "conversation": conversation,
            "turn": turn, "correlation": _NO_CORRELATION if correlation is None else correlation,
        })
        _set_fields_set(call, _CALL_FIELDS)
        _set_extra(call, None)
        _set_private(call, None)
        return call


_CALL_FIELDS = _FIELD_SETS[ToolCall] = set(ToolCall.model_fields)
_NO_CORRELATION = Correlation.trusted()  # no validation: its schema is built on first use


class TextPart(_Frozen):
    """A text part of a result."""

    type: Literal["text"] = "text"
    text: str

    def as_text(self) -> str:
        """The part as text: its text."""
        return self.text


class ImagePart(_Frozen):
    """An image part of a result: an ``https:`` URL or a base64 ``data:`` URL."""

    type: Literal["image"] = "image"
    url: str
    """Image address; ``data:image/png;base64,...`` for inline images."""

    def as_text(self) -> str:
        """What a text-only dialect sends instead: the start of its address."""
        return f"[image: {self.url[:64]}]"


class DocumentPart(_Frozen):
    """A document part of a result: a PDF or plain-text file, inline or at a URL."""

    type: Literal["document"] = "document"
    media_type: Literal["application/pdf", "text/plain"] = "application/pdf"
    data: str | None = None
    """The file's bytes, base64; exactly one of ``data`` and ``url``."""
    url: str | None = None
    """The file's ``https:`` address; exactly one of ``data`` and ``url``."""
    title: str | None = None
    """A title or file name shown to the model."""

    @model_validator(mode="after")
    def _check_source(self) -> "DocumentPart":
        import base64

        if (self.data is None) == (self.url is None):
            raise ValueError("data, url: give exactly one (the base64 bytes or the address)")
        try:
            raw = b"" if self.data is None else base64.b64decode(self.data, validate=True)
        except ValueError:  # binascii.Error
            raise ValueError("data: not base64 (encode the file with base64.b64encode)") from None
        try:
            if self.media_type == "text/plain":
                raw.decode()
        except UnicodeDecodeError:
            raise ValueError("data: a text/plain document must be UTF-8") from None
        return self

    def plain_text(self) -> str | None:
        """The text of an inline ``text/plain`` document; ``None`` for the others."""
        if self.media_type != "text/plain" or self.data is None:
            return None
        import base64

        return base64.b64decode(self.data).decode()

    def as_text(self) -> str:
        """What a dialect without documents sends instead: its title, type and address."""
        where = f" {self.url[:64]}" if self.url else ""
        name = f"{self.title} " if self.title else ""
        return f"[document: {name}({self.media_type}){where}]"


ContentPart = Annotated[TextPart | ImagePart | DocumentPart, Field(discriminator="type")]


class Content(_Frozen):
    """A result made of parts (text, images, documents), for dialects that accept content
    arrays."""

    parts: tuple[ContentPart, ...]

    def as_text(self) -> str:
        """Render as plain text for dialects that only take strings."""
        return "\n".join(p.as_text() for p in self.parts)


class ToolResult(_Frozen):
    """The answer to one call: an output on success, an error message on failure."""

    call: ToolCall
    """The call this answers."""
    success: bool
    output: Any = None
    """On success: a string, a JSON-compatible value, or `Content`."""
    error: str | None = None
    """On failure: a message the agent can act on (never a traceback)."""

    @classmethod
    def ok(cls, call: ToolCall, output: Any) -> "ToolResult":
        """A successful result."""
        return new_result(call, True, output, None)

    @classmethod
    def failed(cls, call: ToolCall, error: str) -> "ToolResult":
        """A failed result carrying ``error`` for the agent."""
        return new_result(call, False, None, error)


def new_result(call: ToolCall, success: bool, output: Any, error: str | None) -> ToolResult:
    """`ToolResult.model_construct`, many times faster: it is on every call's path."""
    result: ToolResult = _new(ToolResult)
    _set_dict(result, {"call": call, "success": success, "output": output, "error": error})
    _set_fields_set(result, _RESULT_FIELDS)
    _set_extra(result, None)
    _set_private(result, None)
    return result


_RESULT_FIELDS = _FIELD_SETS[ToolResult] = {"call", "success", "output", "error"}


class ToolChoice(_Frozen):
    """Whether and which tool the model must call: ``auto``, ``none``, ``required`` or one tool."""

    mode: Literal["auto", "none", "required", "tool"] = "auto"
    tool: str | None = None
    """The tool to call when ``mode`` is ``"tool"``."""

    @classmethod
    def named(cls, tool: str) -> "ToolChoice":
        """Force a call of ``tool``."""
        return cls(mode="tool", tool=tool)

    @field_validator("tool")
    @classmethod
    def _check_tool(cls, value: str | None) -> str | None:
        if value is not None and not NAME_PATTERN.match(value):
            raise ValueError(f"tool name {value!r} must match [A-Za-z0-9_-]{{1,64}}")
        return value

    def model_post_init(self, context: Any, /) -> None:
        if (self.mode == "tool") != (self.tool is not None):
            raise ValueError('give tool=... exactly when mode is "tool"')


def _definition_from_model(
    model: type[BaseModel], *, name: str | None = None, description: str | None = None,
    **options: Any,
) -> ToolDefinition:
    schema = schema_of_model(model)
    doc = description if description is not None else (model.__doc__ or "").strip()
    return ToolDefinition(
        name=name or model.__name__, description=doc, parameters=schema, **options
    )


class NoTitles(GenerateJsonSchema):
    """Pydantic's generator without the auto-generated ``title`` on every field."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def schema_of_model(model: type[BaseModel]) -> dict[str, Any]:
    """JSON Schema 2020-12 of a pydantic model class, without auto titles."""
    schema = model.model_json_schema(schema_generator=NoTitles)
    schema.pop("title", None)
    return schema
