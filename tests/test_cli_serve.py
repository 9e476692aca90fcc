"""`toolbridge serve` as a real worker process against an emulated backend."""

from __future__ import annotations

import subprocess
import sys

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
