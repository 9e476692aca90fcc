"""Typed options of a dialect: what its serve backend and its emulator take.

Each dialect's serve backend names one `ServeOptions` subclass (`Serves`) and its emulator
one options model (`Emulates`), with a docstring per field. The command
line's ``-o KEY=VALUE`` pairs are parsed into them with `DialectOptions.parse` (values
converted to the field's type; an unknown key is an error listing the known ones) and
``toolbridge serve DIALECT --help`` lists them with `DialectOptions.describe`.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import json
import textwrap
import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ..errors import UsageError
from ..http._retries import Secret

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["DialectOptions", "OptionHelp", "ServeOptions"]


class OptionHelp(BaseModel):
    """One option as ``--help`` shows it."""

    model_config = ConfigDict(defer_build=True, frozen=True)
    name: str
    type: str
    default: str
    doc: str


class DialectOptions(BaseModel):
    """Base of every dialect's options: frozen, unknown keys refused, one docstring per field."""

    # Built on first use, and field docstrings read only for `describe`: importing a dialect
    # (plugin discovery imports them all) defines its option classes and nothing more.
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True,
                              arbitrary_types_allowed=True, validate_default=False)
    dialect: ClassVar[str] = ""
    """The dialect these options belong to (named in error messages)."""

    @classmethod
    def parse(cls, values: Mapping[str, Any] | DialectOptions | None = None,
              **more: Any) -> Self:
        """Options from a mapping (``-o`` pairs: text values are converted to each field's
        type) or keywords; `UsageError` names an unknown key (listing the known ones) or a
        value of the wrong type."""
        if isinstance(values, cls) and not more:
            return values
        if isinstance(values, cls):
            return cls.parse(dict(values), **more)
        if isinstance(values, DialectOptions):
            raise UsageError(f"{cls.dialect or cls.__name__}: expected {cls.__name__}, got "
                             f"{type(values).__name__}")
        given = {**(values or {}), **more}
        fields = cls.model_fields
        unknown = sorted(k for k in given if k not in fields)
        if unknown:
            raise UsageError(f"{cls._what()}: unknown option(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(fields)) or 'none'}")
        try:
            return cls.model_validate({k: _from_text(v, fields[k].annotation)
                                       for k, v in given.items()})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '<options>'}: {e['msg']}"
                for e in exc.errors(include_url=False))
            raise UsageError(f"{cls._what()}: invalid option(s): {problems}") from None

    @classmethod
    def describe(cls) -> list[OptionHelp]:
        """Every option: name, type, default and docstring (for ``--help``)."""
        out = []
        docs = field_docstrings(cls)
        for name, info in cls.model_fields.items():
            default = "required" if info.is_required() else repr(info.get_default(
                call_default_factory=True))
            out.append(OptionHelp(name=name, type=type_text(info.annotation),
                                  default=default, doc=(info.description or docs.get(name, "")
                                                        ).strip()))
        return out

    @classmethod
    def _what(cls) -> str:
        return f"{cls.dialect} options" if cls.dialect else cls.__name__


def type_text(annotation: Any) -> str:
    """An option's type as a reader writes it: ``int | None``, ``Literal['a', 'b']``, class
    names without their (possibly private) module paths."""
    if annotation is None or annotation is type(None):
        return "None"
    if annotation is Ellipsis:
        return "..."
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return " | ".join(type_text(arg) for arg in args)
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(arg) for arg in args)}]"
    if origin is not None:
        return f"{type_text(origin)}[{', '.join(type_text(arg) for arg in args)}]"
    name = getattr(annotation, "__name__", None)
    return name if isinstance(name, str) else str(annotation).replace("typing.", "")


def field_docstrings(cls: type) -> dict[str, str]:
    """The docstring under each annotated attribute of ``cls`` and its bases (the nearest
    class's wins), read from their source; none where the source is not available."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in itertools.pairwise(body):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _from_text(value: Any, annotation: Any) -> Any:
    """A command-line value for a field of type ``annotation``: text stays text where the
    field takes text; otherwise JSON when it parses (lists, objects, ``null``), and pydantic
    converts the rest (``"5"`` to 5, ``"true"`` to True)."""
    if not isinstance(value, str) or _takes_text(annotation):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _takes_text(annotation: Any) -> bool:
    """Whether a field of type ``annotation`` takes plain text (``str``, or a union with it)."""
    if annotation is str:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType or origin is typing.Annotated:
        return any(_takes_text(arg) for arg in typing.get_args(annotation))
    return False


class ServeOptions(DialectOptions):
    """Options of a dialect's serve backend: where the service is, credentials, which
    conversation. Subclasses add their own fields (each with a docstring)."""

    base_url: str | None = None
    """The service's root URL (an emulator's base URL works); ``None``: the real service."""
    proxy: Secret | None = None
    """A proxy URL for every request (default: ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``
    with ``NO_PROXY``, when ``trust_env``); credentials in it stay secret."""
    verify: bool | str = True
    """``false``, or a CA bundle file or directory (default: ``SSL_CERT_FILE`` or
    ``SSL_CERT_DIR`` when ``trust_env``, else certifi's CAs)."""
    cert: str | None = None
    """A client certificate (PEM, with its key unless ``cert_key``) for mutual TLS."""
    cert_key: str | None = None
    """The client certificate's private key file, when not in ``cert``."""
    http2: bool = False
    """Offer HTTP/2 (needs the ``http2`` extra)."""
    trust_env: bool = True
    """Read proxies and CAs from the environment, as httpx does."""

    @field_validator("verify", mode="before")
    @classmethod
    def _verify_flag(cls, value: Any) -> Any:
        """``-o verify=false`` is the flag, not a file named ``false``."""
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        return value

    def network(self) -> dict[str, Any]:
        """The client keywords of the network settings that differ from the defaults (see
        `toolbridge.http.Network`)."""
        given: dict[str, Any] = {}
        if self.proxy is not None:
            given["proxy"] = self.proxy
        if self.verify is not True:
            given["verify"] = self.verify
        if self.cert is not None:
            given["cert"] = (self.cert, self.cert_key) if self.cert_key else self.cert
        if self.http2:
            given["http2"] = True
        if not self.trust_env:
            given["trust_env"] = False
        return given

    @classmethod
    def emulated(cls, base_url: str) -> Self:
        """Options for a conversation with this dialect's emulator at ``base_url``.

        Dialects whose client needs credentials even there override it to add dummy ones.
        """
        return cls(base_url=base_url)
