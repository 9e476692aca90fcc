"""The script format: which calls each turn of the emulated model makes, and its reply.

A call may be marked as a deliberate misbehaviour of the model (``"misbehave": <kind>``); the
emulator then sends it as a real model would instead of reporting a script error. The kinds
are described in `MISBEHAVIOURS` and docs/testing.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ...errors import UsageError

__all__ = ["MISBEHAVIOURS", "Misbehaviour", "Script", "ScriptApproval", "ScriptCall",
           "ScriptError", "ScriptTurn"]

Misbehaviour = Literal["wrong_types", "invalid_enum", "broken_json", "unknown_tool",
                       "hallucinated_id", "repeated_id"]
"""The kinds of misbehaviour a `ScriptCall` can be marked with (`MISBEHAVIOURS` describes
each)."""

MISBEHAVIOURS: dict[str, str] = {
    "wrong_types": "arguments of the wrong JSON type, sent as written (the declared schema "
                   "must reject them with a type error)",
    "invalid_enum": "a value outside an enum, sent as written (the declared schema must "
                    "reject it with an enum error)",
    "broken_json": "argument text that is not a JSON object, given as raw_arguments and sent "
                   "verbatim where the wire carries argument text (Agents: a string where "
                   "the arguments object belongs; CES cannot express it: script error)",
    "unknown_tool": "a call of a tool the session does not declare",
    "hallucinated_id": "the call reuses the id of the previous round's first call instead of "
                       "a fresh one (one such call per round, not in a turn's first round)",
    "repeated_id": "the call has the same id as the first call of its round, in the same "
                   "message (not the round's first call)",
}
"""Each kind of deliberate misbehaviour a script call may be marked with, and what it sends."""


class ScriptError(UsageError):
    """A script is malformed, or asks for a call the session cannot make."""


class _Model(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True,
                              use_attribute_docstrings=True)


class ScriptApproval(_Model):
    """Marks a script call as a call of an MCP tool that the backend asks a person to approve
    before its server runs it (an approval request on the wire, not a function call)."""

    server: str = "mcp"
    """The MCP server's label."""
    message: str = ""
    """The backend's words for the person (the Agents wire carries them)."""
    output: Any = "ok"
    """The MCP tool's result, which the model gets once the call is approved."""


class ScriptCall(_Model):
    """One function call the model makes (or, with ``approval``, an MCP tool call)."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Absent optional arguments may be left out: a strict emulator fills them with null."""
    misbehave: Misbehaviour | None = None
    """Marks a deliberately bad call, sent as is instead of being a script error."""
    raw_arguments: str | None = None
    """With ``misbehave: "broken_json"`` only: the argument text to send, not a JSON object."""
    approval: ScriptApproval | None = None
    """``name`` is an MCP tool of ``approval.server`` (not a declared function), and the
    backend asks for approval first: approved, the model gets ``approval.output``; denied,
    ``"denied"`` (and the reason, where the wire carries one)."""

    @model_validator(mode="after")
    def _consistent(self) -> ScriptCall:
        if self.approval is not None and (self.misbehave or self.raw_arguments is not None):
            raise ValueError("an approval request is not a function call: no misbehave, no "
                             "raw_arguments")
        if self.misbehave == "broken_json":
            if self.raw_arguments is None:
                raise ValueError('"broken_json" needs raw_arguments: the text to send')
            if self.arguments:
                raise ValueError('"broken_json" sends raw_arguments instead of arguments; '
                                 "give only raw_arguments")
            try:
                parsed = json.loads(self.raw_arguments)
            except ValueError:
                return self
            if isinstance(parsed, dict):
                raise ValueError(f"raw_arguments {self.raw_arguments!r} is a JSON object; "
                                 '"broken_json" needs text that is not one')
        elif self.raw_arguments is not None:
            raise ValueError('raw_arguments goes with "misbehave": "broken_json" only')
        return self


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
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or '<script>'}: "
                f"{error['msg'].removeprefix('Value error, ')}" for error in exc.errors())
            raise ScriptError(f"invalid emulator script: {problems}") from None
        except (OSError, ValueError) as exc:
            raise ScriptError(f"invalid emulator script: {exc}") from None
