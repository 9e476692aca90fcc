"""OpenAI function tools and strict mode: what to send, and how to read what comes back.

Shared by every OpenAI dialect (Assistants, Responses, Chat Completions): ``strict=True`` is
converted under the caller's loss policy, ``strict=None`` ("strict when nothing is lost") is
strict only if the conversion is lossless and within OpenAI's size limits, ``strict=False``
sends the schema as declared (its root spelt out: `normalize_root`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from toolbridge.errors import SchemaConversionError
from toolbridge.schema._convert import convert_schema
from toolbridge.schema._fidelity import compile_decoder, unwrap_arguments
from toolbridge.schema._roots import normalize_root
from toolbridge.schema._strict_limits import strict_limit_breaches
from toolbridge.schema._walk import LossPolicy, SchemaLoss

__all__ = ["StrictParameters", "decode_strict_arguments", "strict_parameters"]


class StrictParameters(NamedTuple):
    """The ``parameters`` to send, whether to send them as ``strict``, and what was lost."""

    schema: Mapping[str, Any]
    strict: bool
    losses: tuple[SchemaLoss, ...]


def strict_parameters(parameters: Mapping[str, Any], strict: bool | None, *,
                      policy: LossPolicy = "describe") -> StrictParameters:
    """The function's ``parameters`` for OpenAI: strict form, or the schema as declared.

    ``strict=True`` converts under ``policy`` (``error``/``lossless`` raise
    :class:`~toolbridge.errors.SchemaConversionError`); ``None`` is strict only when the
    conversion loses nothing, otherwise the schema goes as declared and not strict. A strict
    form over one of OpenAI's documented size limits is never sent: with
    ``None`` the schema goes as declared, the limit in its loss report; with ``True`` it is a
    ``SchemaConversionError`` naming the limit, under every policy. A schema sent as declared
    has its root spelt out by `normalize_root`.
    """
    if strict is True:
        conversion = convert_schema(parameters, "openai-strict", policy=policy)
        over = strict_limit_breaches(conversion.schema)
        if over:
            raise SchemaConversionError(
                "cannot be strict: " + "; ".join(over) + " (send it with strict=None or "
                "strict=False, or make the schema smaller)", _limit_losses(over))
        return StrictParameters(conversion.schema, True, tuple(conversion.losses))
    if strict is None:
        try:
            conversion = convert_schema(parameters, "openai-strict", policy="lossless")
        except SchemaConversionError:
            return StrictParameters(normalize_root(parameters), False, ())
        over = strict_limit_breaches(conversion.schema)
        if over:
            return StrictParameters(normalize_root(parameters), False, _limit_losses(over))
        return StrictParameters(conversion.schema, True, ())
    return StrictParameters(normalize_root(parameters), False, ())


def _limit_losses(over: list[str]) -> tuple[SchemaLoss, ...]:
    return tuple(SchemaLoss("", "strict", "dropped", f"sent non-strict: {line}",
                            enforced=True) for line in over)


def decode_strict_arguments(parameters: Mapping[str, Any], strict: bool | None,
                            arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments a strict function received, as its declared ``parameters`` mean them.

    A root wrapped as ``{"value": ...}`` (only ``strict=True`` can be wrapped: a wrapped
    conversion is never lossless) is unwrapped; ``null`` sent for an optional property that
    does not accept null (strict mode makes every property required) is dropped so the
    handler's default applies; integral numbers become ints where ``integer`` is declared.
    """
    if strict is True:
        arguments = unwrap_arguments(parameters, "openai-strict", arguments)
    decoded = compile_decoder(parameters)(arguments)
    return decoded if isinstance(decoded, dict) else dict(arguments)
