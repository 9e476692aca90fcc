"""The scripted model an emulator plays: which calls each turn makes, and the reply."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import UsageError

__all__ = ["Script", "ScriptCall", "ScriptError", "ScriptTurn", "ScriptedModel"]


class ScriptError(UsageError):
    """A script is malformed, or asks for a call the session cannot make."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ScriptCall(_Model):
    """One function call the model makes."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ScriptTurn(_Model):
    """One turn: rounds of parallel calls, then a reply."""

    rounds: list[list[ScriptCall]] = Field(default_factory=list)
    """Each round is one set of parallel calls; the next starts when all have results."""
    reply: str = "{outputs}"
    """Final text; ``{outputs}`` becomes the JSON list of outputs received during the turn."""


class Script(_Model):
    """What the emulated model does, turn by turn (each user message starts the next turn)."""

    turns: list[ScriptTurn] = Field(default_factory=list)

    @classmethod
    def load(cls, source: Script | Mapping[str, Any] | str | Path | None) -> Script:
        """A script from an object, a dict, JSON text or a JSON file path; ``None`` is empty."""
        if source is None:
            return cls()
        if isinstance(source, Script):
            return source
        try:
            if isinstance(source, Path) or (isinstance(source, str)
                                            and not source.lstrip().startswith("{")):
                source = json.loads(Path(source).read_text(encoding="utf-8"))
            elif isinstance(source, str):
                source = json.loads(source)
            return cls.model_validate(source)
        except (OSError, ValueError, ValidationError) as exc:
            raise ScriptError(f"invalid emulator script: {exc}") from None


class ScriptedModel:
    """One conversation's cursor over a shared `Script`."""

    def __init__(self, script: Script, tools: Mapping[str, Mapping[str, Any]] | None = None):
        self.script = script
        self.tools = dict(tools or {})
        """Declared tools: name -> JSON Schema of the arguments, used to check scripted calls."""
        self._turn_index = -1
        self._round_index = 0
        self._text = ""
        self.outputs: list[Any] = []

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
        self.outputs = []

    def next_round(self) -> list[ScriptCall]:
        """The next round of calls, checked against the declared tools; empty when done."""
        turn = self.turn
        if turn is None or self._round_index >= len(turn.rounds):
            return []
        calls = turn.rounds[self._round_index]
        self._round_index += 1
        for call in calls:
            self.check(call)
        return calls

    def check(self, call: ScriptCall) -> None:
        """Raise `ScriptError` if the session does not declare the tool or rejects the args."""
        if call.name not in self.tools:
            raise ScriptError(
                f"script calls {call.name!r}, which the session does not declare "
                f"(declared: {', '.join(sorted(self.tools)) or 'none'})"
            )
        import jsonschema

        schema = self.tools[call.name] or {"type": "object"}
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(call.arguments))
        if errors:
            raise ScriptError(
                f"script arguments for {call.name!r} are rejected by its declared schema: "
                + "; ".join(e.message for e in errors)
            )

    def record(self, output: Any) -> None:
        """Note an output received during the current turn."""
        self.outputs.append(output)

    def reply(self) -> str:
        """The turn's final text: the scripted reply, or an echo of the user's text."""
        turn = self.turn
        if turn is None:
            return self._text
        return turn.reply.replace("{outputs}", json.dumps(self.outputs, ensure_ascii=False))
