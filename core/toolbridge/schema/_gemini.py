"""The Gemini API ``Schema`` (``FunctionDeclaration.parameters``): CES's rules, with the
keywords Gemini adds.

Rules: google-genai 3.6.1 ``types.Schema`` (models with ``extra="forbid"``) and the Gemini API
reference (``ai.google.dev/api/caching#Schema``); see ``docs/protocols/gemini.md``. Gemini's
Schema is the same OpenAPI 3.0 subset with upper-case types as CES, plus ``pattern``,
``minLength``/``maxLength``, ``minProperties``/``maxProperties``, ``example`` and a few
``format`` values; counts are plain JSON numbers, and recursion is unrolled (the SDK itself
inlines ``$defs`` before sending: ``_transformers.process_schema``).
"""

from __future__ import annotations

from typing import Any

from toolbridge.schema._ces import CesSchema
from toolbridge.schema._common import tuple_to_items
from toolbridge.schema._openapi30 import CUT, UNROLL
from toolbridge.schema._walk import SchemaTarget

__all__ = ["GEMINI_FORMATS", "GeminiSchema"]

GEMINI_FORMATS: dict[str, frozenset[str]] = {
    "STRING": frozenset({"date-time", "enum"}),
    "INTEGER": frozenset({"int32", "int64"}),
    "NUMBER": frozenset({"float", "double"}),
}
"""The ``format`` values the Gemini API takes per type (others fail the request)."""


class GeminiSchema(CesSchema):
    """JSON Schema 2020-12 (recursion unrolled) → Gemini ``Schema`` (``STRING``, counts as
    numbers, no ``ref``/``defs``)."""

    target = "gemini"
    dialect: SchemaTarget = "gemini"
    label = "Gemini"
    int64_as_text = False  # the REST API and the SDK's `int` fields take JSON numbers

    def transform(self, schema: dict[str, Any], pointer: str, *, root: bool) -> dict[str, Any]:
        if CUT in schema:
            name = schema.pop(CUT)
            self.lose(schema, pointer, "$ref", f"recursive reference to {name!r} cut after "
                      f"{UNROLL} levels: a Gemini Schema holds no definitions",
                      action="approximated", text=f"recursive: {name}", enforced=True)
        if "prefixItems" in schema and tuple_to_items(schema):  # types.Schema has no tuples
            self.lose(schema, pointer, "prefixItems", "a Gemini Schema has no tuples; each "
                      "position accepts any of the item schemas", action="approximated",
                      enforced=True)
        out = super().transform(schema, pointer, root=root)
        fmt = out.get("format")
        if fmt is not None and fmt not in GEMINI_FORMATS.get(str(out.get("type")), ()):
            self.drop(out, pointer, "format", f"gemini takes no format {fmt!r} on "
                      f"{out.get('type') or 'an untyped value'}", enforced=False)
        return out

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        return schema  # no definitions to gather: recursion was unrolled
