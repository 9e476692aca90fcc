"""``convert_schema``: neutral JSON Schema → one target dialect, with a loss report."""

from __future__ import annotations

import itertools
import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from toolbridge.errors import SchemaConversionError, UsageError
from toolbridge.schema._ces import CesSchema
from toolbridge.schema._gemini import GeminiSchema
from toolbridge.schema._normalize import normalize
from toolbridge.schema._openai_strict import ROOT_PROPERTY, OpenAIStrictSchema
from toolbridge.schema._openapi30 import OpenAPI30Schema, inline_recursion, validate_openapi30
from toolbridge.schema._walk import (
    LOSS_POLICIES,
    Conversion,
    LossPolicy,
    SchemaTarget,
    SchemaTransformer,
    check_bounds,
    mappings,
)

__all__ = ["TRANSFORMERS", "check_valid", "convert_schema", "fast_valid", "patterns_compile"]

TRANSFORMERS: dict[str, type[SchemaTransformer]] = {
    "openai-strict": OpenAIStrictSchema,
    "openapi-3.0": OpenAPI30Schema,
    "ces": CesSchema,
    "gemini": GeminiSchema,
}

log = logging.getLogger("toolbridge.schema")


def convert_schema(
    schema: Mapping[str, Any], target: SchemaTarget, *, policy: LossPolicy = "describe"
) -> Conversion:
    """Convert ``schema`` (JSON Schema draft-07 or 2020-12) to ``target``.

    ``policy``: ``allow`` drops what the target cannot hold, ``describe`` also writes it into
    the node's description, ``error`` describes too and raises
    :class:`~toolbridge.errors.SchemaConversionError` listing every loss that is not enforced
    on arrival (`SchemaLoss.enforced`), ``lossless`` raises on any loss. Hostile input (too
    deep, too large, dangling ``$ref``, not JSON Schema) raises ``SchemaConversionError`` too.
    """
    transformer_cls = TRANSFORMERS.get(target)
    if transformer_cls is None:
        raise UsageError(f"unknown schema target {target!r}; use one of {sorted(TRANSFORMERS)}")
    if policy not in LOSS_POLICIES:
        raise UsageError(f"unknown loss policy {policy!r}; use one of "
                         f"{', '.join(map(repr, LOSS_POLICIES))}")
    if not isinstance(schema, Mapping):
        raise SchemaConversionError(f"a schema must be a JSON object, not "
                                    f"{type(schema).__name__}")
    check_valid(schema)
    # OpenAI strict holds `$defs`: a shared definition stays there instead of being copied to
    # every use, which could push a schema past OpenAI's documented limits.
    norm = normalize(schema, keep_shared=target == "openai-strict")
    if target in ("openapi-3.0", "gemini"):  # neither Schema form holds definitions
        norm = inline_recursion(norm)
    transformer = transformer_cls(norm.schema, policy=policy, origins=norm.origins)
    converted = transformer.walk()
    transformer.check_policy()
    if target == "openapi-3.0":
        validate_openapi30(converted)
    wrapped = ROOT_PROPERTY if isinstance(transformer, OpenAIStrictSchema) and (
        transformer.wrapped) else None
    return Conversion(converted, tuple(transformer.losses), wrapped)


def check_valid(schema: Mapping[str, Any]) -> None:
    """Refuse a schema that is not valid JSON Schema, naming where, before converting it.

    Size and depth are checked first, so the metaschema check itself stays bounded. The verdict
    is the `jsonschema` package's; jsonschema-rs (when installed) accepts the common case
    first, many times faster, and anything it does not accept goes to `jsonschema`.
    """
    import jsonschema

    check_bounds(schema)
    try:  # every backend gets the schema as UTF-8 JSON
        json.dumps(schema, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SchemaConversionError(
            f"the schema holds text that is not valid Unicode "
            f"({exc.object[exc.start:exc.end]!a}); backends take UTF-8 JSON") from None
    except (TypeError, ValueError) as exc:
        raise SchemaConversionError(f"the schema is not JSON: {exc}") from None
    if fast_valid(schema):
        return
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = cls(cls.META_SCHEMA).iter_errors(schema)
    try:
        error = jsonschema.exceptions.best_match(itertools.islice(errors, 20))
    except RecursionError:  # within MAX_DEPTH this cannot happen; deeper stacks are possible
        raise SchemaConversionError("the schema is nested too deeply to be checked") from None
    if error is not None:
        pointer = "/" + "/".join(str(p) for p in error.absolute_path)
        raise SchemaConversionError(f"not a valid JSON Schema at {pointer}: {error.message}")


def fast_valid(schema: Mapping[str, Any]) -> bool:
    """Whether jsonschema-rs accepts ``schema`` against its metaschema: then `jsonschema`
    does too, formats unchecked (jsonschema-rs checks none). ``False`` says nothing: ask
    `jsonschema`. Bound the schema first (`check_bounds`): past it `jsonschema` may give up."""
    try:
        import jsonschema_rs
    except ImportError:
        return False
    try:
        return bool(jsonschema_rs.meta.is_valid(dict(schema)))
    except Exception as exc:  # an unknown $schema, text Rust cannot hold: the reference decides
        log.debug("jsonschema-rs cannot check this schema (%s: %s); jsonschema decides",
                  type(exc).__name__, exc)
        return False


def patterns_compile(schema: Mapping[str, Any]) -> bool:
    """Whether every ``pattern`` string and ``patternProperties`` name in ``schema`` compiles
    with `re`: the ``regex`` format, the one a metaschema asks for that `jsonschema` checks
    when asked to (a pattern in an example value too: that only costs the fast path)."""
    for node in mappings(schema):
        found, names = node.get("pattern"), node.get("patternProperties")
        patterns = [found] if isinstance(found, str) else []
        patterns += list(names) if isinstance(names, Mapping) else []
        for pattern in patterns:
            try:
                re.compile(pattern)
            except (re.error, RecursionError, OverflowError, TypeError, ValueError):
                return False
    return True
