"""A third-party dialect declares every capability, and the CLI and the kit use them.

The echo plugin (tests/plugins/toolbridge_echo) is installed through an entry point, as pip
would install it; nothing in the core names it. What its emulator received is read from the
emulator's journal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolbridge import PluginError, Toolbox
from toolbridge.cli import main
from toolbridge.plugin import capabilities
from toolbridge.plugin._manager import _PLUGINS
from toolbridge.testing import check_backend, check_dialect, converse, emulator

PLUGINS = Path(__file__).parent.parent / "plugins"
MESSAGE = "Customer 42: how is the weather in Lima?"
SCRIPT = {"turns": [{
    "rounds": [[{"name": "get_customer", "arguments": {"customer_id": "42"}}],
               [{"name": "get_weather", "arguments": {"city": "Lima", "days": 2}}]],
    "reply": "Looked it up: {outputs}",
}]}


def install(site: Path) -> None:
    """The metadata pip writes for a distribution whose entry point is ``toolbridge_echo``."""
    info = site / "toolbridge_echo_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toolbridge_echo_plugin\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text("[toolbridge]\necho = toolbridge_echo\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The echo plugin installed through its entry point; plugin state forgotten after."""
    site = tmp_path / "site"
    install(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(PLUGINS))
    _PLUGINS.reset()
    yield site
    _PLUGINS.reset()
    for name in [m for m in sys.modules if m.startswith("toolbridge_echo")]:
        del sys.modules[name]


def test_dialects_lists_what_it_declares(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dialects"]) == 0
    lines = capsys.readouterr().out.splitlines()
    [at] = [i for i, line in enumerate(lines) if line.startswith("echo ")]
    assert "plugin echo" in lines[at] and "toolbridge_echo.EchoDialect" in lines[at]
    assert lines[at + 1].strip() == (
        "translations, serve backend, emulator, demo, migration target echo-files")


def test_demo_holds_its_conversation(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "echo" in [d.dialect for d in capabilities().demos()]  # shown by a bare `demo`
    assert main(["demo", "--dialect", "echo", "--json"]) == 0
    [transcript] = json.loads(capsys.readouterr().out)
    assert transcript["dialect"] == "echo" and transcript["status"] == "completed"
    kinds = [e["kind"] for e in transcript["entries"]]
    assert kinds.count("call") == 3 and kinds.count("result") == 3
    assert "Ada Lovelace" in transcript["reply"]


def test_emulate_starts_its_emulator(site: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(site), str(PLUGINS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "toolbridge", "emulate", "echo", "--port",
                             "0", "-o", "require_key=false"], stdout=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("echo emulator on http://127.0.0.1:"), line
        base = line.split(" on ", 1)[1].split()[0]
        assert "echo service API: " + base in proc.stdout.readline()
        created = httpx.post(base + "/v1/conversations", json={"tools": []})  # no key needed
        assert created.status_code == 200 and created.json()["status"] == "idle"
        [entry] = httpx.get(base + "/_emulator/journal").json()
        assert (entry["method"], entry["path"]) == ("POST", "/v1/conversations")
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0


def test_serve_holds_a_conversation_on_its_emulator(
        site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with emulator("echo", script=SCRIPT) as emu:
        code = main(["serve", "echo", "toolbridge.examples:toolbox", "-q", "--json",
                     "-o", f"base_url={emu.base_url}", "-o", "api_key=sk-echo-secret",
                     "-m", MESSAGE])
        out, err = capsys.readouterr()
        transcript = json.loads(out)
        assert code == 0, err
        assert transcript["status"] == "completed", transcript
        assert "Ada Lovelace" in transcript["reply"] and "Lima" in transcript["reply"]
        carrying = [e for e in emu.journal.entries("POST") if MESSAGE in json.dumps(e.body)]
        assert [e.path for e in carrying] == [
            f"/v1/conversations/{transcript['conversation']}/messages"]
        assert len(emu.journal.entries("POST", "/answers")) == 2  # one per round
        assert all(e.headers["authorization"] == "<redacted>" for e in emu.journal.entries())
        assert "sk-echo-secret" not in out + err


def test_serve_without_base_url_names_the_option(
        site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "echo", "toolbridge.examples:toolbox", "-m", "hi"]) == 2
    assert "echo options: base_url is required" in capsys.readouterr().err


def test_a_lost_answer_reply_is_resent_and_taken_once(site: Path) -> None:
    toolbox = Toolbox(store="memory://")
    ran: list[str] = []

    @toolbox.tool
    def get_customer(customer_id: str) -> str:
        ran.append(customer_id)
        return f"customer {customer_id}"

    @toolbox.tool
    def get_weather(city: str, days: int = 1) -> str:
        return f"sun in {city} for {days} days"

    # Request 3 is the first answer: processed, then its reply is lost (500).
    lost = {"fail_requests": [{"nth": 3, "status": 500, "after_processing": True}]}
    with emulator("echo", script=SCRIPT, faults=lost) as emu:
        transcript = converse(toolbox, "echo", MESSAGE, running=emu)
        answers = emu.journal.entries("POST", "/answers")
        [state] = emu.state.conversations.values()
    assert transcript.status == "completed", transcript.render()
    assert answers[0].dropped == 200 and answers[0].headers["idempotency-key"] == (
        answers[1].headers["idempotency-key"])
    assert ran == ["42"]
    assert state.messages[-1]["text"] == (
        'Looked it up: ["customer 42", "sun in Lima for 2 days"]')


def test_migrate_writes_an_export_to_its_target(
        site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"toolbridge_export": 1, "assistants": [{
        "id": "asst_1", "object": "assistant", "model": "gpt-4o", "name": "Helper",
        "instructions": "Be brief.", "tools": [
            {"type": "code_interpreter"},
            {"type": "function", "function": {"name": "lookup", "description": "Look up.",
                                              "parameters": {"type": "object", "properties": {
                                                  "q": {"type": "string"}}}}}]}],
        "threads": [{"id": "thread_1", "object": "thread", "metadata": {}}],
        "messages": {"thread_1": [
            {"id": "m1", "created_at": 1, "role": "user",
             "content": [{"type": "text", "text": {"value": "hello", "annotations": []}}]},
            {"id": "m2", "created_at": 2, "role": "assistant", "assistant_id": "asst_1",
             "content": [{"type": "text", "text": {"value": "hi there", "annotations": []}}]},
        ]}}))
    out = tmp_path / "out"
    argv = ["migrate", str(export), "--to", "echo-files", "-o", f"dir={out}",
            "--ledger", str(tmp_path / "ledger.json"), "--json", "-"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["target"] == "echo-files" and report["remaps"] == {"gpt-4o": "gpt-5.1"}
    [thread] = report["threads"]
    assert thread["status"] == "created" and thread["verification"]["ok"]
    assert {(f["subject"], f["fate"]) for f in report["fates"]} >= {
        ("asst_1.tools.lookup", "carried"), ("asst_1.tools[0]", "dropped")}
    [agent_file] = (out / "agents").iterdir()
    agent = json.loads(agent_file.read_text())
    assert agent_file.stem == report["agents"]["asst_1"]
    assert agent["model"] == "gpt-5.1" and [t["tool"] for t in agent["tools"]] == ["lookup"]
    written = json.loads((out / "conversations" / f"{thread['target_id']}.json").read_text())
    assert written["messages"] == [{"role": "user", "text": "hello"},
                                   {"role": "assistant", "text": "hi there"}]
    assert written["agent"] == agent_file.stem

    assert main(argv) == 0  # again: the ledger says done, nothing is written twice
    [again] = json.loads(capsys.readouterr().out)["threads"]
    assert again["status"] == "done" and again["target_id"] == thread["target_id"]
    assert len(list((out / "agents").iterdir())) == 1
    assert len(list((out / "conversations").iterdir())) == 1


def test_migrate_without_its_dir_option_names_it(
        site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"assistants": [], "threads": []}))
    assert main(["migrate", str(export), "--to", "echo-files", "--ledger",
                 str(tmp_path / "ledger.json")]) == 2
    assert "echo options: invalid option(s): dir: Field required" in capsys.readouterr().err
    assert main(["migrate", str(export), "--to", "echo-files", "-o", "folder=x"]) == 2
    assert "unknown option(s) folder; known: dir" in capsys.readouterr().err


def test_it_passes_the_conformance_kit(site: Path) -> None:
    from toolbridge.examples import toolbox

    payload: dict[str, Any] = {"conversation": "c1", "calls": [
        {"id": "1", "tool": "get_weather", "args": {"city": "Lima"}},
        {"id": "2", "tool": "get_customer", "args": {"customer_id": "42"}}]}
    check_dialect("echo", list(toolbox), payload)
    check_backend("echo")


def test_plugins_need_not_be_hashable(site: Path) -> None:
    """Capabilities of a plugin object that cannot be hashed are collected like any other's."""
    import types

    from toolbridge.plugin import Demos, hookimpl, register_plugin

    @hookimpl
    def toolbridge_demos() -> list[Demos]:
        return [Demos("echo", rank=1)]

    register_plugin(types.SimpleNamespace(toolbridge_demos=toolbridge_demos), "unhashable")
    with pytest.raises(PluginError, match="demo 'echo' declared twice: by 'unhashable' and by "
                       "'echo'"):
        capabilities()


async def test_its_connection_discovers_waiting_conversations(site: Path) -> None:
    from contextlib import aclosing

    from toolbridge.examples import toolbox
    from toolbridge.testing import emulated_options

    with emulator("echo", script=SCRIPT) as emu:
        async with capabilities().serving("echo").connect(
                emulated_options("echo", emu.base_url), list(toolbox)) as connection:
            assert connection.can_discover
            first, second = connection.backend(), connection.backend()
            await first.send(MESSAGE)
            async with aclosing(connection.discover()) as found:
                assert await anext(found) == first.conversation
                await second.send(MESSAGE)  # waits too: found next, the first not again
                assert await anext(found) == second.conversation
