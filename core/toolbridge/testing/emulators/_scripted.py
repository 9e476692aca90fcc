"""`ScriptedModel`: one conversation's emulated model, playing a shared `Script`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._script import Misbehaviour, Script, ScriptApproval, ScriptCall, ScriptError, ScriptTurn

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError as SchemaError
    from jsonschema.protocols import Validator

__all__ = ["ModelCall", "ScriptedModel"]

_SEND_ANYWAY = "to send it anyway, mark the call "


@dataclass(frozen=True)
class ModelCall:
    """One function call the emulated model sends, ready for the wire."""

    id: str
    name: str
    arguments: dict[str, Any]
    """The arguments object; for strict tools every absent nullable property is ``None``."""
    raw_arguments: str | None = None
    """``broken_json``: the text to send where the wire carries arguments (not JSON)."""
    misbehave: Misbehaviour | None = None
    issued: bool = True
    """False for ``hallucinated_id`` and ``repeated_id``: ``id`` is an earlier call's, not one
    issued for this."""
    approval: ScriptApproval | None = None
    """An MCP tool call the backend asks a person to approve (put on the wire as the
    dialect's approval request, ``id`` its request id); `ScriptedModel.decide` answers it."""

    @property
    def arguments_text(self) -> str:
        """The arguments as a wire that carries text sends them: raw text, else JSON."""
        return self.raw_arguments if self.raw_arguments is not None else json.dumps(
            self.arguments, ensure_ascii=False)


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


class ScriptedModel:
    """One conversation's cursor over a shared `Script`: what an emulator asks of its model.

    An emulator makes one per conversation (session, thread) and then:

    1. `declare` the conversation's tools (JSON Schema of each one's arguments; ``strict``
       names the tools whose calls must spell out every property, as strict mode does) —
       again whenever they change;
    2. `start_turn` on each user message;
    3. `next_round`: the calls to put on the wire (`ModelCall`: ``id``, ``name``,
       ``arguments`` or ``raw_arguments``); empty when the turn is over; `ScriptError` when
       the script asks for a call the session cannot make;
    4. `record` each output it receives, and `reply` for the turn's final text.

    ``new_id`` makes the dialect's call ids; ``unsupported`` maps a misbehaviour the dialect's
    wire cannot express to the reason, which a script error then gives; ``approvals``: the
    wire carries approval requests (`ModelCall.approval`; else such a call is a script error).
    """

    def __init__(self, script: Script, tools: Mapping[str, Mapping[str, Any]] | None = None, *,
                 strict: Iterable[str] = (), new_id: Callable[[], str] = _new_call_id,
                 unsupported: Mapping[str, str] | None = None, approvals: bool = False
                 ) -> None:
        self.script = script
        self.approvals = approvals
        """The backend asks for approvals on its wire (script calls with ``approval``)."""
        self.new_id = new_id
        self.unsupported = dict(unsupported or {})
        self.tools: dict[str, Mapping[str, Any]] = {}
        """Declared tools: name -> JSON Schema of the arguments."""
        self.strict: frozenset[str] = frozenset()
        self.declare(tools or {}, strict)
        self._turn_index = -1
        self._round_index = 0
        self._text = ""
        self._previous: list[ModelCall] = []
        self._replayed: list[str] = []
        self._slots: dict[str, list[int]] = {}
        """Call id -> positions, in the turn's order of calls, of its calls not answered yet."""
        self._issued = 0
        self._received: list[tuple[int, int, Any]] = []
        self._approvals: dict[str, ScriptApproval] = {}

    def declare(self, tools: Mapping[str, Mapping[str, Any]], strict: Iterable[str] = ()) -> None:
        """The conversation's tools (name -> arguments schema), and which of them are strict."""
        self.tools = {name: schema or {"type": "object"} for name, schema in tools.items()}
        self.strict = frozenset(strict)

    @property
    def turn(self) -> ScriptTurn | None:
        """The scripted turn being played, or ``None`` when the script has no turn for it."""
        if 0 <= self._turn_index < len(self.script.turns):
            return self.script.turns[self._turn_index]
        return None

    def start_turn(self, user_text: str) -> None:
        """A user message arrived: move to the next scripted turn."""
        self._turn_index += 1
        self._round_index = 0
        self._text = user_text
        self._previous = []
        self._slots = {}
        self._issued = 0
        self._received = []

    def replay_ids(self, ids: Iterable[str]) -> None:
        """The ids the next round's calls had: a stateless emulator replaying the conversation
        it was sent gives each replayed call its id again (so a later hallucinated id reuses
        the id the client really saw)."""
        self._replayed = list(ids)

    def next_round(self) -> list[ModelCall]:
        """The next round of calls, checked against the declared tools; empty when done."""
        turn = self.turn
        if turn is None or self._round_index >= len(turn.rounds):
            return []
        script_calls = turn.rounds[self._round_index]
        where = f"turn {self._turn_index + 1}, round {self._round_index + 1}"
        self._round_index += 1
        if sum(c.misbehave == "hallucinated_id" for c in script_calls) > 1:
            raise ScriptError(f"{where}: at most one hallucinated_id call per round (each "
                              "reuses the previous round's first call id)")
        if script_calls and script_calls[0].misbehave == "repeated_id":
            raise ScriptError(f"{where}: the round's first call cannot be repeated_id (it "
                              "repeats the id of the round's first call)")
        replayed, self._replayed = self._replayed, []
        calls: list[ModelCall] = []
        for i, script_call in enumerate(script_calls):
            calls.append(self._play(script_call, where,
                                    replayed[i] if i < len(replayed) else None,
                                    calls[0].id if calls else ""))
        for call in calls:
            self._slots.setdefault(call.id, []).append(self._issued)
            self._issued += 1
        self._previous = calls
        return calls

    def _play(self, call: ScriptCall, where: str, replayed: str | None, first: str
              ) -> ModelCall:
        if call.approval is not None:  # an MCP tool of the server's, not a declared one
            if not self.approvals:
                raise ScriptError(f"{where}: {call.name!r} is an approval request, which this "
                                  "backend never asks for (Agents sessions and Responses do)")
            made = ModelCall(replayed or self.new_id(), call.name, dict(call.arguments),
                             approval=call.approval)
            self._approvals[made.id] = call.approval
            return made
        arguments = self.check(call)
        if call.misbehave == "repeated_id":
            return ModelCall(first, call.name, arguments, None, call.misbehave, issued=False)
        if call.misbehave != "hallucinated_id":
            return ModelCall(replayed or self.new_id(), call.name, arguments, call.raw_arguments,
                             call.misbehave)
        if not self._previous:
            raise ScriptError(f"{where}: {call.name!r} is marked hallucinated_id, which reuses "
                              "the id of the previous round's first call; this is the turn's "
                              "first round")
        return ModelCall(self._previous[0].id, call.name, arguments, None, call.misbehave,
                         issued=False)

    def check(self, call: ScriptCall) -> dict[str, Any]:
        """The arguments to send for ``call``; `ScriptError` if the session cannot make it.

        A call must name a declared tool with arguments its schema accepts, unless it is
        marked as the misbehaviour that breaks that rule (and then it must break it).
        """
        kind = call.misbehave
        if kind is not None and kind in self.unsupported:
            raise ScriptError(f"script call {call.name!r} is marked {kind!r}, which this "
                              f"emulator cannot send: {self.unsupported[kind]}")
        declared = call.name in self.tools
        if kind == "unknown_tool":
            if declared:
                raise ScriptError(f"script call {call.name!r} is marked unknown_tool, but the "
                                  "session declares it; name a tool it does not declare")
            return dict(call.arguments)
        if not declared:
            raise ScriptError(
                f"script calls {call.name!r}, which the session does not declare (declared: "
                f"{', '.join(sorted(self.tools)) or 'none'}); "
                + _SEND_ANYWAY + '"misbehave": "unknown_tool"')
        if kind == "broken_json":
            return {}
        import jsonschema

        schema = self.tools[call.name]
        validator = jsonschema.Draft202012Validator(schema)
        arguments = dict(call.arguments)
        if call.name in self.strict:
            arguments = _fill_nulls(arguments, schema, schema, validator)
        errors = list(validator.iter_errors(arguments))
        if kind in ("wrong_types", "invalid_enum"):
            wanted = {"wrong_types": ("type",), "invalid_enum": ("enum", "const")}[kind]
            if not any(e.validator in wanted for e in _leaves(errors)):
                found = "; ".join(_describe(e) for e in errors) or "it accepts them"
                raise ScriptError(f"script call {call.name!r} is marked {kind}, but its "
                                  f"declared schema finds no {wanted[0]} error in the "
                                  f"arguments ({found})")
        elif errors:
            raise ScriptError(
                f"script arguments for {call.name!r} are rejected by its declared schema: "
                + "; ".join(_describe(e) for e in errors) + "; "
                + _SEND_ANYWAY + '"misbehave": "wrong_types" (or "invalid_enum")')
        return arguments

    def record(self, output: Any, call_id: str | None = None) -> None:
        """Note an output received during the current turn, for the call ``call_id``.

        `outputs` lists them in the order of the calls (arrival order says nothing when
        parallel calls are answered one by one); an output without a known id goes last.
        """
        slots = self._slots.get(call_id or "")
        position = slots.pop(0) if slots else 1 << 30
        self._received.append((position, len(self._received), output))

    def decide(self, request_id: str, approved: bool, reason: str = "") -> None:
        """A person answered the approval request ``request_id``: the model gets the MCP
        tool's scripted output, or is told it was denied (with ``reason``, when given)."""
        approval = self._approvals.pop(request_id, None)
        if approved and approval is not None:
            self.record(approval.output, request_id)
        else:
            self.record(f"denied: {reason}" if reason else "denied", request_id)

    @property
    def outputs(self) -> list[Any]:
        """The outputs received during the current turn, in the order of its calls."""
        return [output for _, _, output in sorted(self._received, key=lambda r: r[:2])]

    def reply(self) -> str:
        """The turn's final text: the scripted reply, or an echo of the user's text."""
        turn = self.turn
        if turn is None:
            return self._text
        return turn.reply.replace("{outputs}", json.dumps(self.outputs, ensure_ascii=False))


# ---------------------------------------------------------------------------- schema helpers
def _describe(error: SchemaError) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return f"{path}: {error.message}" if path else error.message


def _leaves(errors: Iterable[SchemaError]) -> Iterator[SchemaError]:
    """The innermost errors, without the ``null`` branch of a nullable ``anyOf``."""
    for error in errors:
        if error.context:
            yield from _leaves(e for e in error.context
                               if not (e.validator == "type" and e.validator_value == "null"))
        else:
            yield error


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    for _ in range(32):
        ref = schema.get("$ref") if isinstance(schema, Mapping) else None
        if not isinstance(ref, str) or not ref.startswith("#"):
            return schema
        node: Any = root
        for part in filter(None, ref[1:].split("/")):
            node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(
                node, Mapping) else None
        schema = node
    return schema


def _fill_nulls(value: Any, schema: Any, root: Mapping[str, Any], validator: Validator,
                depth: int = 0) -> Any:
    """``value`` as a strict model sends it: every absent property that accepts null is null.

    Strict mode makes every property required and the optional ones nullable, so a strict
    model spells out ``null`` for an argument it leaves out.
    """
    schema = _resolve(schema, root)
    if depth > 64 or not isinstance(schema, Mapping):
        return value
    props = schema.get("properties")
    if isinstance(value, dict) and isinstance(props, Mapping):
        filled = dict(value)
        for key, sub in props.items():
            if key in filled:
                filled[key] = _fill_nulls(filled[key], sub, root, validator, depth + 1)
            elif validator.evolve(schema=sub).is_valid(None):
                filled[key] = None
        return filled
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [_fill_nulls(v, items, root, validator, depth + 1) for v in value]
    for branch in schema.get("anyOf", ()):
        if isinstance(value, (dict, list)):
            candidate = _fill_nulls(value, branch, root, validator, depth + 1)
            if validator.evolve(schema=branch).is_valid(candidate):
                return candidate
    return value
