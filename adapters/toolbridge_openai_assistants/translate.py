"""Pure translations between the neutral model and the Assistants wire (no I/O)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import (
    SchemaConversionError,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UsageError,
    WireFormatError,
)
from toolbridge.plugin import PendingCalls, RenderedTools, read_arguments
from toolbridge.runtime import output_text
from toolbridge.schema import convert_schema

from .wire import DIALECT, MAX_OUTPUT_CHARS, AssistantsCorrelation, run_of

__all__ = [
    "drop_absent_nulls",
    "error_output",
    "read_calls",
    "render_tool",
    "render_tool_choice",
    "render_tools",
    "write_results",
]


def render_tool(
    tool: ToolDefinition, *, policy: Any = "describe"
) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """One nested function tool, and the schema losses of its strict conversion."""
    imported = _imported(tool)
    if imported is not None:
        return {"type": "function", "function": imported}, ()
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    losses: tuple[Any, ...] = ()
    if tool.strict is True:
        conversion = convert_schema(tool.parameters, "openai-strict", policy=policy)
        function["parameters"], losses = conversion.schema, tuple(conversion.losses)
        function["strict"] = True
    elif tool.strict is None:
        try:  # strict only when nothing at all is lost
            conversion = convert_schema(tool.parameters, "openai-strict", policy="lossless")
        except SchemaConversionError:
            function["parameters"] = tool.parameters  # not lossless: send it as declared
        else:
            function["parameters"], function["strict"] = conversion.schema, True
    else:
        function["parameters"], function["strict"] = tool.parameters, False
    return {"type": "function", "function": function}, losses


def _imported(tool: ToolDefinition) -> dict[str, Any] | None:
    """The original definition of a tool imported by `tools_from_assistant`, if unchanged.

    Sent verbatim so an existing assistant's tools reach the API byte for byte as before.
    """
    original = tool.vendor_extras.get(DIALECT, {}).get("function")
    if not isinstance(original, Mapping):
        return None
    same = (original.get("name") == tool.name
            and (original.get("description") or "") == tool.description
            and original.get("strict") == tool.strict
            and original.get("parameters", tool.parameters) == tool.parameters)
    return dict(original) if same else None


def render_tools(tools: Sequence[ToolDefinition], *, policy: Any = "describe") -> RenderedTools:
    """Every tool as ``{"type": "function", "function": {...}}``, with losses per tool name."""
    return RenderedTools.each(tools, lambda tool: render_tool(tool, policy=policy))


def render_tool_choice(choice: ToolChoice) -> Any:
    """``"auto"``, ``"none"``, ``"required"`` or ``{"type": "function", "function": {name}}``."""
    if choice.mode == "tool":
        return {"type": "function", "function": {"name": choice.tool}}
    return choice.mode


def _text(value: Any, field: str, body: Any) -> str:
    if not isinstance(value, str) or not value:
        raise WireFormatError(DIALECT, field, "missing or not a non-empty string", body)
    return value


def read_calls(payload: Mapping[str, Any]) -> PendingCalls:
    """The function calls a run (or a ``thread.run.requires_action`` event) waits on."""
    run, at = run_of(payload)
    if not isinstance(run, Mapping):
        raise WireFormatError(DIALECT, at.rstrip(".") or "<payload>", "not a run object", payload)
    if "required_action" not in run and "status" not in run:
        raise WireFormatError(DIALECT, f"{at}required_action",
                              "missing: this is not an Assistants run object", payload)
    action = run.get("required_action")
    if action is None:
        return PendingCalls(())
    if not isinstance(action, Mapping):
        raise WireFormatError(DIALECT, f"{at}required_action", "not an object", payload)
    if action.get("type") != "submit_tool_outputs":
        return PendingCalls((), (action,))
    submit = action.get("submit_tool_outputs")
    if not isinstance(submit, Mapping):
        raise WireFormatError(DIALECT, f"{at}required_action.submit_tool_outputs",
                              "missing or not an object", payload)
    prefix, at = at, f"{at}required_action.submit_tool_outputs.tool_calls"
    tool_calls = submit.get("tool_calls")
    if not isinstance(tool_calls, list):
        raise WireFormatError(DIALECT, at, "missing or not a list", payload)
    thread_id = _text(run.get("thread_id"), f"{prefix}thread_id", payload)
    run_id = _text(run.get("id"), f"{prefix}id", payload)
    expires_at = run.get("expires_at")
    calls: list[ToolCall] = []
    others: list[Mapping[str, Any]] = []
    for i, item in enumerate(tool_calls):
        if not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, f"{at}[{i}]", "not an object", payload)
        call_id = _text(item.get("id"), f"{at}[{i}].id", payload)
        if item.get("type", "function") != "function":
            others.append(item)
            continue
        function = item.get("function")
        if not isinstance(function, Mapping):
            raise WireFormatError(DIALECT, f"{at}[{i}].function", "missing or not an object",
                                  payload)
        name = _text(function.get("name"), f"{at}[{i}].function.name", payload)
        # JSON text (an object, as some SDK-built payloads hold, is taken too), bounded.
        arguments, raw, error = read_arguments(function.get("arguments"))
        calls.append(ToolCall(
            id=call_id, name=name, arguments=arguments, raw_arguments=raw,
            argument_error=error, dialect=DIALECT, conversation=thread_id, turn=run_id,
            correlation=AssistantsCorrelation(
                thread_id=thread_id, run_id=run_id, tool_call_id=call_id,
                expires_at=expires_at if isinstance(expires_at, int) else None),
        ))
    return PendingCalls(tuple(calls), tuple(others))


def error_output(message: str) -> str:
    """The documented error form of an output: ``{"error": "<message>"}`` as JSON text."""
    return json.dumps({"error": message}, ensure_ascii=False)


def _output(result: ToolResult) -> str:
    if not result.success:
        text = error_output(result.error or "the tool failed")
    else:
        text = output_text(result.output)
    if len(text) > MAX_OUTPUT_CHARS:
        text = error_output(f"{result.call.name} returned {len(text)} characters; the "
                            f"Assistants API accepts at most {MAX_OUTPUT_CHARS} per output")
    return text


def write_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """``{"tool_outputs": [{"tool_call_id", "output"}]}``: every result of one run, one body."""
    runs = {(r.call.conversation, r.call.turn) for r in results}
    if len(runs) > 1:
        raise UsageError("openai-assistants: results of several runs cannot go in one "
                         f"submit_tool_outputs body (runs: {sorted(t for _, t in runs)})")
    return {"tool_outputs": [{"tool_call_id": r.call.id, "output": _output(r)}
                             for r in results]}


# ------------------------------------------------------------------ strict nulls
def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    for _ in range(32):
        ref = schema.get("$ref") if isinstance(schema, Mapping) else None
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(
                node, Mapping) else None
        schema = node
    return schema


def _accepts_null(schema: Any, root: Mapping[str, Any]) -> bool:
    schema = _resolve(schema, root)
    if not isinstance(schema, Mapping):
        return schema is not False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "const" in schema:
        return schema["const"] is None
    if "enum" in schema:
        return None in schema["enum"]
    if kind is not None:
        return False
    if any(k in schema for k in ("anyOf", "oneOf")):
        return any(_accepts_null(s, root) for s in schema.get("anyOf", schema.get("oneOf", ())))
    if "allOf" in schema:
        return all(_accepts_null(s, root) for s in schema["allOf"])
    return True


def drop_absent_nulls(value: Any, schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """Drop ``null`` given for optional properties whose schema does not accept null.

    Strict mode makes every optional property required and nullable; the model answers
    "absent" with ``null``. Dropping it lets the handler's default apply again. The walk of a
    tool's schema is compiled once per schema (it is on every call's path) and visits only
    the places where a ``null`` can be dropped; what it leaves unchanged it returns as it is.
    """
    if depth or schema is not root:
        return _drop_walk(value, schema, root, depth)
    hit = _NULL_PLANS.get(id(root))
    if hit is None or hit[0] is not root:
        if len(_NULL_PLANS) >= 512:
            _NULL_PLANS.pop(next(iter(_NULL_PLANS)))
        hit = _NULL_PLANS[id(root)] = (root, _NullPlans(root).node(root, 0))
    step = hit[1]
    return value if step is None else step(value)


_NULL_PLANS: dict[int, tuple[Mapping[str, Any], Any]] = {}
"""By ``id`` of a root schema (kept alive here): its compiled `drop_absent_nulls`."""


class _NullPlans:
    """Compiles `_drop_walk` for one root: per node, a function, or ``None`` (no change)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.busy: set[int] = set()  # nodes being compiled: a recursive type walks at run time

    def node(self, schema: Any, depth: int) -> Any:
        schema = _resolve(schema, self.root)
        if depth > 64 or not isinstance(schema, Mapping):
            return None
        if id(schema) in self.busy:
            root = self.root
            return lambda value: _drop_walk(value, schema, root, depth)
        self.busy.add(id(schema))
        try:
            return self._compile(schema, depth)
        finally:
            self.busy.discard(id(schema))

    def _compile(self, schema: Mapping[str, Any], depth: int) -> Any:
        props = schema.get("properties")
        items = schema.get("items")
        obj = None
        if isinstance(props, Mapping):
            required = set(schema.get("required", ()))
            absent = frozenset(key for key, sub in props.items()
                               if key not in required and not _accepts_null(sub, self.root))
            inner = {key: step for key, sub in props.items()
                     if (step := self.node(sub, depth + 1)) is not None}
            if absent or inner:
                obj = _object_step(absent, inner)
        arr = None
        if isinstance(items, Mapping):
            step = self.node(items, depth + 1)
            if step is not None:
                arr = _array_step(step)
        if obj is None and arr is None:
            return None
        return lambda value: (obj(value) if obj is not None and isinstance(value, dict) else
                              arr(value) if arr is not None and isinstance(value, list) else
                              value)


def _object_step(absent: frozenset[str], inner: Mapping[str, Any]) -> Any:
    def drop(value: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] | None = None
        for key in absent:
            if key in value and value[key] is None:
                out = dict(value) if out is None else out
                del out[key]
        for key, step in inner.items():
            item = value.get(key)
            if item is not None and (out is None or key in out):
                new = step(item)
                if new is not item:
                    out = dict(value) if out is None else out
                    out[key] = new
        return value if out is None else out

    return drop


def _array_step(step: Any) -> Any:
    def drop(value: list[Any]) -> list[Any]:
        out = [step(item) for item in value]
        return value if all(a is b for a, b in zip(out, value, strict=True)) else out

    return drop


def _drop_walk(value: Any, schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """`drop_absent_nulls` walking ``schema`` as it goes (below a recursive type)."""
    schema = _resolve(schema, root)
    if depth > 64 or not isinstance(schema, Mapping):
        return value
    props = schema.get("properties")
    if isinstance(value, dict) and isinstance(props, Mapping):
        required = set(schema.get("required", ()))
        out = {}
        for key, item in value.items():
            sub = props.get(key)
            if sub is None:
                out[key] = item
            elif item is None and key not in required and not _accepts_null(sub, root):
                continue
            else:
                out[key] = _drop_walk(item, sub, root, depth + 1)
        return out
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [_drop_walk(v, items, root, depth + 1) for v in value]
    return value
