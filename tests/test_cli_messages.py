"""The CLI's promises (issue 17 §4): --version, help with examples, one-line errors, the URL an
SDK needs."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import toolbridge
from toolbridge.cli import main

COMMANDS = ["demo", "dialects", "tools", "convert", "emulate", "serve", "migrate", "worker",
            "temporal", "mcp", "approvals"]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"toolbridge {toolbridge.__version__}"


def test_every_command_is_listed_here(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    commands = capsys.readouterr().out.split("  COMMAND\n", 1)[1].split("\n\n", 1)[0]
    listed = [line.split()[0] for line in commands.splitlines()  # not a wrapped help line
              if line.startswith("    ") and not line.startswith("     ")]
    assert sorted(listed) == sorted(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_a_description_and_an_example(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    usage, _, rest = capsys.readouterr().out.partition("\n\n")
    description = rest.split("\n\n", 1)[0]
    assert usage.startswith(f"usage: toolbridge {command}") and len(description) > 30
    examples = rest.rpartition("examples:\n")[2]
    assert examples and f"toolbridge {command}" in examples


def test_serve_help_lists_the_dialect_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "openai-assistants", "--help"])
    out = capsys.readouterr().out
    assert "options of openai-assistants (-o KEY=VALUE):" in out and "thread_id" in out
    assert "options of openai-agents" not in out
    types = [line for line in out.splitlines() if line.startswith("  ") and ", default " in line]
    assert types and not [t for t in types if "toolbridge." in t or "typing." in t], types
    assert "api_key (Secret | None, default None)" in out


def _one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 2) -> str:
    assert main(argv) == code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("toolbridge: error: "), captured.err
    return lines[0]


def test_demo_with_an_unknown_dialect_exits_2_before_any_output(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--dialect", "nope"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "backends" not in captured.err
    assert "unknown dialect 'nope'" in captured.err


def test_a_missing_toolbox_attribute_is_named(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "simple_tb.py").write_text("from toolbridge import Toolbox\ntoolbox = Toolbox()\n")
    monkeypatch.chdir(tmp_path)
    line = _one_line_error(capsys, ["tools", "simple_tb:nope"])
    assert line.endswith("module 'simple_tb' has no attribute 'nope'")


def test_serve_openai_chat_without_a_message_says_there_is_nothing_to_wait_on(
        capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_line_error(capsys, ["serve", "openai-chat", "toolbridge.examples:toolbox"])
    assert "nothing to wait on" in line and "--message" in line


def test_serve_with_assistant_id_but_no_thread_says_thread_id_is_missing(
        capsys: pytest.CaptureFixture[str]) -> None:
    from toolbridge.testing import emulator

    with emulator("openai-assistants") as emu:
        assert main(["serve", "openai-assistants", "toolbridge.examples:toolbox", "-q",
                     "-o", f"base_url={emu.base_url}", "-o", "api_key=test",
                     "-o", "assistant_id=asst_1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "thread_id" in err and "assistant_id is given" in err, err


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_emulate_on_a_port_that_is_none_is_one_line(port: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_line_error(capsys, ["emulate", "openai-chat", "--port", port])
    assert line == (f"toolbridge: error: port: {port} is not a TCP port (0 to 65535; 0 picks a "
                    "free one)")


def test_emulate_on_a_busy_port_is_one_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "toolbridge", "emulate", "openai-agents",
                              "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"toolbridge: error: cannot listen on 127.0.0.1:{port}: Address already in use; "
        "pick another --port (0 picks a free one)"]


@pytest.mark.parametrize("dialect", ["openai-agents", "openai-chat"])
def test_emulate_prints_the_base_url_the_openai_sdk_needs(dialect: str) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "toolbridge", "emulate", dialect],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first, second, *_ = [proc.stdout.readline() for _ in range(4)]
        base = first.split(" on ", 1)[1].split()[0]
        assert f"OpenAI SDK base URL: {base}/v1 " in second, second
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
