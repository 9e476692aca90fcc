"""Pure translations between the neutral model and the Assistants wire (no I/O)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from toolbridge import (
    Correlation,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UsageError,
    WireFormatError,
)
from toolbridge.plugin import (
    CallRecord,
    PendingCalls,
    PendingRecords,
    RenderedTools,
    lazy_module,
    read_arguments,
    reading,
)
from toolbridge.runtime import output_text

from .wire import DIALECT, MAX_OUTPUT_CHARS, run_of

if TYPE_CHECKING:
    from toolbridge import schema
else:
    schema = lazy_module("toolbridge.schema")  # the schema engine: on first use

__all__ = [
    "AssistantsCorrelation",
    "error_output",
    "read_calls",
    "render_tool",
    "render_tool_choice",
    "render_tools",
    "write_results",
]


class AssistantsCorrelation(Correlation):
    """What answering a call needs: the submit URL's ids, the call id, and the run's expiry."""

    thread_id: str
    run_id: str
    tool_call_id: str
    expires_at: int | None = None
    """Unix time after which the run no longer accepts outputs."""


class _Asked(NamedTuple):
    """`AssistantsCorrelation`'s fields, as a record holds them (`read_records`); called,
    they are the correlation (`toolbridge.plugin.CallRecord` calls it when the record's
    `ToolCall` is made): cheaper than a partial per call."""

    thread_id: str
    run_id: str
    tool_call_id: str
    expires_at: int | None

    def __call__(self) -> AssistantsCorrelation:
        return AssistantsCorrelation.trusted(
            thread_id=self.thread_id, run_id=self.run_id, tool_call_id=self.tool_call_id,
            expires_at=self.expires_at)


_new_asked = tuple.__new__  # _Asked(...) without its Python __new__


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
    from toolbridge.schema import strict_parameters  # the schema engine: on first use

    sent = strict_parameters(tool.parameters, tool.strict, policy=policy)
    function["parameters"] = sent.schema
    if sent.strict or tool.strict is False:  # "strict when lossless" that was not: left out
        function["strict"] = sent.strict
    return {"type": "function", "function": function}, sent.losses


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
    if (type(value) is not str and not isinstance(value, str)) or not value:
        raise WireFormatError(DIALECT, field, "missing or not a non-empty string", body)
    return value


def read_calls(payload: Mapping[str, Any]) -> PendingCalls:
    """The function calls a run (or a ``thread.run.requires_action`` event) waits on."""
    pending: PendingCalls = _read(payload, False)
    return pending


def read_records(payload: Mapping[str, Any]) -> PendingRecords:
    """`read_calls`, the calls as the runtime's records (`Dialect.read_records`); each
    call's correlation is made only when its `ToolCall` is."""
    pending: PendingRecords = _read(payload, True)
    return pending


def _read(payload: Mapping[str, Any], records: bool) -> Any:
    pending = reading(records).pending
    run, at = run_of(payload)
    if not isinstance(run, Mapping):
        raise WireFormatError(DIALECT, at.rstrip(".") or "<payload>", "not a run object", payload)
    if "required_action" not in run and "status" not in run:
        raise WireFormatError(DIALECT, f"{at}required_action",
                              "missing: this is not an Assistants run object", payload)
    action = run.get("required_action")
    if action is None:
        return pending((), reason=f"the run's status is {run.get('status')!r}: it has no "
                       "required_action")
    if not isinstance(action, Mapping):
        raise WireFormatError(DIALECT, f"{at}required_action", "not an object", payload)
    if action.get("type") != "submit_tool_outputs":
        return pending((), (action,))
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
    expires = int(expires_at) if isinstance(expires_at, int) else None
    calls: list[Any] = []
    others: list[Mapping[str, Any]] = []
    # Ids that are text subclasses (never from JSON) go through the validating constructors.
    exact_run = type(thread_id) is type(run_id) is str
    correlate = reading(records).later(  # for records: made with the ToolCall, if ever
        AssistantsCorrelation.trusted if exact_run else AssistantsCorrelation)
    for i, item in enumerate(tool_calls):
        # Exact types first: JSON gives dicts and strs, and the ABC checks are slow per call;
        # a field path is formatted only for its error.
        if type(item) is not dict and not isinstance(item, Mapping):
            raise WireFormatError(DIALECT, f"{at}[{i}]", "not an object", payload)
        call_id = item.get("id")
        if type(call_id) is not str or not call_id:
            call_id = _text(call_id, f"{at}[{i}].id", payload)
        if item.get("type", "function") != "function":
            others.append(item)
            continue
        function = item.get("function")
        if type(function) is not dict and not isinstance(function, Mapping):
            raise WireFormatError(DIALECT, f"{at}[{i}].function", "missing or not an object",
                                  payload)
        name = function.get("name")
        if type(name) is not str or not name:
            name = _text(name, f"{at}[{i}].function.name", payload)
        # JSON text (an object, as some SDK-built payloads hold, is taken too), bounded.
        arguments, raw, error = read_arguments(function.get("arguments"))
        # Every field is checked above (text, the arguments by `read_arguments`), so the
        # trusted constructors skip pydantic's validation: it cost 1.65x the SDK's whole parse.
        plain = type(call_id) is type(name) is str
        if records and plain and exact_run:  # the correlation's fields: made into it if asked
            correlation: Any = _new_asked(_Asked, (thread_id, run_id, call_id, expires))
        else:
            correlation = correlate(thread_id=thread_id, run_id=run_id, tool_call_id=call_id,
                                    expires_at=expires)
        make = ((CallRecord.trusted if plain else _validated_record) if records
                else ToolCall.trusted if plain else ToolCall)
        calls.append(make(
            id=call_id, name=name, arguments=arguments, raw_arguments=raw,
            argument_error=error, dialect=DIALECT, conversation=thread_id, turn=run_id,
            correlation=correlation))
    return pending(tuple(calls), tuple(others))


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


def write_records(records: Sequence[CallRecord]) -> dict[str, Any]:
    """`write_results` of answered records (`Dialect.write_records`)."""
    runs = {(r.conversation, r.turn) for r in records}
    if len(runs) > 1:
        raise UsageError("openai-assistants: results of several runs cannot go in one "
                         f"submit_tool_outputs body (runs: {sorted(t for _, t in runs)})")
    outputs = []
    for record in records:
        text = record.sent_text()
        if text is not None and len(text) <= MAX_OUTPUT_CHARS:
            outputs.append({"tool_call_id": record.id, "output": text})
            continue
        result = record.result()
        assert result is not None  # only answered records are written
        outputs.append({"tool_call_id": record.id, "output": _output(result)})
    return {"tool_outputs": outputs}


def _validated_record(**fields: Any) -> CallRecord:
    """The record of a validated `ToolCall` (ids that are text subclasses, never from JSON)."""
    fields["correlation"] = fields["correlation"]()
    return CallRecord.of(ToolCall(**fields))


def write_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """``{"tool_outputs": [{"tool_call_id", "output"}]}``: every result of one run, one body."""
    runs = {(r.call.conversation, r.call.turn) for r in results}
    if len(runs) > 1:
        raise UsageError("openai-assistants: results of several runs cannot go in one "
                         f"submit_tool_outputs body (runs: {sorted(t for _, t in runs)})")
    return {"tool_outputs": [{"tool_call_id": r.call.id, "output": _output(r)}
                             for r in results]}


def decode_arguments(arguments: dict[str, Any], tool: ToolDefinition) -> dict[str, Any]:
    """Undo strict mode (`toolbridge.schema.decode_strict_arguments`): the decode of every
    call, on the arguments alone."""
    return schema.decode_strict_arguments(tool.parameters, tool.strict, arguments)
