"""A payload with nothing pending: `handle` returns the empty body, the read result says why;
the blocking forms' usage errors chain nothing."""

from __future__ import annotations

from typing import Any

import pytest

import toolbridge
import toolbridge.serve
import toolbridge.testing

IDLE: dict[str, tuple[dict[str, Any], str]] = {
    "openai-assistants": ({"id": "run_1", "object": "thread.run", "status": "completed",
                           "required_action": None},
                          "the run's status is 'completed': it has no required_action"),
    "openai-agents": ({"id": "sess_1", "object": "agent.session", "status": "idle",
                       "required_actions": []},
                      "the session's status is 'idle': its required_actions are empty"),
    "openai-chat": ({"role": "assistant", "content": "done"},
                    "the assistant message has no tool_calls"),
    "openai-responses": ({"id": "resp_1", "object": "response", "status": "completed",
                          "output": [{"type": "message", "role": "assistant", "content": []}]},
                         "the response's status is 'completed': its output holds no "
                         "function_call"),
    "gemini": ({"candidates": [{"content": {"role": "model", "parts": [{"text": "bye"}]},
                                "finishReason": "STOP"}]},
               "the model content has no functionCall parts"),
    "google-ces": ({"outputs": [{"text": "bye", "turnIndex": 1, "turnCompleted": True}]},
                   "no output holds toolCalls (the agent answered with text, or ended the "
                   "turn)"),
}


@pytest.mark.parametrize("dialect", sorted(IDLE))
def test_nothing_pending_says_why(dialect: str) -> None:
    payload, reason = IDLE[dialect]
    box = toolbridge.Toolbox()
    body = box.handle(dialect, payload)
    assert body == toolbridge.get_dialect(dialect).write_results([])  # the body, as before
    pending = box.pending(dialect, payload)
    assert pending.calls == () and pending.unhandled == ()
    assert pending.reason == reason
    assert toolbridge.get_dialect(dialect).read_calls(payload).reason == reason


def test_a_payload_with_calls_has_no_reason() -> None:
    session = {"id": "sess_1", "object": "agent.session", "status": "requires_action",
               "required_actions": [{"type": "function_call", "turn_id": "t", "call_id": "c",
                                     "name": "f", "arguments": {}}]}
    pending = toolbridge.Toolbox().pending("openai-agents", session)
    assert [c.id for c in pending.calls] == ["c"] and pending.reason == ""


def test_a_queued_response_has_no_output_yet() -> None:
    queued = {"id": "resp_1", "object": "response", "status": "queued"}
    assert toolbridge.Toolbox().pending("openai-responses", queued).reason == (
        "the response's status is 'queued': it has no output yet")


def test_the_blocking_forms_raise_usage_errors_unchained() -> None:
    box = toolbridge.Toolbox()
    attempts = [lambda: toolbridge.serve.converse(box, "openai-chat", ["hi"], {"colour": "red"}),
                lambda: toolbridge.serve.converse(box, "openai-chat", "hi"),
                lambda: toolbridge.testing.converse(box, "openai-chat", ["hi"], colour="red")]
    for attempt in attempts:
        with pytest.raises(toolbridge.UsageError) as info:
            attempt()
        assert info.value.__context__ is None and info.value.__cause__ is None
