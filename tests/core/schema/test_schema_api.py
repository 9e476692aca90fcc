"""The schema package's public surface: names, import cost, and the walker base class."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import toolbridge.schema as schema_pkg
from toolbridge.schema import SchemaTransformer

PUBLIC = {"Conversion", "HttpRequestSpec", "LossPolicy", "SchemaLoss", "SchemaSource",
          "SchemaTarget", "SchemaTransformer", "StrictParameters", "build_http_request",
          "compile_decoder", "decode_strict_arguments", "strict_parameters",
          "convert_schema", "decode_arguments", "normalize_root", "normalize_schema",
          "to_json_schema", "tools_from_openapi", "unwrap_arguments"}


def test_exported_names():
    assert set(schema_pkg.__all__) == PUBLIC
    assert all(hasattr(schema_pkg, name) for name in PUBLIC)


def test_import_stays_light():
    code = ("import sys, toolbridge.schema; "
            "heavy = [m for m in sys.modules if m.split('.')[0] in "
            "('jsonschema', 'jsonschema_rs', 'openapi_pydantic', 'google', 'openai', 'yaml')]; "
            "print(heavy); assert not heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_walker_subclass_sees_children_first():
    class Upper(SchemaTransformer):
        target = "upper-titles"

        def transform(self, schema: dict[str, Any], pointer: str, *, root: bool):
            if "title" in schema:
                schema["title"] = schema["title"].upper()
            if "format" in schema:
                self.drop(schema, pointer, "format", "no formats here")
            return schema

    walker = Upper({"title": "a", "properties": {"b": {"title": "b", "format": "email"}}})
    assert walker.walk() == {"title": "A", "properties": {
        "b": {"title": "B", "description": "(format: email)"}}}
    assert [str(loss) for loss in walker.losses] == [
        "b (/properties/b) format: described (no formats here; not enforced)"]


def test_loss_policy_is_one_literal_in_both_modules():
    import typing

    import toolbridge.plugin

    assert typing.get_args(toolbridge.plugin.LossPolicy) == typing.get_args(
        schema_pkg.LossPolicy) == ("allow", "describe", "error", "lossless")
