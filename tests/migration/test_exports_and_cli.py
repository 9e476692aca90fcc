"""Export layouts, the remap table, the file ledger, and the ``migrate`` / ``convert`` commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from migration_support import ASSISTANT

from toolbridge import UsageError
from toolbridge.cli import main
from toolbridge.migration import FileRecords, Ledger, read_export
from toolbridge.migration.targets import remapped

ASST = {"id": "asst_1", "object": "assistant", **ASSISTANT}
THREAD = {"id": "thread_1", "object": "thread", "metadata": {}}


def _message(i: int, created: int, thread: str = "thread_1") -> dict[str, Any]:
    return {"id": f"msg_{i}", "object": "thread.message", "thread_id": thread,
            "created_at": created, "role": "user" if i % 2 == 0 else "assistant",
            "assistant_id": "asst_1" if i % 2 else None,
            "content": [{"type": "text", "text": {"value": f"m{i}", "annotations": []}}]}


def _page(data: list[Any]) -> dict[str, Any]:
    return {"object": "list", "data": data, "has_more": False}


def test_the_three_layouts_read_the_same(tmp_path: Path) -> None:
    messages = [_message(1, 20), _message(0, 10), _message(2, 20)]  # newest-first pages too
    document = tmp_path / "export.json"
    document.write_text(json.dumps({"toolbridge_export": 1, "assistants": _page([ASST]),
                                    "threads": [THREAD],
                                    "messages": {"thread_1": _page(messages)}}))
    folder = tmp_path / "folder"
    (folder / "messages").mkdir(parents=True)
    (folder / "assistants.json").write_text(json.dumps([ASST]))
    (folder / "threads.json").write_text(json.dumps(_page([THREAD])))
    (folder / "messages" / "thread_1.json").write_text(json.dumps(_page(messages)))
    lines = tmp_path / "export.jsonl"
    lines.write_text("\n".join(json.dumps(o) for o in [ASST, _page(messages[:1]),
                                                        *messages[1:], THREAD]) + "\n\n")
    for source in (document, folder, lines):
        workload = read_export(source)
        assert [a["id"] for a in workload.assistants] == ["asst_1"]
        assert [t["id"] for t in workload.threads] == ["thread_1"]
        assert [m["id"] for m in workload.thread_messages("thread_1")] == [
            "msg_0", "msg_1", "msg_2"]
        assert workload.assistant_of(workload.threads[0]) == "asst_1"


@pytest.mark.parametrize(("content", "error"), [
    ('{"toolbridge_export": 2}', "version 2 is not supported"),
    ('{"object": "thread.run", "id": "run_1"}', "thread.run run_1 has no 'thread_id'"),
    ('{"object": "thread.run.delta", "id": "x"}', "unknown object 'thread.run.delta'"),
    ('{"assistants": [{"object": "assistant"}]}', "assistants[0]: the assistant has no 'id'"),
    ('{"messages": [{"object": "thread.message", "id": "m"}]}', "has no 'thread_id'"),
    ("{not json", "cannot read"),
])
def test_bad_exports_name_the_place(tmp_path: Path, content: str, error: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=error.replace("[", r"\[").replace("]", r"\]")):
        read_export(path)


def test_bad_jsonl_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(ASST) + "\n{oops\n")
    with pytest.raises(UsageError, match=r"bad\.jsonl:2: not JSON"):
        read_export(path)


def test_remap_table_and_overrides() -> None:
    assert remapped("gpt-4o", {}) == "gpt-5.1"
    assert remapped("gpt-4o-2024-08-06", {}) == "gpt-5.1"  # a snapshot follows its family
    assert remapped("gpt-4o-mini-2024-07-18", {}) == "gpt-5.1-mini"
    assert remapped("gpt-4o", {"gpt-4o": "my-deployment"}) == "my-deployment"
    assert remapped("gpt-4o", {"gpt-4o": "gpt-4o"}) is None  # keep it
    assert remapped("my-finetune", {}) is None


def test_file_ledger_survives_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "ledger.json"
    Ledger(FileRecords(path), "m").put("thread", "t1", state="done", target_id="conv_1")
    again = Ledger(FileRecords(path), "m")
    assert again.get("thread", "t1") == {"state": "done", "target_id": "conv_1"}
    assert Ledger(FileRecords(path), "other").get("thread", "t1") == {}


def test_migrate_dry_run_prints_the_plan_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "export.jsonl"
    export.write_text("\n".join(json.dumps(o) for o in [ASST, THREAD, _message(0, 1)]))
    ledger = tmp_path / "ledger.json"
    code = main(["migrate", str(export), "--to", "openai-agents",
                 "-o", "base_url=http://127.0.0.1:9", "-o", "api_key=k", "--dry-run",
                 "--ledger", str(ledger), "--model-map", "gpt-4o=gpt-5.2",
                 "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert code == 0 and "dry run: nothing written" in out
    assert "remap given: gpt-4o remapped to gpt-5.2" in out
    assert "temperature" in out and "the Agents API has no sampling settings" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["dry_run"] and report["threads"][0]["status"] == "planned"
    assert report["counts"]["dropped"] >= 3 and not ledger.exists()


def test_migrate_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", "--to", "openai-agents"]) == 2
    assert "give export files" in capsys.readouterr().err
    assert main(["migrate", str(tmp_path), "--to", "azure-foundry"]) == 2
    assert "project_endpoint" in capsys.readouterr().err


def test_convert_points_to_migrate_for_settings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "assistant.json"
    path.write_text(json.dumps(ASST))
    report_path = tmp_path / "report.json"
    assert main(["convert", "--from", "openai-assistants", "--to", "openai-agents",
                 str(path), "--report", str(report_path)]) == 0
    captured = capsys.readouterr()
    assert [t["name"] for t in json.loads(captured.out)] == ["get_customer"]  # the tool list
    report = json.loads(report_path.read_text())
    assert len(report["skipped"]) == 2 and "code_interpreter" in report["skipped"][0]
    assert report["not_converted"] == ["description", "instructions", "metadata", "model",
                                       "name", "response_format", "temperature",
                                       "tool_resources", "top_p"]
    assert "`toolbridge migrate` carries an assistant's settings" in captured.err
