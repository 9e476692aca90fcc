"""Foundry classic agents, served by the Assistants adapter: the project endpoint form,
Entra tokens, ``api-version=v1``, no ``OpenAI-Beta`` header, no ``strict`` on functions —
with azure-ai-agents' own client against the emulator, then ours (serve and migration source)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from migration_support import CUSTOMER_TOOL, Credential, toolbox

from toolbridge import UsageError
from toolbridge.serve import converse
from toolbridge.testing import emulator

SCRIPT = {"turns": [{"rounds": [[{"name": "get_customer", "arguments": {"customer_id": "7"}}]],
                     "reply": "Answer: {outputs}"}] * 3}
PLAIN = {"type": "function", "function": {k: v for k, v in CUSTOMER_TOOL["function"].items()
                                          if k != "strict"}}


@pytest.fixture
def emu() -> Iterator[Any]:
    with emulator("openai-assistants", script=SCRIPT) as running:
        yield running


def test_azure_ai_agents_client_against_the_emulator(emu: Any) -> None:
    from azure.ai.agents import AgentsClient
    from azure.ai.agents.models import ToolOutput

    project = emu.base_url + "/api/projects/proj1"
    credential = Credential()
    client = AgentsClient(endpoint=project, credential=credential)  # type: ignore[arg-type]
    http = {"enforce_https": False}  # azure-core refuses bearer tokens over plain http
    agent = client.create_agent(model="gpt-4.1", name="desk", tools=[PLAIN], **http)
    thread = client.threads.create(**http)
    client.messages.create(thread_id=thread.id, role="user", content="Who is 7?", **http)
    run = client.runs.create(thread_id=thread.id, agent_id=agent.id, **http)
    while run.status in ("queued", "in_progress"):
        time.sleep(0.02)
        run = client.runs.get(thread_id=thread.id, run_id=run.id, **http)
    assert run.status == "requires_action"
    body = toolbox().handle("openai-assistants", run.as_dict())
    run = client.runs.submit_tool_outputs(
        thread_id=thread.id, run_id=run.id,
        tool_outputs=[ToolOutput(**o) for o in body["tool_outputs"]], **http)
    while run.status in ("queued", "in_progress"):
        time.sleep(0.02)
        run = client.runs.get(thread_id=thread.id, run_id=run.id, **http)
    assert run.status == "completed"
    assert [t.id for t in client.threads.list(**http)] == [thread.id]

    requests = emu.journal.entries(contains="/api/projects/proj1/")
    assert requests and all("api-version=v1" in e.query for e in requests)
    assert all("openai-beta" not in {k.lower() for k in e.headers} for e in requests)
    assert {s for s in credential.scopes} == {("https://ai.azure.com/.default",)}


def test_the_project_form_refuses_keys_beta_versions_and_strict(emu: Any) -> None:
    import httpx

    url = emu.base_url + "/api/projects/proj1/assistants"
    bearer = {"Authorization": "Bearer t"}
    assert httpx.post(url, json={"model": "m"}, headers=bearer).status_code == 400  # version
    assert httpx.post(url + "?api-version=v1", json={"model": "m"},
                      headers={"api-key": "k"}).status_code == 401
    strict = httpx.post(url + "?api-version=v1", json={"model": "m", "tools": [CUSTOMER_TOOL]},
                        headers=bearer)
    assert strict.status_code == 400 and "function.strict" in strict.text
    assert httpx.get(emu.base_url + "/v1/threads", headers={
        **bearer, "OpenAI-Beta": "assistants=v2"}).status_code in (404, 405)  # OpenAI: no list


def test_our_client_and_serve_driver_on_foundry_classic(emu: Any) -> None:
    from toolbridge_openai_assistants import AssistantsClient, read_workload

    project = emu.base_url + "/api/projects/proj1"
    with pytest.raises(UsageError, match="Entra token"):
        AssistantsClient(project_endpoint=project, api_key="key")
    credential = Credential()
    transcript = converse(toolbox(), "openai-assistants", ["Who is 7?"], {
        "project_endpoint": project, "credential": credential, "model": "gpt-4.1"})
    assert transcript.status == "completed", transcript
    assert json.loads(json.loads(transcript.reply.removeprefix("Answer: "))[0])["id"] == "7"
    created = emu.journal.entries("POST", "/api/projects/proj1/assistants")[0].body
    assert "strict" not in created["tools"][0]["function"]  # stripped for classic agents

    with AssistantsClient(project_endpoint=project, credential=credential) as client:
        workload = read_workload(client)  # Foundry classic lists its threads
    assert len(workload.assistants) == 1 and len(workload.threads) == 1
    roles = [m["role"] for m in workload.thread_messages(workload.threads[0]["id"])]
    assert roles == ["user", "assistant"]


def test_openai_sources_need_thread_ids(emu: Any) -> None:
    from toolbridge_openai_assistants import AssistantsClient, read_workload

    with AssistantsClient(base_url=emu.base_url + "/v1", api_key="k") as client, \
            pytest.raises(UsageError, match="cannot list threads"):
        read_workload(client)


def test_migrate_command_reads_a_live_foundry_classic_endpoint(
        emu: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from toolbridge.cli import main
    from toolbridge_openai_assistants import AssistantsClient

    project = emu.base_url + "/api/projects/proj1"
    with AssistantsClient(project_endpoint=project, credential=Credential()) as client:
        client.create_assistant(model="gpt-4o", name="desk", tools=[PLAIN])
        for i in range(3):
            client.create_thread(messages=[{"role": "user", "content": f"hello {i}"}])
    monkeypatch.setenv("ENTRA", "entra-token")
    with emulator("openai-agents") as agents:
        code = main(["migrate", "--source-option", f"project_endpoint={project}",
                     "--source-option", "token_env=ENTRA", "--to", "openai-agents",
                     "-o", f"base_url={agents.base_url}/v1", "-o", "api_key=k",
                     "--ledger", str(tmp_path / "ledger.json"), "--progress", "--json", "-"])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        report = json.loads(captured.out)
        assert report["counts"]["threads"] == 3 and report["counts"]["verified"] == 3
        assert "threads [" in captured.err and "3/3" in captured.err  # the progress bar
        assert len(agents.state.agents) == 1 and len(agents.state.sessions) == 3
