"""The README's first command: `toolbridge demo` on every built-in backend's emulator."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from toolbridge.plugin import capabilities


def test_demo_runs_on_all_five_backends() -> None:
    env = {**os.environ, "PYTHONWARNINGS": "error::ResourceWarning"}
    out = subprocess.run([sys.executable, "-m", "toolbridge", "demo"], capture_output=True,
                         text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    shown = [demo.dialect for demo in capabilities().demos()]
    assert len(shown) >= 5, shown  # the five built-in backends at least
    for dialect in shown:
        section = out.stdout.split(f"== {dialect}\n", 1)[1].split("\n== ", 1)[0]
        assert "tools  get_customer, get_weather, create_ticket" in section
        assert section.count("  call ") == 3 and section.count("  result") == 3, section
        assert "Ada Lovelace" in section.split("reply", 1)[1], "reply quotes the outputs"
        assert "create_ticket ran 1 time(s)" in section
    assert "Traceback" not in out.stderr


def test_demo_real_without_credentials_says_what_is_missing() -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI", "AZURE_OPENAI", "GOOGLE"))}
    out = subprocess.run([sys.executable, "-m", "toolbridge", "demo", "--real", "--dialect",
                          "openai-agents"], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode != 0
    assert "OPENAI_API_KEY" in out.stderr
    assert "Traceback" not in out.stderr


def test_demo_exits_1_when_a_conversation_does_not_complete(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import toolbridge.cli._demo as demo
    from toolbridge.cli import main

    bad = {"turns": [{"rounds": [[{"name": "no_such_tool", "arguments": {}}]]}]}
    monkeypatch.setattr(demo, "DEMO_SCRIPT", bad)  # the emulated model fails the turn
    for dialect in ("openai-agents", "openai-assistants"):
        assert main(["demo", "--dialect", dialect]) == 1
        out = capsys.readouterr().out
        assert "\n  status failed" in out, out
    assert main(["demo", "--dialect", "openai-agents", "--json"]) == 1
    [shown] = __import__("json").loads(capsys.readouterr().out)
    assert shown["status"] == "failed" and "script error" in shown["error"]["message"]
