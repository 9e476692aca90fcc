"""A recorded payload of every dialect whose calls repeat an id: the first call with the id runs,
the others never do, and the body answers as the dialect's wire allows (see
`DialectLimits.repeated_result_ids`): one result per listed call, or one per id.

End to end on every emulator: tests/test_misbehaving_model.py (``repeated_id``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge import ToolDefinition

ADAPTERS = Path(__file__).parent / "adapters"


def sample(path: str) -> Any:
    return json.loads((ADAPTERS / path).read_text())


def tool_uses(content: list[Any]) -> list[Any]:
    """The message's content with only its ``tool_use`` blocks left (the list itself, edited)."""
    content[:] = [block for block in content if block["type"] == "tool_use"]
    return content


# dialect: (recorded payload, where its calls are, the id field of a call, the body's answers
# and the id field of an answer)
CASES: dict[str, tuple[str, Callable[[Any], list[Any]], str,
                       Callable[[Any], list[Any]], str]] = {
    "openai-agents": (
        "openai_agents/payloads/openai-agents-sessions.session.retrieve.response.json",
        lambda p: p["required_actions"], "call_id", lambda b: b["events"], "call_id"),
    "openai-assistants": (
        "openai_assistants/payloads/openai-assistants-runs.run.requires-action.response.json",
        lambda p: p["required_action"]["submit_tool_outputs"]["tool_calls"], "id",
        lambda b: b["tool_outputs"], "tool_call_id"),
    "google-ces": (
        "google_ces/payloads/google-ces.run-session.response.tool-calls.json",
        lambda p: p["outputs"][0]["toolCalls"]["toolCalls"], "id",
        lambda b: b["inputs"][0]["toolResponses"]["toolResponses"], "id"),
    "openai-chat": (
        "openai_chat/payloads/openai-chat.completion.tool-calls.response.json",
        lambda p: p["choices"][0]["message"]["tool_calls"], "id",
        lambda b: b["messages"], "tool_call_id"),
    "openai-responses": (
        "openai_responses/payloads/openai-responses.response.function-calls.json",
        lambda p: p["output"], "call_id", lambda b: b["input"], "call_id"),
    "anthropic-messages": (
        "anthropic_messages/payloads/anthropic-messages.tool-use.response.json",
        lambda p: tool_uses(p["content"]), "id", lambda b: b["messages"][0]["content"],
        "tool_use_id"),
    "gemini": (
        "gemini/payloads/gemini.generate-content.response.function-calls.json",
        lambda p: function_parts(p["candidates"][0]["content"]), "functionCall.id",
        lambda b: b["contents"][0]["parts"], "functionResponse.id"),
    "gemini-interactions": (
        "gemini_interactions/payloads/gemini-interactions.interaction.requires-action.parallel.json",
        lambda p: function_steps(p), "id", lambda b: b["input"], "call_id"),
    "anthropic-sessions": (  # events of custom tool uses, no idle yet: every one is pending
        "anthropic_sessions/payloads/anthropic-sessions.custom-tool-uses.events.json",
        lambda p: p["data"], "id", lambda b: b["events"], "custom_tool_use_id"),
}
"""(An id field may be a dotted path: Gemini's parts hold the call, its id inside.)"""


def function_parts(content: dict[str, Any]) -> list[Any]:
    """The content's parts, reduced (in place) to its function calls (no thought part)."""
    content["parts"] = [p for p in content["parts"] if "functionCall" in p]
    parts: list[Any] = content["parts"]
    return parts


def function_steps(interaction: dict[str, Any]) -> list[Any]:
    """The interaction's steps, reduced (in place) to its function calls (no thought step)."""
    interaction["steps"] = [s for s in interaction["steps"] if s["type"] == "function_call"]
    steps: list[Any] = interaction["steps"]
    return steps


def field(item: dict[str, Any], path: str) -> Any:
    for key in path.split("."):
        item = item.get(key) or {}
    return item


ONE_CALL_PER_PAYLOAD = {"mcp"}
"""Wires whose payload carries a single call (an MCP ``tools/call`` request): no id repeats."""


def test_every_built_in_dialect_is_covered() -> None:
    assert set(CASES) | ONE_CALL_PER_PAYLOAD == {
        name for name in toolbridge.dialects()
        if toolbridge.get_dialect(name).__module__.startswith("toolbridge_")}


def name_of(call: dict[str, Any]) -> str:
    return str(call.get("name") or call.get("displayName") or (
        call.get("functionCall") or call["function"])["name"])


@pytest.mark.parametrize("dialect", sorted(CASES))
def test_a_repeated_id_runs_once_and_sinks_no_neighbour(dialect: str) -> None:
    path, calls_of, id_field, answers_of, answer_id = CASES[dialect]
    payload = sample(path)
    calls = calls_of(payload)
    calls.insert(1, copy.deepcopy(calls[0]))  # the first call again, right after it
    toolbox = toolbridge.Toolbox()
    ran: list[str] = []
    for name in dict.fromkeys(name_of(c) for c in calls):
        toolbox.add(ToolDefinition(name=name, parameters={"type": "object"}),
                    lambda _name=name, **_: ran.append(_name) or f"ran {_name}")

    answers = answers_of(toolbox.handle(dialect, payload))

    assert sorted(ran) == sorted(name_of(c) for c in calls[:1] + calls[2:])  # each once
    repeated = field(calls[0], id_field)
    of_repeated = [a for a in answers if field(a, answer_id) == repeated]
    text = json.dumps(of_repeated)
    assert f"ran {name_of(calls[0])}" in text
    if toolbridge.get_dialect(dialect).limits.repeated_result_ids:
        assert len(answers) == len(calls) and len(of_repeated) == 2
        assert "repeats the id of an earlier call of this turn" in text
    else:
        assert len(answers) == len(calls) - 1 and len(of_repeated) == 1
        assert "repeats" not in text
    others = {field(c, id_field) for c in calls[2:]}
    assert others <= {field(a, answer_id) for a in answers}


def test_the_wires_that_carry_a_result_per_listed_call() -> None:
    carrying = {name for name in CASES if toolbridge.get_dialect(name).limits.repeated_result_ids}
    assert carrying == {"gemini", "openai-assistants", "openai-chat"}
