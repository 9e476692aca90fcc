"""The schema engine: neutral JSON Schema ↔ OpenAI strict, OpenAPI 3.0 and CES, with loss reports.

Private package; the public names are re-exported from :mod:`toolbridge`.
"""

from toolbridge._schema._walk import (
    Conversion,
    LossPolicy,
    SchemaLoss,
    SchemaTarget,
    SchemaTransformer,
)
from toolbridge._schema.convert import convert_schema
from toolbridge._schema.fidelity import compile_decoder, decode_arguments
from toolbridge._schema.normalize import normalize_schema
from toolbridge._schema.openapi_tools import HttpRequestSpec, build_http_request, tools_from_openapi
from toolbridge._schema.to_json_schema import SchemaSource, to_json_schema

__all__ = [
    "Conversion",
    "HttpRequestSpec",
    "LossPolicy",
    "SchemaLoss",
    "SchemaSource",
    "SchemaTarget",
    "SchemaTransformer",
    "build_http_request",
    "compile_decoder",
    "convert_schema",
    "decode_arguments",
    "normalize_schema",
    "to_json_schema",
    "tools_from_openapi",
]
