"""Run steps and runs in an export: the tool exchanges in their places in the history, the
fate of each call, and of a run the export left unfinished."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbridge.cli import EXIT_USAGE, main
from toolbridge.migration import Ledger, migrate, read_export
from toolbridge.store import MemoryRecords


def _message(mid: str, at: int, role: str, text: str, thread: str = "thread_1"
             ) -> dict[str, Any]:
    return {"id": mid, "object": "thread.message", "thread_id": thread, "created_at": at,
            "role": role, "assistant_id": "asst_1" if role == "assistant" else None,
            "content": [{"type": "text", "text": {"value": text, "annotations": []}}]}


def _step(sid: str, at: int, calls: list[dict[str, Any]], run: str = "run_1",
          status: str = "completed", thread: str = "thread_1") -> dict[str, Any]:
    return {"id": sid, "object": "thread.run.step", "thread_id": thread, "run_id": run,
            "created_at": at, "type": "tool_calls", "status": status,
            "step_details": {"type": "tool_calls", "tool_calls": calls}}


def _function(cid: str, output: str | None) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {
        "name": "get_customer", "arguments": '{"customer_id": "7"}', "output": output}}


EXPORT = [
    {"id": "asst_1", "object": "assistant", "model": "gpt-5.1", "tools": [
        {"type": "function", "function": {"name": "get_customer", "parameters": {
            "type": "object", "properties": {"customer_id": {"type": "string"}},
            "required": ["customer_id"], "additionalProperties": False}, "strict": True}}]},
    {"id": "thread_1", "object": "thread", "metadata": {}},
    {"id": "thread_2", "object": "thread", "metadata": {}},
    _message("msg_1", 10, "user", "Who is 7?"),
    _message("msg_2", 12, "assistant", "Ada."),  # made by run_1's last step
    _message("msg_3", 20, "user", "Run some code."),
    _message("msg_4", 30, "user", "Hello?", "thread_2"),
    # a page of steps, newest first, as the API lists them by default
    {"object": "list", "data": [
        {"id": "step_msg", "object": "thread.run.step", "thread_id": "thread_1",
         "run_id": "run_1", "created_at": 12, "type": "message_creation", "status": "completed",
         "step_details": {"type": "message_creation",
                          "message_creation": {"message_id": "msg_2"}}},
        _step("step_1", 11, [_function("call_1", '{"name": "Ada"}')]),
    ]},
    _step("step_2", 21, [{"id": "ci_1", "type": "code_interpreter",
                          "code_interpreter": {"input": "1+1", "outputs": []}},
                         _function("call_2", None)], run="run_2", status="cancelled"),
    {"id": "run_1", "object": "thread.run", "thread_id": "thread_1", "status": "completed"},
    {"id": "run_3", "object": "thread.run", "thread_id": "thread_2",
     "status": "requires_action"},
]


@pytest.fixture
def export(tmp_path: Path) -> Path:
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in EXPORT), encoding="utf-8")
    return path


def test_steps_take_their_places_in_the_history(export: Path) -> None:
    workload = read_export(export)
    history = workload.thread_history("thread_1")
    assert [h["id"] for h in history] == ["msg_1", "step_1", "msg_2", "msg_3", "step_2"]
    assert workload.unfinished == {}  # an export's runs cannot end: nothing waits
    assert [r["id"] for r in workload.unfinished_runs("thread_2")] == ["run_3"]


def test_responses_plan_pairs_each_function_call_with_its_output(export: Path,
                                                                 tmp_path: Path) -> None:
    from toolbridge_openai_responses import ConversationsTarget

    target = ConversationsTarget(base_url="http://127.0.0.1:9/v1", api_key="sk-test",
                                 config_dir=tmp_path / "config")
    workload = read_export(export)
    plan = target.plan_thread(workload.threads[0], workload.thread_history("thread_1"), None)
    assert [i["type"] for i in plan.append_items] == [
        "message", "function_call", "function_call_output", "message", "message"]
    assert plan.append_items[1] == {"type": "function_call", "call_id": "call_1",
                                    "name": "get_customer",
                                    "arguments": '{"customer_id": "7"}'}
    assert plan.append_items[2]["output"] == '{"name": "Ada"}'
    fates = {f.subject: f for f in plan.fates}
    assert fates["thread_1.run_1.step_1.tool_calls[0]"].fate == "carried"
    dropped = fates["thread_1.run_2.step_2.tool_calls[0]"]
    assert dropped.fate == "dropped" and "code_interpreter" in dropped.how
    assert "cancelled" in fates["thread_1.run_2.step_2.tool_calls[1]"].how

    report = migrate(workload, target, Ledger(MemoryRecords(), "x"), dry_run=True)
    assert [(t.source_id, t.status) for t in report.threads] == [
        ("thread_1", "planned"), ("thread_2", "planned")]
    run = {f.subject: f for f in report.fates}["thread_2.run_3"]
    assert run.fate == "dropped" and run.how.startswith("requires_action in the export")


def test_wait_runs_is_for_live_sources(export: Path, capsys: Any) -> None:
    code = main(["migrate", str(export), "--to", "openai-responses", "--dry-run",
                 "--wait-runs", "5"])
    assert code == EXIT_USAGE
    assert "--wait-runs waits on a live source" in capsys.readouterr().err
