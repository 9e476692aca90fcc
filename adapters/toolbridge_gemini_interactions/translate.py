"""Pure translations between the neutral model and the Interactions wire (no I/O)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from toolbridge import (
    Content,
    Correlation,
    ImagePart,
    TextPart,
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
    read_arguments,
    reading,
)
from toolbridge.runtime import output_text

from .wire import ACTIVE_STATUSES, DIALECT, MAX_RESULT_CHARS

__all__ = [
    "InteractionCorrelation",
    "interaction_of",
    "read_calls",
    "read_records",
    "render_tool",
    "render_tool_choice",
    "render_tools",
    "result_step",
    "text_of",
    "write_records",
    "write_results",
]

_CLIENT_STEPS = frozenset({"function_call"})
_TERMINAL_EVENTS = ("interaction.completed",)


class InteractionCorrelation(Correlation):
    """What answering a call needs: the interaction that asked, and the call."""

    interaction_id: str
    call_id: str
    chain: str = ""
    """The chain's first interaction id (what keys the conversation), when known."""


class _Asked(NamedTuple):
    """`InteractionCorrelation`'s fields, as a record holds them (`read_records`): the writer
    reads them as they are; called, they are the correlation (`toolbridge.plugin.CallRecord`
    calls it when the record's `ToolCall` is made)."""

    interaction_id: str
    call_id: str
    chain: str

    def __call__(self) -> InteractionCorrelation:
        return InteractionCorrelation.trusted(interaction_id=self.interaction_id,
                                              call_id=self.call_id, chain=self.chain)


_new_asked = tuple.__new__  # _Asked(...) without its Python __new__
_MISSING: Any = object()


# ---------------------------------------------------------------------- definitions
def render_tool(tool: ToolDefinition, *, policy: Any = "describe"
                ) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """``{"type": "function", "name", "description", "parameters"}``, and the losses of the
    parameters' conversion to the Gemini schema."""
    from ._schema import gemini_parameters  # the schema engine: on first use

    wire: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description:
        wire["description"] = tool.description
    wire["parameters"], losses = gemini_parameters(tool.parameters, policy=policy)
    if tool.defer_loading:
        wire["defer_loading"] = True
    extras = tool.vendor_extras.get(DIALECT, {})
    wire.update({k: v for k, v in extras.items()
                 if k in ("short_description",) and isinstance(v, str)})
    return wire, losses


def render_tools(tools: Sequence[ToolDefinition], *, policy: Any = "describe") -> RenderedTools:
    """The ``tools`` list of a create: one function entry per tool."""
    return RenderedTools.each(tools, lambda tool: render_tool(tool, policy=policy))


def render_tool_choice(choice: ToolChoice) -> Any:
    """``generation_config.tool_choice``: ``auto``, ``none``, ``any`` (required) or
    ``{"allowed_tools": {"mode": "any", "tools": [name]}}``."""
    if choice.mode == "tool":
        return {"allowed_tools": {"mode": "any", "tools": [choice.tool]}}
    return {"required": "any"}.get(choice.mode, choice.mode)


# ---------------------------------------------------------------------- pending calls
def _text(value: Any, field: str, body: Any) -> str:
    if not isinstance(value, str) or not value:
        raise WireFormatError(DIALECT, field, "missing or not a non-empty string", body)
    return value


def interaction_of(payload: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """The interaction in ``payload`` and the field prefix naming it in errors: an
    ``Interaction`` (create, get, a gathered stream) or an ``interaction.completed`` event."""
    kind = payload.get("event_type")
    if kind in _TERMINAL_EVENTS:
        interaction = payload.get("interaction")
        if not isinstance(interaction, Mapping):
            raise WireFormatError(DIALECT, "interaction", "missing or not an object", payload)
        return interaction, "interaction."
    if isinstance(kind, str):
        raise WireFormatError(
            DIALECT, "event_type",
            f"a lone {kind!r} event is not a payload: pass the interaction (or the "
            "interaction.completed event)", payload)
    if payload.get("type") == "function_call":
        raise WireFormatError(DIALECT, "type", "a function_call step alone has no interaction "
                              "id; pass the interaction whose steps hold it", payload)
    if "status" not in payload and "steps" not in payload:
        raise WireFormatError(DIALECT, "status", "missing: expected an interaction", payload)
    return payload, ""


def read_calls(payload: Mapping[str, Any], conversation: str | None = None) -> PendingCalls:
    """The ``function_call`` steps of an interaction that ``requires_action``.

    Store keys: ``(conversation, "", call id)`` for an interaction of a known chain
    (``conversation``: the caller's, or the chain's first interaction id; call ids are unique,
    so a model naming an answered call's id again is caught), else ``(interaction id,
    interaction id, call id)``. An interaction in any other status has nothing pending
    (``in_progress``: not yet).
    """
    pending: PendingCalls = _read(payload, conversation, False)
    return pending


def read_records(payload: Mapping[str, Any], conversation: str | None = None) -> PendingRecords:
    """`read_calls`, the calls as the runtime's records (`Dialect.read_records`). Each
    record keeps its correlation's fields (writing reads the interaction id), the
    correlation made only with the record's `ToolCall`."""
    pending: PendingRecords = _read(payload, conversation, True)
    return pending


def _read(payload: Mapping[str, Any], conversation: str | None, records: bool) -> Any:
    pending, make = reading(records)
    interaction, at = interaction_of(payload)
    interaction_id = _text(interaction.get("id"), f"{at}id", payload)
    status = interaction.get("status")
    if not isinstance(status, str):
        raise WireFormatError(DIALECT, f"{at}status", "missing or not a string", payload)
    steps = interaction.get("steps")
    if steps is None and status in ACTIVE_STATUSES:
        return pending((), reason=f"the interaction's status is {status!r}: no steps yet")
    if steps is None:
        steps = []
    if not isinstance(steps, list):
        raise WireFormatError(DIALECT, f"{at}steps", "not a list", payload)
    key = conversation or interaction_id
    turn = "" if conversation else interaction_id
    chain = conversation or ""
    calls: list[Any] = []
    for i, step in enumerate(steps):
        # Exact types first (JSON gives dicts and strs: the ABC checks are slow per step);
        # a field path is formatted only for its error.
        if type(step) is not dict and not isinstance(step, Mapping):
            raise WireFormatError(DIALECT, f"{at}steps[{i}]", "not an object", payload)
        kind = step.get("type")
        if type(kind) is not str and not isinstance(kind, str):
            raise WireFormatError(DIALECT, f"{at}steps[{i}].type", "missing or not a string",
                                  payload)
        if kind not in _CLIENT_STEPS:
            continue
        call_id, name = step.get("id"), step.get("name")
        if type(call_id) is not str or type(name) is not str or not call_id or not name:
            call_id = _text(call_id, f"{at}steps[{i}].id", payload)
            name = _text(name, f"{at}steps[{i}].name", payload)
        given = step.get("arguments", _MISSING)
        if given is _MISSING:
            raise WireFormatError(DIALECT, f"{at}steps[{i}].arguments", "missing", payload)
        arguments, raw, error = read_arguments(given, none=False)
        calls.append(make(
            id=call_id, name=name, arguments=arguments, raw_arguments=raw,
            argument_error=error, dialect=DIALECT, conversation=key, turn=turn,
            correlation=_new_asked(_Asked, (interaction_id, call_id, chain)) if records
            else InteractionCorrelation.trusted(
                interaction_id=interaction_id, call_id=call_id, chain=chain)))
    if status != "requires_action":
        return pending((), reason=f"the interaction's status is {status!r}: "
                       + ("its calls are not pending" if calls else "nothing waits"))
    if not calls:
        return pending((), reason="the interaction requires action but holds no "
                       "function_call step")
    return pending(tuple(calls))


def text_of(interaction: Mapping[str, Any]) -> str:
    """The text of the interaction's ``model_output`` steps."""
    return "".join(str(part.get("text", "")) for step in interaction.get("steps") or []
                   if isinstance(step, Mapping) and step.get("type") == "model_output"
                   for part in step.get("content") or []
                   if isinstance(part, Mapping) and part.get("type") == "text")


# ---------------------------------------------------------------------- results
def _parts(content: Content) -> list[dict[str, str]]:
    parts: list[dict[str, str]] = []
    for part in content.parts:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            if part.url.startswith("data:") and ";base64," in part.url:
                head, data = part.url.split(";base64,", 1)
                parts.append({"type": "image", "data": data, "mime_type": head[5:]})
            else:
                parts.append({"type": "image", "uri": part.url})
        elif part.media_type == "application/pdf":  # text/plain is no document type here
            where = {"uri": part.url} if part.url is not None else {"data": str(part.data)}
            parts.append({"type": "document", "mime_type": part.media_type, **where})
        else:
            parts.append({"type": "text", "text": part.as_text()})
    return parts


def result_step(result: ToolResult) -> dict[str, Any]:
    """One ``function_result`` step: the output's text (or parts), or the error with
    ``is_error`` (the wire has the flag)."""
    step: dict[str, Any] = {"type": "function_result", "call_id": result.call.id,
                            "name": result.call.name}
    if not result.success:
        step.update(result=result.error or "the tool failed", is_error=True)
        return step
    if isinstance(result.output, Content):
        step["result"] = _parts(result.output)
        return step
    text = output_text(result.output)
    if len(text) > MAX_RESULT_CHARS:
        step.update(result=f"{result.call.name} returned {len(text):,} characters; at most "
                    f"{MAX_RESULT_CHARS:,} are sent per result", is_error=True)
        return step
    step["result"] = text
    return step


def _interaction_of(correlation: Any, turn: str) -> str:
    """The id of the interaction that asked for a call (of this correlation and turn)."""
    if type(correlation) is _Asked or isinstance(correlation, InteractionCorrelation):
        return correlation.interaction_id
    return turn


def _continuation(asking: set[str], first_id: str, steps: list[dict[str, Any]]
                  ) -> dict[str, Any]:
    if len(asking) > 1:
        raise UsageError(f"{DIALECT}: results of several interactions cannot continue one "
                         f"create (interactions: {sorted(asking)})")
    previous = asking.pop()
    if not previous:
        raise UsageError(f"{DIALECT}: call {first_id!r} has no interaction id; read "
                         "calls with read_calls so the continuation can be named")
    return {"previous_interaction_id": previous, "input": steps}


def write_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """The create body continuing the interaction that asked: ``previous_interaction_id``
    and ``input`` (one ``function_result`` step per call). Model and tools are the caller's."""
    if not results:
        return {"input": []}
    asking = {_interaction_of(r.call.correlation, r.call.turn) for r in results}
    return _continuation(asking, results[0].call.id, [result_step(r) for r in results])


def write_records(records: Sequence[CallRecord]) -> dict[str, Any]:
    """`write_results` of answered records (`Dialect.write_records`)."""
    if not records:
        return {"input": []}
    steps: list[dict[str, Any]] = []
    for record in records:
        text = record.sent_text()
        if text is not None and len(text) <= MAX_RESULT_CHARS:
            steps.append({"type": "function_result", "call_id": record.id,
                          "name": record.name, "result": text})
            continue
        result = record.result()
        assert result is not None  # only answered records are written
        steps.append(result_step(result))
    asking = {_interaction_of(r.correlation, r.turn) for r in records}
    return _continuation(asking, records[0].id, steps)
