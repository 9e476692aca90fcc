"""``--policy`` of ``toolbridge tools`` and ``convert``: loss classes, every dialect printed
before failing, and the tools ``convert`` skipped (issue 16 §1, issue 15 §2)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolbridge import dialects
from toolbridge.cli import main

MODULE = '''
from pydantic import Field
from toolbridge import Toolbox

toolbox = Toolbox(store=None)


@toolbox.tool
def lookup(order_id: str, limit: int = 10) -> str:
    """Find an order."""
    return order_id


@toolbox.tool
def mail(to: str = Field(json_schema_extra={"format": "email"})) -> str:
    """Send mail."""
    return to
'''


@pytest.fixture
def tools_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "policy_tools.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    yield "policy_tools:toolbox"
    sys.modules.pop("policy_tools", None)


DIALECTS = list(dialects())


def test_policy_error_prints_every_dialect_then_fails(
        tools_module: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", tools_module, "--policy", "error"]) == 1
    out, err = capsys.readouterr()
    assert all(f"== {name}" in out for name in DIALECTS)  # printed before failing
    assert out.count("-- fails --policy error") == 1  # CES drops `format`; nothing checks it
    assert "tool 'mail'" in out and "not enforced" in out
    assert err.startswith(f"toolbridge: failed: --policy error: 1 of {len(DIALECTS)} "
                          "dialect(s)")
    assert "google-ces" in err and err.count("\n") == 1


def test_policy_error_passes_with_enforced_losses_only(
        tools_module: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tools", tools_module, "--dialect", "google-ces"]
    only_lookup = MODULE.split("@toolbox.tool\ndef mail")[0]
    Path("policy_tools.py").write_text(only_lookup, encoding="utf-8")
    assert main([*argv, "--policy", "error"]) == 0
    out = capsys.readouterr().out
    assert "lookup: " in out and "additionalProperties" in out and "checked on arrival" in out
    assert main([*argv, "--policy", "lossless"]) == 1
    assert "--policy lossless" in capsys.readouterr().err


def test_policy_values_are_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("tools", "convert"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "{allow,describe,error,lossless}" in text and "'lossless' fails on any loss" in text


def test_convert_reports_skipped_tools(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assistant = {"tools": [
        {"type": "code_interpreter"}, {"type": "file_search"},
        {"type": "function", "function": {"name": "ping", "parameters": {
            "type": "object", "properties": {}}}}]}
    path = tmp_path / "assistant.json"
    path.write_text(json.dumps(assistant), encoding="utf-8")
    report = tmp_path / "report.json"
    assert main(["convert", "--from", "openai-assistants", "--to", "openai-agents",
                 "--report", str(report), str(path)]) == 0
    assert [t["name"] for t in json.loads(capsys.readouterr().out)] == ["ping"]
    out = json.loads(report.read_text())
    assert [line.split(":")[0] for line in out["skipped"]] == [
        "tools[0] (code_interpreter)", "tools[1] (file_search)"]
    assert main(["convert", "--from", "openai-assistants", "--to", "neutral", str(path)]) == 0
    captured = capsys.readouterr()
    assert [t["name"] for t in json.loads(captured.out)] == ["ping"]
    assert "note: tools[0] (code_interpreter): skipped" in captured.err


def test_convert_from_neutral_names_the_bad_entry(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"name": "ok"}, {"name": "not ok"}]), encoding="utf-8")
    assert main(["convert", "--from", "neutral", "--to", "openai-agents", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolbridge: error: tools[1]: name:") and "pydantic.dev" not in err
