"""The proof: assistants and threads made on the Assistants emulator, migrated to each target
emulator, one migrated conversation continued there with the same handlers (the model sees
the history); a migration killed half-way (SIGKILL) and run again duplicates nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from migration_support import Credential, export_jsonl, make_source, toolbox

from toolbridge.migration import Ledger, migrate, read_export
from toolbridge.serve import converse
from toolbridge.store import MemoryRecords, SqliteStore
from toolbridge.testing import FailRule, emulator

CALL = {"turns": [{"reply": "noted"}, {"reply": "noted"},
                  {"rounds": [[{"name": "get_customer", "arguments": {"customer_id": "42"}}]],
                   "reply": "Answer: {outputs}"}]}


@pytest.fixture
def source(tmp_path: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    with emulator("openai-assistants") as assistants:
        ids = make_source(assistants.base_url, threads=3, length=4)
        yield export_jsonl(assistants.base_url, ids, tmp_path / "export.jsonl"), ids


def _texts(items: list[dict[str, Any]]) -> list[str]:
    return ["".join(p.get("text", "") for p in i["content"]) for i in items
            if i.get("type", "message") == "message"]


def test_to_responses_conversations_and_continue(source: Any, tmp_path: Path) -> None:
    export, ids = source
    workload = read_export(export)
    with emulator("openai-responses", script=CALL) as emu:
        from toolbridge_openai_responses import ConversationsTarget, load_config

        target = ConversationsTarget(base_url=emu.base_url + "/v1", api_key="sk-test",
                                     config_dir=tmp_path / "config")
        ledger = Ledger(MemoryRecords(), "to-responses")
        report = migrate(workload, target, ledger)
        assert report.ok and report.counts()["verified"] == 3, report.table()
        assert report.remaps == {"gpt-4o": "gpt-5.1"}
        fates = {f.subject: f for f in report.fates}
        tools = f"{ids['assistant']}.tools"
        assert fates[f"{tools}.code_interpreter"].how.startswith("code_interpreter")
        assert fates[f"{tools}.file_search"].how == "file_search with vector stores ['vs_1']"
        again = migrate(workload, target, ledger)
        assert [t.status for t in again.threads] == ["done"] * 3 and again.ok
        assert len(emu.state.service.conversations) == 3  # nothing created twice

        config = load_config(report.agents[ids["assistant"]] or "")
        assert config["model"] == "gpt-5.1" and config["temperature"] == 0.3
        assert config["text"]["format"]["name"] == "answer"
        conversation = report.threads[0].target_id
        transcript = converse(toolbox(), "openai-responses", ["Who is customer 42?"], {
            "base_url": emu.base_url + "/v1", "api_key": "sk-test",
            "conversation": conversation, "model": config["model"],
            "instructions": config["instructions"]})
        assert transcript.status == "completed", transcript
        assert transcript.reply == 'Answer: ["{\\"id\\":\\"42\\",\\"name\\":\\"Ada\\"}"]'
        seen = list(emu.state.service.responses.values())[-1].context  # the model's input
        assert _texts(seen)[:4] == [f"thread 0 message {i}" for i in range(4)]


def test_to_agents_sessions_and_continue(source: Any) -> None:
    export, ids = source
    script = {"turns": [{"reply": "I have read the history."},
                        {"rounds": [[{"name": "get_customer",
                                      "arguments": {"customer_id": "42"}}]],
                         "reply": "Answer: {outputs}"}]}
    with emulator("openai-agents", script=script) as emu:
        from toolbridge_openai_agents import AgentsTarget

        target = AgentsTarget(base_url=emu.base_url + "/v1", api_key="sk-test")
        ledger = Ledger(MemoryRecords(), "to-agents")
        report = migrate(read_export(export), target, ledger)
        assert report.ok, report.table()
        agent = emu.state.agents[report.agents[ids["assistant"]]]
        assert agent["model"] == "gpt-5.1" and agent["metadata"]["description"] == (
            "Answers customers")
        assert [t["name"] for t in agent["tools"]] == ["get_customer"]
        assert all(t.verification and "1 later message" in t.verification.note
                   for t in report.threads)  # the agent answered the history once
        again = migrate(read_export(export), target, ledger)
        assert again.ok and len(emu.state.sessions) == 3 and len(emu.state.agents) == 1

        session = report.threads[1].target_id
        transcript = converse(toolbox(), "openai-agents", ["Who is customer 42?"], {
            "base_url": emu.base_url + "/v1", "api_key": "sk-test", "session_id": session})
        assert transcript.status == "completed", transcript
        assert "Ada" in (transcript.reply or "")
        items = emu.state.sessions[session].items
        assert _texts(items)[:2] == ["thread 1 message 0",
                                     "Assistant (earlier): thread 1 message 1"]


def test_to_foundry_prompt_agent_and_continue(source: Any) -> None:
    export, ids = source
    with emulator("openai-responses", script=CALL) as emu:
        from toolbridge_openai_responses import FoundryTarget

        project = emu.base_url + "/api/projects/proj1"
        credential = Credential()
        target = FoundryTarget(project_endpoint=project, credential=credential)
        ledger = Ledger(MemoryRecords(), "to-foundry")
        report = migrate(read_export(export), target, ledger)
        assert report.ok, report.table()
        name, version = (report.agents[ids["assistant"]] or "").split(":")
        definition = emu.state.service.agent_version(name, version)["definition"]
        assert definition["kind"] == "prompt" and definition["tools"][0]["strict"] is True
        fresh = Ledger(MemoryRecords(), "to-foundry")  # a lost ledger: found by its key
        assert migrate(read_export(export), target, fresh, dry_run=True).dry_run
        assert target.find_agent(target.plan_agent(read_export(export).assistants[0],
                                                   "gpt-5.1")) == f"{name}:{version}"

        conversation = report.threads[2].target_id
        transcript = converse(toolbox(), "openai-responses", ["Who is customer 42?"], {
            "project_endpoint": project, "credential": credential, "agent": name,
            "agent_version": version, "conversation": conversation})
        assert transcript.status == "completed", transcript
        seen = list(emu.state.service.responses.values())[-1].context
        assert _texts(seen)[:2] == ["thread 2 message 0", "thread 2 message 1"]
        assert {s for s in credential.scopes} == {("https://ai.azure.com/.default",)}


def test_a_lost_reply_to_an_append_is_not_sent_twice(source: Any, tmp_path: Path) -> None:
    """Request 3 (the first append) is processed, then answered 500: the engine lists the
    conversation before sending again and finds the items there."""
    export, _ = source
    faults = {"fail_requests": [FailRule(nth=3, status=500, after_processing=True)]}
    with emulator("openai-responses", faults=faults) as emu:
        from toolbridge_openai_responses import ConversationsTarget

        target = ConversationsTarget(base_url=emu.base_url + "/v1", api_key="k",
                                     config_dir=tmp_path)
        report = migrate(read_export(export), target, Ledger(MemoryRecords(), "lost"))
        assert report.ok, report.table()
        assert emu.journal.entries("POST")[1].dropped == 200
        posts = [e for e in emu.journal.entries("POST", "/items")]
        assert len(posts) == 3  # one append per thread: the lost reply was not resent
        for conversation in emu.state.service.conversations.values():
            assert len(conversation.items) == 4


def _cli(export: Path, base_url: str, store: str, config: Path, *extra: str
         ) -> subprocess.Popen[str]:
    env = {**os.environ, "TOKEN": "sk-test"}
    return subprocess.Popen(
        [sys.executable, "-m", "toolbridge", "migrate", str(export), "--to", "openai-responses",
         "-o", f"base_url={base_url}/v1", "-o", "token_env=TOKEN", "-o", f"config_dir={config}",
         "--store", store, "--name", "killed", "--no-progress", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_killed_half_way_and_run_again(tmp_path: Path) -> None:
    with emulator("openai-assistants") as assistants:
        ids = make_source(assistants.base_url, threads=8, length=25)  # 2 appends a thread
        export = export_jsonl(assistants.base_url, ids, tmp_path / "export.jsonl")
    store = f"sqlite:///{tmp_path / 'ledger.db'}"
    with emulator("openai-responses", faults={"latency_ms": 25}) as emu:
        first = _cli(export, emu.base_url, store, tmp_path / "config")
        deadline = time.monotonic() + 60
        while len(emu.journal.entries("POST", "/items")) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        first.send_signal(signal.SIGKILL)
        first.communicate()
        assert first.returncode == -signal.SIGKILL
        before = len(emu.state.service.conversations)
        assert 0 < before < 8  # killed half-way

        second = _cli(export, emu.base_url, store, tmp_path / "config", "--json", "-")
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err
        report = json.loads(out)
        assert report["counts"]["threads"] == 8 and report["counts"]["verified"] == 8
        statuses = Counter(t["status"] for t in report["threads"])
        assert statuses["done"] + statuses["resumed"] >= 1 and statuses["created"] >= 1

        mapped = {t["target_id"] for t in report["threads"]}
        for conversation_id, conversation in emu.state.service.conversations.items():
            texts = _texts(conversation.items)
            if conversation_id in mapped:
                thread = int(texts[0].split()[1])
                assert texts == [f"thread {thread} message {i}" for i in range(25)]
            else:  # created before the kill, its id not recorded: empty and reported
                assert texts == [] and report["possible_orphans"], report
        assert len(emu.state.service.conversations) - len(mapped) == len(
            report["possible_orphans"])
    records = SqliteStore(str(tmp_path / "ledger.db")).records()
    assert records is not None and len(records.list("migration:killed", "thread/")) == 8


def test_rate_limited_append_waits_and_is_sent_once(source: Any, tmp_path: Path) -> None:
    """A 429 with Retry-After on the first append: the client waits as told, then sends it
    again (a 429 was not processed), and nothing is duplicated."""
    export, _ = source
    faults = {"fail_requests": [FailRule(nth=3, status=429, retry_after=0.2)]}
    with emulator("openai-responses", faults=faults) as emu:
        from toolbridge_openai_responses import ConversationsTarget

        target = ConversationsTarget(base_url=emu.base_url + "/v1", api_key="k",
                                     config_dir=tmp_path)
        started = time.monotonic()
        report = migrate(read_export(export), target, Ledger(MemoryRecords(), "429"))
        assert report.ok and time.monotonic() - started >= 0.2
        assert [e.status for e in emu.journal.entries("POST", "/items")][:2] == [429, 200]
        assert all(len(c.items) == 4 for c in emu.state.service.conversations.values())


def test_openai_sdk_saved_agents_on_the_emulator() -> None:
    from openai import OpenAI

    with emulator("openai-agents") as emu:
        client = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0)
        agent = client.beta.agents.create(model="gpt-5.1", name="desk",
                                          metadata={"source_assistant_id": "asst_1"})
        assert client.beta.agents.retrieve(agent.id).name == "desk"
        assert [a.id for a in client.beta.agents.list()] == [agent.id]
