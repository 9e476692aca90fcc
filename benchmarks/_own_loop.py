"""The floor under a toolbox's per-call work for `bench_handle.py`: the same 8 tools answered
by a loop written by hand over the official SDK's objects, with nothing of toolbridge.

Per payload: `AgentSession.model_validate` (the baseline itself), then per pending call the
work any typed handler needs whoever calls it: the tool's arguments validated into its
parameter types by pydantic (one model per tool, built once, as a hand-written dispatcher
would), the handler, and its result encoded as JSON by pydantic-core. No store, no schema
check, no size limits, no wire body: what a hand-written loop can skip. Its ratio to the SDK
parse is the least any library can cost on these tools; for the heavier toolbox it is well
over the parse itself (binding nested models and encoding returned ones is pydantic's work).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import create_model
from pydantic_core import to_json


class OwnLoop:
    """``answer(payload)``: the hand-written loop over ``handlers`` (by tool name)."""

    def __init__(self, handlers: Iterable[tuple[str, Callable[..., Any]]]) -> None:
        from openai.types.beta.agent_session import AgentSession

        self._parse = AgentSession.model_validate
        self._tools: dict[str, tuple[Any, Callable[..., Any]]] = {}
        for name, handler in handlers:
            hints = typing.get_type_hints(handler)
            fields: dict[str, Any] = {}
            for parameter in inspect.signature(handler).parameters.values():
                default = ... if parameter.default is inspect.Parameter.empty else parameter.default
                fields[parameter.name] = (hints.get(parameter.name, Any), default)
            model = create_model(f"{name}_arguments", **fields)
            self._tools[name] = (model.__pydantic_validator__, handler)

    def answer(self, payload: dict[str, Any]) -> list[str]:
        session = self._parse(payload)
        outputs = []
        for action in session.required_actions or ():
            validator, handler = self._tools[action.name]
            value = handler(**validator.validate_python(action.arguments).__dict__)
            outputs.append(value if isinstance(value, str) else to_json(value).decode())
        return outputs
