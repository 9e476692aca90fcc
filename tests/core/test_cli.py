"""The command line: help, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolbridge.cli import main


def test_help_for_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("demo", "dialects", "tools", "convert", "emulate", "serve"):
        with pytest.raises(SystemExit) as info:
            main([command, "--help"])
        assert info.value.code == 0
        assert "usage: toolbridge" in capsys.readouterr().out


def test_dialects_lists_plugins(echo_dialect: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dialects"]) == 0
    out = capsys.readouterr().out
    assert "echo" in out and "toolbridge_echo.EchoDialect" in out


def test_tools_prints_definitions(echo_dialect: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "toolbridge.examples:toolbox", "--dialect", "echo"]) == 0
    out = capsys.readouterr().out
    assert "== echo" in out and '"tool": "create_ticket"' in out


def test_usage_errors_exit_2_with_one_line(echo_dialect: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        ["tools", "toolbridge.examples", "--dialect", "echo"],
        ["tools", "no_such_module:toolbox"],
        ["tools", "toolbridge.examples:tickets"],
        ["tools", "toolbridge.examples:toolbox", "--dialect", "nope"],
        ["serve", "echo", "toolbridge.examples:toolbox", "-o", "novalue"],
    ]
    for argv in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("toolbridge: error: ") and err.count("\n") == 1, err


def test_convert_neutral_to_dialect(echo_dialect: str, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "tools.json"
    source.write_text(json.dumps([{"name": "ping", "description": "Ping."}]))
    assert main(["convert", "--from", "neutral", "--to", "echo", str(source)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == [{"tool": "ping", "about": "Ping.",
                             "schema": {"type": "object", "properties": {}}}]
    assert main(["convert", "--from", "echo", "--to", "neutral", str(source)]) == 2
    assert "cannot read tool definitions" in capsys.readouterr().err


def test_python_dash_m() -> None:
    out = subprocess.run([sys.executable, "-m", "toolbridge", "--help"], capture_output=True,
                         text=True, check=True)
    assert "demo" in out.stdout


def test_emulate_serves_until_interrupted(echo_dialect: str) -> None:
    import signal

    import httpx

    proc = subprocess.Popen([sys.executable, "-m", "toolbridge", "emulate", "openai-agents",
                             "--fault", "latency_ms=1"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "openai-agents emulator on http://127.0.0.1:" in line, line
        base = line.split(" on ", 1)[1].split()[0]
        assert httpx.get(base + "/_emulator/journal").json() == []
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0


def test_bad_fault_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emulate", "openai-agents", "--fault", "latency_ms=-5"]) == 2
    assert "invalid fault settings for the openai-agents emulator: latency_ms" in (
        capsys.readouterr().err)
    assert main(["emulate", "openai-agents", "--fault", "nosuch=1"]) == 2
    err = capsys.readouterr().err
    assert "unknown fault(s) nosuch for the openai-agents emulator; valid: " in err
    assert "registration_race" in err
    assert main(["emulate", "google-ces", "--fault", "registration_race=true"]) == 2
    assert "unknown fault(s) registration_race" in capsys.readouterr().err
    assert main(["emulate", "openai-agents", "--fault", "nonsense"]) == 2
