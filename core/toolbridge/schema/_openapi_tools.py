"""Tools from an OpenAPI 3.0/3.1 document, and the HTTP request back from a tool call."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from toolbridge.errors import ArgumentError, UsageError
from toolbridge.schema._to_json_schema import to_json_schema

if TYPE_CHECKING:
    from toolbridge.model import ToolDefinition

__all__ = ["HttpRequestSpec", "build_http_request", "tools_from_openapi"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
EXTRA_KEY = "openapi"
"""``ToolDefinition.vendor_extras`` key holding the argument → HTTP mapping."""


@dataclass(frozen=True)
class HttpRequestSpec:
    """An HTTP request rebuilt from tool arguments (relative to the operation's server)."""

    method: str
    path: str
    query: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    json_body: Any | None = None
    server: str | None = None


def tools_from_openapi(document: Mapping[str, Any] | str) -> list[ToolDefinition]:
    """Make one :class:`~toolbridge.model.ToolDefinition` per operation of an OpenAPI document.

    Path, query and header parameters and the JSON request body are merged into one object
    schema; ``vendor_extras["openapi"]`` keeps ``method``, ``path``, ``server`` and, per
    argument, where it goes (``{"in": "path", "name": "petId"}``; a whole non-object body is the
    argument ``body`` with ``"name": None``) for :func:`build_http_request`.
    """
    from toolbridge.model import ToolDefinition

    doc = _load(document)
    version = str(doc.get("openapi", "3.0"))
    source = "openapi-3.1" if version.startswith("3.1") else "openapi-3.0"
    components = doc.get("components") or {}
    defs = dict(components.get("schemas") or {})
    servers = doc.get("servers") or []
    tools: list[ToolDefinition] = []
    names: set[str] = set()
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        shared = item.get("parameters") or []
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, Mapping):
                continue
            params, mapping, required = _parameters(doc, [*shared, *(op.get("parameters") or [])])
            _body(doc, op.get("requestBody"), params, mapping, required)
            schema: dict[str, Any] = {"type": "object", "properties": params}
            if required:
                schema["required"] = required
            if defs:
                schema["$defs"] = defs
            parameters = to_json_schema(schema, source).schema  # type: ignore[arg-type]
            name = _unique(_tool_name(op.get("operationId"), method, path), names)
            summary, detail = op.get("summary") or "", op.get("description") or ""
            description = "\n\n".join(p for p in (summary, detail) if p)
            extra: dict[str, Any] = {"method": method.upper(), "path": path,
                                     "parameters": mapping}
            op_servers = op.get("servers") or item.get("servers") or servers
            if op_servers and isinstance(op_servers[0], Mapping) and "url" in op_servers[0]:
                extra["server"] = op_servers[0]["url"]
            tools.append(ToolDefinition(name=name, description=description,
                                        parameters=parameters,
                                        vendor_extras={EXTRA_KEY: extra}))
    return tools


def build_http_request(tool: ToolDefinition, arguments: Mapping[str, Any]) -> HttpRequestSpec:
    """Rebuild the HTTP request for a call of a tool made by :func:`tools_from_openapi`."""
    extra = tool.vendor_extras.get(EXTRA_KEY)
    if not extra:
        raise UsageError(f"tool {tool.name!r} was not made by tools_from_openapi (it has no "
                         f"vendor_extras[{EXTRA_KEY!r}])")
    path: str = extra["path"]
    query: dict[str, Any] = {}
    headers: dict[str, str] = {}
    body: Any = None
    for arg, value in arguments.items():
        where = extra["parameters"].get(arg)
        if where is None:
            raise ArgumentError(f"tool {tool.name!r} has no argument {arg!r}", path=f"/{arg}")
        if value is None:
            continue
        place, name = where["in"], where.get("name")
        if place == "path":
            path = path.replace("{" + name + "}", quote(_text(value), safe=""))
        elif place == "query":
            query[name] = value
        elif place == "header":
            headers[name] = _text(value)
        elif name is None:
            body = value
        else:
            body = {} if body is None else body
            body[name] = value
    missing = re.findall(r"\{([^}]+)\}", path)
    if missing:
        raise ArgumentError(f"path parameter {missing[0]!r} is missing", path=f"/{missing[0]}")
    return HttpRequestSpec(extra["method"], path, query, headers, body, extra.get("server"))


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _load(document: Mapping[str, Any] | str) -> Mapping[str, Any]:
    if isinstance(document, Mapping):
        return document
    try:
        loaded = json.loads(document)
    except ValueError:
        try:  # optional: YAML documents need PyYAML
            yaml = importlib.import_module("yaml")
        except ImportError:
            raise UsageError("the OpenAPI document is not JSON; install PyYAML to read "
                             "YAML documents") from None
        loaded = yaml.safe_load(document)
    if not isinstance(loaded, Mapping):
        raise UsageError("an OpenAPI document must be a JSON/YAML object")
    return loaded


def _deref(doc: Mapping[str, Any], node: Any) -> Any:
    """Follow `$ref`s to components (parameters, requestBodies), at most 32 hops."""
    for _ in range(32):
        if not (isinstance(node, Mapping) and isinstance(node.get("$ref"), str)):
            return node
        ref: str = node["$ref"]
        target: Any = doc
        for token in ref.removeprefix("#/").split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            target = target.get(token) if isinstance(target, Mapping) else None
        if target is None:
            raise UsageError(f"OpenAPI reference {ref!r} points to nothing in the document")
        node = target
    raise UsageError("OpenAPI references loop")


def _parameters(
    doc: Mapping[str, Any], raw: list[Any],
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[str]]:
    by_key: dict[tuple[str, str], Mapping[str, Any]] = {}
    for item in raw:  # operation-level parameters override path-level ones (same name + in)
        param = _deref(doc, item)
        if isinstance(param, Mapping) and param.get("in") in ("path", "query", "header"):
            by_key[(param["name"], param["in"])] = param
    props: dict[str, Any] = {}
    mapping: dict[str, dict[str, Any]] = {}
    required: list[str] = []
    for (name, place), param in by_key.items():
        arg = name if name not in props else f"{place}_{name}"
        schema = param.get("schema")
        if schema is None:
            content = param.get("content") or {}
            schema = next((m.get("schema") for m in content.values()
                           if isinstance(m, Mapping)), None)
        sub = dict(schema) if isinstance(schema, Mapping) else {}
        if param.get("description") and "description" not in sub:
            sub["description"] = param["description"]
        props[arg] = sub
        mapping[arg] = {"in": place, "name": name}
        if param.get("required") or place == "path":
            required.append(arg)
    return props, mapping, required


def _body(
    doc: Mapping[str, Any], raw: Any, props: dict[str, Any],
    mapping: dict[str, dict[str, Any]], required: list[str],
) -> None:
    body = _deref(doc, raw)
    if not isinstance(body, Mapping):
        return
    content = body.get("content") or {}
    media = next((content[m] for m in content if m == "application/json" or
                  m.endswith("+json")), None) or next(iter(content.values()), None)
    if not isinstance(media, Mapping):
        return
    schema = _deref(doc, media.get("schema") or {})
    inner = schema.get("properties") if isinstance(schema, Mapping) else None
    if (isinstance(inner, Mapping) and not set(inner) & set(props)
            and not set(schema) & {"allOf", "anyOf", "oneOf", "additionalProperties"}):
        for name, sub in inner.items():
            props[name] = sub
            mapping[name] = {"in": "body", "name": name}
        if body.get("required"):
            required.extend(n for n in schema.get("required", ()) if n in inner)
        return
    arg = "body" if "body" not in props else "request_body"
    props[arg] = dict(media.get("schema") or {})
    mapping[arg] = {"in": "body", "name": None}
    if body.get("required"):
        required.append(arg)


def _tool_name(operation_id: Any, method: str, path: str) -> str:
    raw = operation_id if isinstance(operation_id, str) and operation_id else f"{method}_{path}"
    name = re.sub(r"[^A-Za-z0-9-]+", "_", raw).strip("_") or method
    return name[:64]


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        suffix = f"_{n}"
        candidate = name[: 64 - len(suffix)] + suffix
    taken.add(candidate)
    return candidate
