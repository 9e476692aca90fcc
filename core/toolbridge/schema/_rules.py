"""The keyword rule table: what each target does with each JSON Schema keyword.

The converters read this table for every keyword they keep or drop, and ``docs/schemas.md`` is
generated from it (``python -m toolbridge.schema._rules_doc``), so the two cannot disagree.
Sources per rule: ``shared/protocols/schema-dialects.md`` §5 (OpenAI's "Supported schemas",
OpenAPI 3.0.3 "Schema Object", google-cloud-ces 0.7.2 ``types/schema.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toolbridge.schema._walk import SchemaTarget

__all__ = ["RULES", "TARGETS", "Kind", "Rule", "Treatment", "kind_of", "rule_for"]

Kind = Literal["keep", "convert", "drop", "ignore"]
"""keep as is; convert (see note); drop (a loss); ignore (dropped, meaningless, no loss)."""

TARGETS: tuple[SchemaTarget, ...] = ("openai-strict", "openapi-3.0", "ces", "gemini")


@dataclass(frozen=True)
class Treatment:
    """What one target does with one keyword."""

    kind: Kind
    note: str = ""


@dataclass(frozen=True)
class Rule:
    """One keyword's treatment on every target.

    ``describe``: a drop is described. ``enforced``: a drop is still checked when arguments
    arrive (a `Toolbox` validates them against the original schema), see `SchemaLoss.enforced`.
    ``gemini``: the Gemini API's treatment where it differs from CES's (same Schema subset).
    """

    keyword: str
    openai_strict: Treatment
    openapi30: Treatment
    ces: Treatment
    describe: bool = True
    enforced: bool = True
    gemini: Treatment | None = None

    def on(self, target: SchemaTarget) -> Treatment:
        """The treatment on ``target``."""
        if target == "openai-strict":
            return self.openai_strict
        if target == "openapi-3.0":
            return self.openapi30
        if target == "gemini" and self.gemini is not None:
            return self.gemini
        return self.ces


K, D, IGN = Treatment("keep"), Treatment("drop"), Treatment("ignore")


def _c(note: str) -> Treatment:
    return Treatment("convert", note)


def _d(note: str) -> Treatment:
    return Treatment("drop", note)


_NULLABLE = "`[T, \"null\"]` → `type: T` + `nullable: true`; other lists → `anyOf`"
RULES: tuple[Rule, ...] = (
    Rule("type", _c("lists of several types → `anyOf` (`[T, \"null\"]` kept); no type: "
                    "`object` with `properties`, `array` with `items`, else any scalar "
                    "(approximated)"),
         _c(_NULLABLE + "; `null` alone → `nullable` (approximated)"),
         _c("upper case (`STRING`…); " + _NULLABLE + "; `null` alone → `nullable` "
            "(approximated)")),
    Rule("nullable", _c("adds `\"null\"` to `type` / `anyOf`"), K, K),
    Rule("properties", K, K, K),
    Rule("required", _c("lists every property; optional ones become nullable"), K, K),
    Rule("additionalProperties",
         _c("`false` on every object; `true` or a schema (open dict) is lost"), K,
         _c("schema kept; `false` not expressible (dropped, not described: checked on "
            "arrival); `true` is the default")),
    Rule("patternProperties", D, D, D),
    Rule("propertyNames", D, D, D),
    Rule("minProperties", D, K, D, gemini=K),
    Rule("maxProperties", D, K, D, gemini=K),
    Rule("items", K, _c("`items: {}` added to arrays without it"), K),
    Rule("prefixItems", _c("`items: {anyOf: [...]}` + min/maxItems (positions lost)"),
         _c("`items: {anyOf: [...]}` + min/maxItems (positions lost)"), K,
         gemini=_c("`items: {anyOf: [...]}` + min/maxItems (positions lost)")),
    Rule("minItems", K, K, _c("int64, written as a string"), gemini=K),
    Rule("maxItems", K, K, _c("int64, written as a string"), gemini=K),
    Rule("uniqueItems", D, K, K, gemini=D),
    Rule("contains", D, D, D),
    Rule("minContains", D, D, D),
    Rule("maxContains", D, D, D),
    Rule("unevaluatedItems", D, D, D),
    Rule("unevaluatedProperties", D, D, D),
    Rule("enum", K, _c("`null` member only with `nullable: true`"),
         _c("values as strings (`1` → `\"1\"`), restored by `decode_arguments`; "
            "`null` → `nullable`")),
    Rule("const", K, _c("one-value `enum`"), _c("one-value string `enum`")),
    Rule("anyOf", _c("kept; an `anyOf` root is wrapped in an object"), K,
         _c("kept; a `null` branch becomes `nullable: true`")),
    Rule("oneOf", _c("`anyOf` (approximation unless branches are disjoint)"), K,
         _c("`anyOf` (approximation unless branches are disjoint)")),
    Rule("allOf", _c("one entry or object entries merged; otherwise lost"), K,
         _c("one entry or object entries merged; otherwise lost")),
    Rule("not", D, K, D),
    Rule("if", D, D, D),
    Rule("then", D, D, D),
    Rule("else", D, D, D),
    Rule("dependentRequired", D, D, D),
    Rule("dependentSchemas", D, D, D),
    Rule("$defs", _c("kept for recursive definitions and for those used more than once (so "
                     "copies cannot push a schema past OpenAI's limits); others inlined"),
         _c("inlined; recursion unrolled two levels (fewer in large schemas), then cut "
            "(approximated)"),
         _c("`defs` at the root for recursive definitions; finite ones inlined"),
         gemini=_c("inlined; recursion unrolled two levels, then cut (approximated)")),
    Rule("$ref", _c("targets used once inlined (siblings merged); recursive and shared ones "
                    "kept (siblings in an `anyOf` wrapper)"),
         _c("inlined (siblings merged); recursive targets unrolled, then cut"),
         _c("`ref: \"#/defs/Name\"` for recursive targets; finite ones inlined"),
         gemini=_c("inlined (siblings merged); recursive targets unrolled, then cut")),
    Rule("title", K, K, K),
    Rule("description", K, K, K),
    Rule("default", _c("dropped (neutral default applies when the model sends null; of a "
                       "nullable property: lost, not enforced)"), K,
         _c("kept (numbers become doubles)"), enforced=False),
    Rule("examples", D, _c("`example: <first item>`"), D),
    Rule("example", D, K, D, gemini=K),
    Rule("format", _c("kept for OpenAI's formats (date-time, time, date, duration, email, "
                      "hostname, ipv4, ipv6, uuid); others lost (not enforced)"), K,
         _d("not enforced"), enforced=False,
         gemini=_c("kept where Gemini takes it (`date-time`, `enum` on strings; `int32`, "
                   "`int64`; `float`, `double`); others lost (not enforced)")),
    Rule("pattern", K, K, D, gemini=K),
    Rule("minLength", D, K, D, gemini=K),
    Rule("maxLength", D, K, D, gemini=K),
    Rule("minimum", K, K, K),
    Rule("maximum", K, K, K),
    Rule("exclusiveMinimum", K, _c("`minimum: n, exclusiveMinimum: true`"),
         _c("integers: `minimum: n + 1` (exact); numbers: `minimum: n` (approximated)")),
    Rule("exclusiveMaximum", K, _c("`maximum: n, exclusiveMaximum: true`"),
         _c("integers: `maximum: n - 1` (exact); numbers: `maximum: n` (approximated)")),
    Rule("multipleOf", K, K, D),
    Rule("discriminator", D, _c("`propertyName` kept; `mapping` dropped (refs are inlined)"), D,
         describe=False),
    Rule("readOnly", D, K, D, describe=False),
    Rule("writeOnly", D, K, D, describe=False),
    Rule("deprecated", D, K, D),
    Rule("contentEncoding", D, D, D),
    Rule("contentMediaType", D, D, D),
    Rule("contentSchema", D, D, D, describe=False),
    Rule("xml", D, K, D, describe=False),
    Rule("externalDocs", D, K, D, describe=False),
    Rule("$schema", IGN, IGN, IGN),
    Rule("$id", IGN, IGN, IGN),
    Rule("$anchor", IGN, IGN, IGN),
    Rule("$comment", IGN, IGN, IGN),
    Rule("$vocabulary", IGN, IGN, IGN),
    Rule("$dynamicAnchor", IGN, IGN, IGN),
    Rule("$dynamicRef", D, D, D, describe=False),
)

_BY_KEYWORD = {rule.keyword: rule for rule in RULES}


def rule_for(keyword: str) -> Rule | None:
    """The rule for ``keyword``, or None for a keyword the table does not know."""
    return _BY_KEYWORD.get(keyword)


def kind_of(keyword: str, target: SchemaTarget) -> Kind:
    """How ``target`` treats ``keyword``; unknown keywords are dropped (``x-`` kept in 3.0)."""
    rule = _BY_KEYWORD.get(keyword)
    if rule is not None:
        return rule.on(target).kind
    if target == "openapi-3.0" and keyword.startswith("x-"):
        return "keep"  # OpenAPI specification extensions are allowed on every Schema Object
    return "drop"
