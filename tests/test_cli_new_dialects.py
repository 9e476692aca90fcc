"""The `toolbridge` command knows openai-responses and openai-chat: tools, convert, emulate
and serve (through the core serve driver)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from openai import OpenAI

import toolbridge
from toolbridge.cli import main
from toolbridge.cli._demo import DEMO_SCRIPT
from toolbridge.examples import toolbox
from toolbridge.testing import emulator

NEW = ["openai-responses", "openai-chat"]


@pytest.mark.parametrize("dialect", NEW)
def test_tools_prints_the_definitions(dialect: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "toolbridge.examples:toolbox", "--dialect", dialect]) == 0
    out = capsys.readouterr().out
    assert f"== {dialect}" in out and "create_ticket" in out


@pytest.mark.parametrize("source, target", [("openai-assistants", "openai-responses"),
                                            ("openai-responses", "openai-chat"),
                                            ("openai-chat", "openai-agents")])
def test_convert_between_dialects(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  source: str, target: str) -> None:
    path = tmp_path / "tools.json"
    wire = toolbridge.get_dialect(source).render_tools(list(toolbox)).definitions
    path.write_text(json.dumps(wire), encoding="utf-8")
    assert main(["convert", "--from", source, "--to", target, str(path)]) == 0
    result = json.loads(capsys.readouterr().out)
    names = [t.name for t in toolbridge.get_dialect(target).read_tools(result)]
    assert names == toolbox.names()


@pytest.mark.parametrize("dialect, path", [("openai-responses", "/v1/responses"),
                                           ("openai-chat", "/v1/chat/completions")])
def test_emulate_serves_until_interrupted(dialect: str, path: str) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "toolbridge", "emulate", dialect,
                             "--fault", "latency_ms=1"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert f"{dialect} emulator on http://127.0.0.1:" in line, line
        base = line.split(" on ", 1)[1].split()[0]
        body = ({"model": "m", "input": "hi"} if dialect == "openai-responses"
                else {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        answer = httpx.post(base + path, json=body, headers={"Authorization": "Bearer k"})
        assert answer.status_code == 200 and "hi" in answer.text
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0


def test_serve_answers_a_waiting_responses_conversation(tmp_path: Path) -> None:
    with emulator("openai-responses", script=DEMO_SCRIPT) as emu:
        client = OpenAI(base_url=emu.base_url + "/v1", api_key="test", max_retries=0)
        conversation = client.conversations.create()
        waiting = client.responses.create(
            model="gpt-4o", input="Customer 42 needs help", conversation=conversation.id,
            tools=toolbox.definitions("openai-responses"))
        assert waiting.output[0].type == "function_call"
        out = subprocess.run(
            [sys.executable, "-m", "toolbridge", "serve", "openai-responses",
             "toolbridge.examples:toolbox", "-o", f"base_url={emu.base_url}/v1",
             "-o", f"conversation={conversation.id}", "-o", "api_key=sk-test-secret",
             "-o", "stream=false", "--store", f"sqlite:///{tmp_path}/results.db"],
            capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "sk-test-secret" not in out.stdout + out.stderr
        progress = [line for line in out.stderr.splitlines() if line.startswith("[")]
        assert len(progress) == 3 and all(" ok in " in line for line in progress), out.stderr
        items = list(client.conversations.items.list(conversation.id, order="asc"))
        assert items[-1].type == "message" and "Ada Lovelace" in str(items[-1].content)
        assert "status completed" in out.stdout


def test_serve_reports_an_unknown_option() -> None:
    out = subprocess.run([sys.executable, "-m", "toolbridge", "serve", "openai-chat",
                          "toolbridge.examples:toolbox", "-o", "colour=blue"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    last = out.stderr.splitlines()[-1]
    assert "unknown option(s) colour" in last and "base_url" in last
