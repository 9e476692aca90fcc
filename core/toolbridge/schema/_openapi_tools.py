"""Tools from an OpenAPI 3.0/3.1 document, and the HTTP request back from a tool call."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from toolbridge._articles import a, a_value_of
from toolbridge.errors import ArgumentError, SchemaConversionError, UsageError, validation_text
from toolbridge.schema._openapi_direction import for_direction
from toolbridge.schema._to_json_schema import to_json_schema
from toolbridge.schema._walk import check_bounds, short

if TYPE_CHECKING:
    from toolbridge.model import ToolDefinition

__all__ = ["HttpRequestSpec", "build_http_request", "tools_from_openapi"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
PLACES = ("path", "query", "header", "cookie")
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
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
    """The body, for a JSON (or other non-form) media type."""
    server: str | None = None
    cookies: dict[str, str] = field(default_factory=dict)
    """``in: cookie`` parameters."""
    form_body: dict[str, str] | None = None
    """The body's fields, for ``application/x-www-form-urlencoded`` and ``multipart/form-data``
    (values as text; objects and arrays as compact JSON)."""
    content_type: str | None = None
    """The body's media type, as the document declares it; ``None`` without a body."""


def tools_from_openapi(document: Mapping[str, Any] | str) -> list[ToolDefinition]:
    """Make one :class:`~toolbridge.model.ToolDefinition` per operation of an OpenAPI document.

    Path, query, header and cookie parameters and the request body (JSON, or form fields)
    are merged into one object schema, as a request sees it: ``readOnly`` properties are left
    out (OpenAPI sends them in responses only). The first 2xx JSON response becomes
    ``returns``, without its ``writeOnly`` properties. ``vendor_extras["openapi"]`` keeps
    ``method``, ``path``, ``server``, the body's ``content_type`` and, per argument, where it
    goes (``{"in": "path", "name": "petId"}``; a whole non-object body is the argument
    ``body`` with ``"name": None``) for :func:`build_http_request`; ``losses`` lists what a
    request cannot carry (a body only of a media type JSON arguments cannot encode). A
    document that does not have OpenAPI's shape raises `UsageError` naming where; a schema
    that cannot become JSON Schema raises `SchemaConversionError` naming the operation.
    """
    from pydantic import ValidationError

    from toolbridge.model import ToolDefinition

    doc = _load(document)
    check_bounds(doc, what="the OpenAPI document", json_only=False)
    version = str(doc.get("openapi", "3.0"))
    source = "openapi-3.1" if version.startswith("3.1") else "openapi-3.0"
    components = _mapping(doc.get("components"), "components")
    defs = dict(_mapping(components.get("schemas"), "components.schemas"))
    servers = doc.get("servers") or []
    tools: list[ToolDefinition] = []
    names: set[str] = set()
    for path, item in _mapping(doc.get("paths"), "paths").items():
        if not isinstance(item, Mapping):
            continue
        shared = _list(item.get("parameters"), f"paths.{path}.parameters")
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, Mapping):
                continue
            where = f"paths.{path}.{method}"
            params, mapping, required = _parameters(
                doc, [*shared, *_list(op.get("parameters"), f"{where}.parameters")], where)
            media = _body(doc, op.get("requestBody"), params, mapping, required, where)
            schema: dict[str, Any] = {"type": "object", "properties": params}
            if required:
                schema["required"] = required
            if defs:
                schema["$defs"] = defs
            schema = for_direction(schema, "request", defs)
            mapping = {arg: to for arg, to in mapping.items() if arg in schema["properties"]}
            try:
                parameters = to_json_schema(schema, source).schema  # type: ignore[arg-type]
            except SchemaConversionError as exc:
                raise SchemaConversionError(f"{method.upper()} {path}: {exc}",
                                            exc.losses) from None
            name = _unique(_tool_name(op.get("operationId"), method, path), names)
            description = "\n\n".join(p for p in (op.get("summary"), op.get("description"))
                                       if isinstance(p, str) and p)
            extra: dict[str, Any] = {"method": method.upper(), "path": path,
                                     "parameters": mapping}
            if media is not None:
                extra["content_type"] = media
                if not (_is_json(media) or media in FORM_TYPES):
                    extra["losses"] = [f"{where}.requestBody: {media} cannot be written from "
                                       "JSON arguments; the body argument is passed as it is"]
            op_servers = op.get("servers") or item.get("servers") or servers
            if isinstance(op_servers, list) and op_servers and isinstance(
                    op_servers[0], Mapping) and isinstance(op_servers[0].get("url"), str):
                extra["server"] = op_servers[0]["url"]
            returns = _returns(doc, op.get("responses"), defs, source, where)
            try:
                tools.append(ToolDefinition(name=name, description=description,
                                            parameters=parameters, returns=returns,
                                            vendor_extras={EXTRA_KEY: extra}))
            except ValidationError as exc:
                raise UsageError(f"OpenAPI document: {where}: "
                                 f"{validation_text(exc)}") from None
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
    cookies: dict[str, str] = {}
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
        elif place == "cookie":
            cookies[name] = _text(value)
        elif name is None:
            body = value
        else:
            body = {} if body is None else body
            body[name] = value
    missing = re.findall(r"\{([^}]+)\}", path)
    if missing:
        raise ArgumentError(f"path parameter {missing[0]!r} is missing", path=f"/{missing[0]}")
    media = extra.get("content_type")
    form: dict[str, str] | None = None
    if media in FORM_TYPES and body is not None:
        if not isinstance(body, Mapping):
            raise ArgumentError(f"tool {tool.name!r}: {a(media)} body is a set of fields, not "
                                f"{a_value_of(body)}", path="/body")
        form, body = {str(k): _text(v) for k, v in body.items() if v is not None}, None
    return HttpRequestSpec(extra["method"], path, query, headers, body, extra.get("server"),
                           cookies, form, media if body is not None or form is not None
                           else None)


def _is_json(media: str) -> bool:
    return media == "application/json" or media.endswith("+json")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _load(document: Mapping[str, Any] | str) -> Mapping[str, Any]:
    if isinstance(document, Mapping):
        return document
    if not isinstance(document, (str, bytes)):
        raise UsageError(f"an OpenAPI document is a mapping or JSON/YAML text, not "
                         f"{type(document).__name__}")
    try:
        loaded = json.loads(document)
    except RecursionError:
        raise UsageError("the OpenAPI document is nested too deeply") from None
    except ValueError:
        try:  # optional: YAML documents need PyYAML
            yaml = importlib.import_module("yaml")
        except ImportError:
            raise UsageError("the OpenAPI document is not JSON; install PyYAML to read "
                             "YAML documents") from None
        try:
            loaded = yaml.safe_load(document)
        except (yaml.YAMLError, RecursionError, ValueError) as exc:
            raise UsageError(f"the OpenAPI document is neither JSON nor YAML ({exc})") from None
    if not isinstance(loaded, Mapping):
        raise UsageError("an OpenAPI document must be a JSON/YAML object")
    return loaded


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(f"OpenAPI document: {where}: expected an object, got "
                         f"{type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise UsageError(f"OpenAPI document: {where}: expected a list, got "
                         f"{type(value).__name__}")
    return value


def _schema(value: Any, where: str) -> dict[str, Any]:
    """A Schema Object as a dict: ``true`` (3.1) accepts anything, ``false`` nothing."""
    if isinstance(value, Mapping):
        return dict(value)
    if value is True or value is None:
        return {}
    if value is False:
        return {"not": {}}
    raise SchemaConversionError(f"OpenAPI document: {where}: a schema must be an object "
                                f"(or a boolean in 3.1), not {short(value)}")


def _deref(doc: Mapping[str, Any], node: Any, where: str) -> Any:
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
            raise UsageError(f"OpenAPI document: {where}: reference {ref!r} points to nothing "
                             "in the document")
        node = target
    raise UsageError(f"OpenAPI document: {where}: references loop")


def _parameters(
    doc: Mapping[str, Any], raw: list[Any], where: str,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[str]]:
    by_key: dict[tuple[str, str], Mapping[str, Any]] = {}
    for index, item in enumerate(raw):  # operation-level ones override path-level ones
        at = f"{where}.parameters[{index}]"
        param = _deref(doc, item, at)
        if isinstance(param, Mapping) and param.get("in") in PLACES:
            if not isinstance(param.get("name"), str) or not param["name"]:
                raise UsageError(f"OpenAPI document: {at}.name: missing or not a string")
            by_key[(param["name"], param["in"])] = param
    props: dict[str, Any] = {}
    mapping: dict[str, dict[str, Any]] = {}
    required: list[str] = []
    for (name, place), param in by_key.items():
        arg = name if name not in props else f"{place}_{name}"
        at = f"{where}.parameters.{name}"
        schema = param.get("schema")
        if schema is None:
            content = _mapping(param.get("content"), f"{at}.content")
            schema = next((m.get("schema") for m in content.values()
                           if isinstance(m, Mapping)), None)
        sub = _schema(schema, f"{at}.schema")
        if isinstance(param.get("description"), str) and param["description"] and (
                "description" not in sub):
            sub["description"] = param["description"]
        props[arg] = sub
        mapping[arg] = {"in": place, "name": name}
        if param.get("required") is True or place == "path":
            required.append(arg)
    return props, mapping, required


def _body(
    doc: Mapping[str, Any], raw: Any, props: dict[str, Any],
    mapping: dict[str, dict[str, Any]], required: list[str], where: str,
) -> str | None:
    """Merge the request body into ``props``; its media type (JSON first, then a form)."""
    at = f"{where}.requestBody"
    body = _deref(doc, raw, at)
    if not isinstance(body, Mapping):
        return None
    content = _mapping(body.get("content"), f"{at}.content")
    kinds = [m for m in content if isinstance(m, str)]
    kind = next((m for m in kinds if _is_json(m)), None) or next(
        (m for m in kinds if m in FORM_TYPES), None) or next(iter(kinds), None)
    media = content.get(kind) if kind is not None else None
    if not isinstance(media, Mapping):
        return None
    schema = _deref(doc, media.get("schema"), f"{at}.content.schema")
    inner = schema.get("properties") if isinstance(schema, Mapping) else None
    if (isinstance(schema, Mapping) and isinstance(inner, Mapping) and not set(inner) & set(props)
            and not set(schema) & {"allOf", "anyOf", "oneOf", "additionalProperties"}):
        for name, sub in inner.items():
            props[name] = sub
            mapping[name] = {"in": "body", "name": name}
        wanted = schema.get("required")
        if body.get("required") is True and isinstance(wanted, list):
            required.extend(n for n in wanted if isinstance(n, str) and n in inner)
        return kind
    arg = "body" if "body" not in props else "request_body"
    props[arg] = _schema(media.get("schema"), f"{at}.content.schema")
    mapping[arg] = {"in": "body", "name": None}
    if body.get("required") is True:
        required.append(arg)
    return kind


def _returns(doc: Mapping[str, Any], raw: Any, defs: Mapping[str, Any], source: str,
             where: str) -> dict[str, Any] | None:
    """The first 2xx JSON response's schema, as a response sees it (no ``writeOnly``
    properties), as JSON Schema; ``None`` when there is none or it does not convert."""
    responses = raw if isinstance(raw, Mapping) else {}
    for code in sorted(str(c) for c in responses):
        if not (code.startswith("2") and len(code) == 3):
            continue
        answer = _deref(doc, responses.get(code, responses.get(int(code) if code.isdigit()
                                                               else code)), where)
        content = answer.get("content") if isinstance(answer, Mapping) else None
        if not isinstance(content, Mapping):
            continue
        media = next((content[m] for m in content if isinstance(m, str) and _is_json(m)), None)
        found = _deref(doc, media.get("schema"), where) if isinstance(media, Mapping) else None
        if not isinstance(found, Mapping):
            continue
        schema = dict(found)
        own = schema.get("$defs")
        if defs:
            schema["$defs"] = {**defs, **(own if isinstance(own, Mapping) else {})}
        try:
            return to_json_schema(for_direction(schema, "response", defs),
                                  source).schema  # type: ignore[arg-type]
        except SchemaConversionError:
            return None  # an output schema is optional: the tool works without it
    return None


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
