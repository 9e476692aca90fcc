"""A migrated conversation continued with the same handlers on every target: the next request
(as the target emulator's journal holds it) carries the migrated tools, sampling and format,
and the model sees the migrated tool exchanges; a live source's unfinished runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from migration_support import ASSISTANT, toolbox
from openai.types.responses import ResponseCreateParams
from openai_sdk_types import check_param

import toolbridge
from toolbridge.migration import CURRENT_MODELS, DEFAULT_MODEL, Ledger, Workload, migrate
from toolbridge.serve import converse
from toolbridge.store import MemoryRecords
from toolbridge.testing import emulator

CALL = {"turns": [{}, {"rounds": [[{"name": "get_customer",
                                     "arguments": {"customer_id": "42"}}]],
                       "reply": "Answer: {outputs}"}]}
"""The migrated history's one user turn, then the continued one with a call."""


def _workload() -> Workload:
    workload = Workload()
    workload.add({"id": "asst_1", "object": "assistant", **ASSISTANT}, "test")
    workload.add({"id": "thread_1", "object": "thread", "metadata": {}}, "test")
    workload.add_sequence([
        {"id": "msg_1", "object": "thread.message", "thread_id": "thread_1", "created_at": 1,
         "role": "user", "content": [{"type": "text", "text": {"value": "Hello"}}]},
        {"id": "msg_2", "object": "thread.message", "thread_id": "thread_1", "created_at": 2,
         "role": "assistant", "assistant_id": "asst_1",
         "content": [{"type": "text", "text": {"value": "Hi"}}]}], "test")
    return workload.finish()


def _create_bodies(emu: Any, path: str = "/v1/responses") -> list[dict[str, Any]]:
    return [e.body for e in emu.journal.entries("POST", path)]


def test_no_serve_option_defaults_to_a_retired_model() -> None:
    defaults = {}
    for serves in toolbridge.plugin.capabilities().serve_backends():
        field = serves.options.model_fields.get("model")
        if field is not None and field.default is not None:
            defaults[serves.dialect] = field.default
    assert {"openai-assistants", "openai-chat", "openai-responses"} <= set(defaults)
    assert set(defaults.values()) <= CURRENT_MODELS, defaults
    assert DEFAULT_MODEL in CURRENT_MODELS


def test_responses_continued_with_the_configuration_file(tmp_path: Path) -> None:
    from toolbridge_openai_responses import ConversationsTarget, load_config

    with emulator("openai-responses", script=CALL) as emu:
        target = ConversationsTarget(base_url=emu.base_url + "/v1", api_key="sk-test",
                                     config_dir=tmp_path / "config")
        report = migrate(_workload(), target, Ledger(MemoryRecords(), "continue"))
        assert report.ok, report.table()
        path = report.agents["asst_1"] or ""
        conversation = report.threads[0].target_id
        transcript = converse(toolbox(), "openai-responses", ["Who is customer 42?"], {
            "base_url": emu.base_url + "/v1", "api_key": "sk-test",
            "conversation": conversation, "config": path})
        bodies = _create_bodies(emu)
    assert transcript.status == "completed", transcript
    assert "Ada" in (transcript.reply or "")
    config = load_config(path)
    assert len(bodies) == 2  # the call, then its answer: both carry the configuration
    for body in bodies:
        assert body["model"] == "gpt-5.1" and body["instructions"] == "Be brief."
        assert body["temperature"] == 0.3 and body["top_p"] == 0.9
        assert body["text"] == config["text"] and body["text"]["format"]["name"] == "answer"
        assert [t["type"] for t in body["tools"]] == ["function", "code_interpreter",
                                                      "file_search"]
        assert body["tools"][1:] == [t for t in config["tools"] if t["type"] != "function"]
        assert body["tools"][2]["vector_store_ids"] == ["vs_1"]
        assert check_param({k: v for k, v in body.items() if k != "stream"},
                           ResponseCreateParams) == []


def test_responses_options_refuse_a_function_without_a_handler(tmp_path: Path) -> None:
    from toolbridge_openai_responses import ResponsesServeOptions

    options = ResponsesServeOptions.parse(
        tools=[{"type": "function", "name": "refund", "parameters": {}}],
        base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    with pytest.raises(toolbridge.UsageError, match=r"tools\[0\]: function 'refund'"):
        options.request_fields([{"type": "function", "name": "get_customer"}])
    agent = ResponsesServeOptions.parse(agent="support", temperature=0.3,
                                        project_endpoint="https://p", api_key="k")
    with pytest.raises(toolbridge.UsageError, match="temperature: the saved agent"):
        agent.request_fields([])
