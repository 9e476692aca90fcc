"""The schema engine: neutral JSON Schema ↔ OpenAI strict, Anthropic strict, OpenAPI 3.0 and CES,
with loss reports.

Public as `toolbridge.schema`; its inner modules are private.
"""

from toolbridge.schema._convert import convert_schema
from toolbridge.schema._fidelity import compile_decoder, decode_arguments, unwrap_arguments
from toolbridge.schema._normalize import normalize_schema
from toolbridge.schema._openapi_tools import HttpRequestSpec, build_http_request, tools_from_openapi
from toolbridge.schema._roots import normalize_root
from toolbridge.schema._strict_tools import (
    StrictParameters,
    decode_strict_arguments,
    strict_parameters,
)
from toolbridge.schema._to_json_schema import SchemaSource, to_json_schema
from toolbridge.schema._walk import (
    Conversion,
    LossPolicy,
    SchemaLoss,
    SchemaTarget,
    SchemaTransformer,
)

__all__ = [
    "Conversion",
    "HttpRequestSpec",
    "LossPolicy",
    "SchemaLoss",
    "SchemaSource",
    "SchemaTarget",
    "SchemaTransformer",
    "StrictParameters",
    "build_http_request",
    "compile_decoder",
    "convert_schema",
    "decode_arguments",
    "decode_strict_arguments",
    "normalize_root",
    "normalize_schema",
    "strict_parameters",
    "to_json_schema",
    "tools_from_openapi",
    "unwrap_arguments",
]
