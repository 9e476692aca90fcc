"""Strict checks of CES request bodies, as the real proto JSON parser applies them."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from . import wire

TOOL_TYPES = ("clientFunction", "openApiTool", "googleSearchTool", "connectorTool",
              "dataStoreTool", "pythonFunction", "mcpTool", "fileSearchTool", "systemTool",
              "agentTool", "widgetTool", "remoteAgentTool")
TOOL_FIELDS = frozenset({*TOOL_TYPES, "name", "displayName", "executionType", "timeout",
                         "createTime", "updateTime", "etag", "generatedSummary",
                         "toolFakeConfig"})
OUTPUT_ONLY = ("name", "displayName", "createTime", "updateTime", "etag", "generatedSummary")
FUNCTION_FIELDS = frozenset({"name", "description", "parameters", "response"})
CONFIG_FIELDS = frozenset({"session", "inputAudioConfig", "outputAudioConfig",
                           "historicalContexts", "entryAgent", "deployment", "timeZone",
                           "useToolFakes", "remoteDialogflowQueryParameters",
                           "enableTextStreaming"})
INPUT_TYPES = ("text", "dtmf", "audio", "toolResponses", "image", "blob", "variables", "event")
RESPONSE_FIELDS = frozenset({"id", "tool", "toolsetTool", "displayName", "response"})
DURATION = re.compile(r"^-?\d+(\.\d{1,9})?s$")
TOOL_PATH = re.compile(r"^(?P<app>projects/[^/]+/locations/[^/]+/apps/[^/]+)/tools"
                       r"(?:/(?P<tool>[^/:]+))?$")


def camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class Reject(Exception):
    def __init__(self, code: int, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def unknown(key: str, where: str) -> Reject:
    # The wording of Google's proto JSON parser for unknown fields.
    return Reject(400, f'Invalid JSON payload received. Unknown name "{key}" at '
                        f"'{where}': Cannot find field.")


def check_schema(schema: Any, where: str) -> None:
    if not isinstance(schema, Mapping):
        raise Reject(400, f"{where}: a Schema must be a JSON object")
    for key, value in schema.items():
        name = camel(key)
        if name not in wire.SCHEMA_FIELDS:
            raise unknown(key, where)
        if name == "type" and value not in wire.SCHEMA_TYPES and not (
                isinstance(value, int) and 0 <= value < len(wire.SCHEMA_TYPES)):
            raise Reject(400, f"Invalid value at '{where}.type' (type.googleapis.com/"
                               f"google.cloud.ces.v1.Schema.Type), {json.dumps(value)}")
        elif name == "enum" and not (isinstance(value, list)
                                     and all(isinstance(v, str) for v in value)):
            raise Reject(400, f"{where}.enum: enum values must be strings")
        elif name in ("minItems", "maxItems") and not re.match(r"^\d+$", str(value)):
            raise Reject(400, f"{where}.{name}: must be an int64")
        elif name in ("properties", "defs"):
            if not isinstance(value, Mapping):
                raise Reject(400, f"{where}.{name}: must be an object")
            for prop, sub in value.items():
                check_schema(sub, f"{where}.{name}[{prop}]")
        elif name in ("items", "additionalProperties"):
            check_schema(value, f"{where}.{name}")  # a message: JSON true/false fail
        elif name in ("anyOf", "prefixItems"):
            if not isinstance(value, list):
                raise Reject(400, f"{where}.{name}: must be a list")
            for i, sub in enumerate(value):
                check_schema(sub, f"{where}.{name}[{i}]")


def check_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The tool with JSON names and enum names; `Reject` where the real parser fails."""
    out: dict[str, Any] = {}
    for key, value in tool.items():
        name = camel(key)
        if name not in TOOL_FIELDS:
            raise unknown(key, "tool")
        out[name] = value
    kinds = [k for k in TOOL_TYPES if k in out]
    if len(kinds) != 1:
        raise Reject(400, f"tool must set exactly one tool type (one of {', '.join(TOOL_TYPES)})"
                           f"; got {kinds or 'none'}")
    function = out.get("clientFunction")
    if function is not None:
        if not isinstance(function, Mapping):
            raise Reject(400, "tool.clientFunction must be an object")
        for key in function:
            if camel(key) not in FUNCTION_FIELDS:
                raise unknown(key, "tool.client_function")
        if not function.get("name"):
            raise Reject(400, "tool.client_function.name is required")
        for key in ("parameters", "response"):
            if key in function:
                check_schema(function[key], f"tool.client_function.{key}")
    kind = out.get("executionType")
    if kind is not None and kind not in wire.EXECUTION_TYPES and kind not in (0, 1, 2):
        raise Reject(400, f"Invalid value at 'tool.execution_type', {json.dumps(kind)}")
    if "timeout" in out and not (isinstance(out["timeout"], str)
                                 and DURATION.match(out["timeout"])):
        raise Reject(400, "tool.timeout must be a Duration such as \"30s\"")
    return wire.normalize_tool_enums(out)


def numeric_enums(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A stored tool with enums as numbers (for ``$alt=json;enum-encoding=int``)."""

    def schema(node: Any) -> Any:
        if not isinstance(node, Mapping):
            return node
        out = dict(node)
        if out.get("type") in wire.SCHEMA_TYPES:
            out["type"] = wire.SCHEMA_TYPES.index(out["type"])
        for key in ("properties", "defs"):
            if isinstance(out.get(key), Mapping):
                out[key] = {k: schema(v) for k, v in out[key].items()}
        for key in ("items", "additionalProperties"):
            if key in out:
                out[key] = schema(out[key])
        for key in ("anyOf", "prefixItems"):
            if isinstance(out.get(key), list):
                out[key] = [schema(v) for v in out[key]]
        return out

    result = dict(tool)
    if result.get("executionType") in wire.EXECUTION_TYPES:
        result["executionType"] = wire.EXECUTION_TYPES.index(result["executionType"])
    if isinstance(result.get("clientFunction"), Mapping):
        function = dict(result["clientFunction"])
        for key in ("parameters", "response"):
            if key in function:
                function[key] = schema(function[key])
        result["clientFunction"] = function
    return result
