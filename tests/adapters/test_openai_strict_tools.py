"""Every OpenAI dialect decides `strict` and reads strict arguments the same way."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge import ToolCall, ToolDefinition
from toolbridge.plugin import get_dialect

OPENAI = ("openai-assistants", "openai-chat", "openai-responses")
UNION_ROOT = {"type": "object", "anyOf": [
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
     "additionalProperties": False},
    {"type": "object", "properties": {"zip": {"type": "string"}}, "required": ["zip"],
     "additionalProperties": False}]}
OPTIONAL = {"type": "object", "properties": {"city": {"type": "string"},
                                             "units": {"type": "string"}},
            "required": ["city"], "additionalProperties": False}


def _function(wire: dict[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = wire.get("function", wire)
    return function


@pytest.mark.parametrize("name", OPENAI)
def test_a_wrapped_root_reaches_the_handler_unwrapped(name: str) -> None:
    dialect = get_dialect(name)
    tool = ToolDefinition(name="where", parameters=UNION_ROOT, strict=True)
    sent = _function(dialect.render_tools([tool]).definitions[0])
    assert sent["strict"] is True and sent["parameters"]["required"] == ["value"]
    call = ToolCall(id="c1", name="where", dialect=name, arguments={"value": {"zip": "75001"}})
    assert dialect.decode_arguments(call, tool) == {"zip": "75001"}


@pytest.mark.parametrize("name", OPENAI)
def test_strict_none_is_strict_only_when_lossless(name: str) -> None:
    dialect = get_dialect(name)
    lossless = ToolDefinition(name="a", parameters=OPTIONAL, strict=None)
    tags = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    lossy = ToolDefinition(name="b", parameters={"type": "object", "properties": {"tags": tags}},
                           strict=None)
    first, second = (_function(w) for w in dialect.render_tools([lossless, lossy]).definitions)
    assert first["strict"] is True and first["parameters"]["required"] == ["city", "units"]
    assert second.get("strict", False) is False
    assert second["parameters"] == lossy.parameters  # as declared
    call = ToolCall(id="c1", name="a", dialect=name, arguments={"city": "Oslo", "units": None})
    assert dialect.decode_arguments(call, lossless) == {"city": "Oslo"}  # default applies
