"""`toolbridge serve` as a real worker process against an emulated backend."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from openai import OpenAI

from toolbridge.cli._demo import DEMO_SCRIPT
from toolbridge.examples import toolbox
from toolbridge.testing import emulator


def test_serve_answers_a_waiting_agents_session(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with emulator("openai-agents", script=DEMO_SCRIPT) as emu:
        client = OpenAI(base_url=emu.base_url + "/v1", api_key="test", max_retries=0)
        session = client.beta.agents.sessions.create(
            environment={"type": "none"}, input="Customer 42 needs help",
            agent={"tools": toolbox.definitions("openai-agents")})
        assert session.status == "requires_action"
        store = f"sqlite:///{tmp_path}/results.db"
        out = subprocess.run(
            [sys.executable, "-m", "toolbridge", "serve", "openai-agents",
             "toolbridge.examples:toolbox", "-o", f"base_url={emu.base_url}/v1",
             "-o", f"session_id={session.id}", "-o", "api_key=sk-test-secret",
             "--store", store],
            capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "sk-test-secret" not in out.stdout + out.stderr
        progress = [line for line in out.stderr.splitlines() if line.startswith("[")]
        assert len(progress) == 3 and all(" ok in " in line for line in progress), out.stderr
        done = client.beta.agents.sessions.retrieve(session.id)
        assert done.status == "idle"
        results = [e for entry in emu.journal.entries("POST", "/events")
                   for e in (entry.body or {}).get("events", [])
                   if e["type"] == "agent.session.input.tool_result"]
        assert len(results) == 3 and all(r["success"] for r in results)
    assert (tmp_path / "results.db").exists()


def test_serve_reports_a_missing_option() -> None:
    out = subprocess.run([sys.executable, "-m", "toolbridge", "serve", "openai-agents",
                          "toolbridge.examples:toolbox", "-o", "api_key=k"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    last = out.stderr.splitlines()[-1]
    assert last.startswith("toolbridge: error: ") and "session_id" in last


def test_serve_holds_a_conversation_on_each_dialect(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same command and the same transcript shape for every dialect."""
    from toolbridge.cli import main

    for dialect in ("openai-agents", "openai-assistants", "google-ces"):
        with emulator(dialect, script=DEMO_SCRIPT) as emu:
            code = main(["serve", dialect, "toolbridge.examples:toolbox", "-q",
                         "-o", f"base_url={emu.base_url}", "-o", "api_key=k" if dialect !=
                         "google-ces" else "token=k", "-m", "Customer 42, please"])
        out = capsys.readouterr().out
        assert code == 0, out
        assert out.startswith(f"== {dialect}\n") and "\n  reply  " in out
        assert "\n  status completed (" in out


def test_serve_json_and_a_failed_conversation_exits_1(
        capsys: pytest.CaptureFixture[str]) -> None:
    from toolbridge.cli import main

    faults = {"fail_requests": [{"nth": 6, "status": 500, "after_processing": True}]}  # results
    with emulator("google-ces", script=DEMO_SCRIPT, faults=faults) as emu:
        code = main(["serve", "google-ces", "toolbridge.examples:toolbox", "-q", "--json",
                     "-o", f"base_url={emu.base_url}", "-o", "token=k", "-m", "hi"])
    shown = json.loads(capsys.readouterr().out)
    assert code == 1
    assert shown["status"] == "failed" and shown["error"]["type"] == "ReplyLostError"
    assert [e["kind"] for e in shown["entries"]][:3] == ["tools", "user", "call"]


def test_serve_reads_user_messages_from_stdin(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from toolbridge.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO("hello\n\nthere\n"))
    with emulator("google-ces") as emu:
        code = main(["serve", "google-ces", "toolbridge.examples:toolbox", "--stdin", "-q",
                     "-o", f"base_url={emu.base_url}", "-o", "token=k"])
    out = capsys.readouterr().out
    assert code == 0 and "  user   hello\n" in out and "  reply  there\n" in out


def test_serve_options_are_typed_and_listed(capsys: pytest.CaptureFixture[str]) -> None:
    from toolbridge.cli import main

    assert main(["serve", "openai-agents", "toolbridge.examples:toolbox",
                 "-o", "colour=red"]) == 2
    err = capsys.readouterr().err
    assert "unknown option(s) colour; known: " in err and "session_id" in err
    assert main(["serve", "openai-agents", "toolbridge.examples:toolbox",
                 "-o", "watch=perhaps", "-o", "api_key=k", "-o", "session_id=s"]) == 2
    assert "watch: Input should be a valid boolean" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        main(["serve", "google-ces", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "options of google-ces (-o KEY=VALUE):" in out
    assert "  session (str | None, default None)" in out and "options of openai-agents" not in out
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    assert all(f"options of {d} " in out for d in ("openai-agents", "google-ces"))
