"""A migrated conversation continued with the same handlers on every target: the next request
(as the target emulator's journal holds it) carries the migrated tools, sampling and format,
and the model sees the migrated tool exchanges; a live source's unfinished runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from migration_support import ASSISTANT, TOOL_SCRIPT, Credential, make_runs, toolbox
from openai.types.responses import ResponseCreateParams
from openai_sdk_types import check_param

import toolbridge
from toolbridge.migration import Ledger, MigrationReport, MigrationTarget, Workload, migrate
from toolbridge.migration.targets import CURRENT_MODELS, DEFAULT_MODEL, RETIRED_MODELS
from toolbridge.serve import converse
from toolbridge.store import MemoryRecords
from toolbridge.testing import emulator

CALL = {"turns": [{}, {"rounds": [[{"name": "get_customer",
                                     "arguments": {"customer_id": "42"}}]],
                       "reply": "Answer: {outputs}"}]}
"""The migrated history's one user turn, then the continued one with a call."""


def _workload() -> Workload:
    workload = Workload()
    workload.add({"id": "asst_1", "object": "assistant", **ASSISTANT}, "test")
    workload.add({"id": "thread_1", "object": "thread", "metadata": {}}, "test")
    workload.add_sequence([
        {"id": "msg_1", "object": "thread.message", "thread_id": "thread_1", "created_at": 1,
         "role": "user", "content": [{"type": "text", "text": {"value": "Hello"}}]},
        {"id": "msg_2", "object": "thread.message", "thread_id": "thread_1", "created_at": 2,
         "role": "assistant", "assistant_id": "asst_1",
         "content": [{"type": "text", "text": {"value": "Hi"}}]}], "test")
    return workload.finish()


def _create_bodies(emu: Any, path: str = "/v1/responses") -> list[dict[str, Any]]:
    return [e.body for e in emu.journal.entries("POST", path)]


def test_no_serve_option_defaults_to_a_retired_model() -> None:
    defaults = {}
    for serves in toolbridge.plugin.capabilities().serve_backends():
        field = serves.options.model_fields.get("model")
        if field is not None and field.default is not None:
            defaults[serves.dialect] = field.default
    openai = {"openai-assistants", "openai-chat", "openai-responses"}
    assert openai <= set(defaults)
    assert {defaults[name] for name in openai} <= CURRENT_MODELS, defaults
    assert not set(defaults.values()) & set(RETIRED_MODELS), defaults  # other providers' too
    assert DEFAULT_MODEL in CURRENT_MODELS


def test_responses_continued_with_the_configuration_file(tmp_path: Path) -> None:
    from toolbridge_openai_responses import ConversationsTarget, load_config

    with emulator("openai-responses", script=CALL) as emu:
        target = ConversationsTarget(base_url=emu.base_url + "/v1", api_key="sk-test",
                                     config_dir=tmp_path / "config")
        report = migrate(_workload(), target, Ledger(MemoryRecords(), "continue"))
        assert report.ok, report.table()
        path = report.agents["asst_1"] or ""
        conversation = report.threads[0].target_id
        transcript = converse(toolbox(), "openai-responses", ["Who is customer 42?"], {
            "base_url": emu.base_url + "/v1", "api_key": "sk-test",
            "conversation": conversation, "config": path})
        bodies = _create_bodies(emu)
    assert transcript.status == "completed", transcript
    assert "Ada" in (transcript.reply or "")
    config = load_config(path)
    assert len(bodies) == 2  # the call, then its answer: both carry the configuration
    for body in bodies:
        assert body["model"] == "gpt-5.1" and body["instructions"] == "Be brief."
        assert body["temperature"] == 0.3 and body["top_p"] == 0.9
        assert body["text"] == config["text"] and body["text"]["format"]["name"] == "answer"
        assert [t["type"] for t in body["tools"]] == ["function", "code_interpreter",
                                                      "file_search"]
        assert body["tools"][1:] == [t for t in config["tools"] if t["type"] != "function"]
        assert body["tools"][2]["vector_store_ids"] == ["vs_1"]
        assert check_param({k: v for k, v in body.items() if k != "stream"},
                           ResponseCreateParams) == []


def test_responses_options_refuse_a_function_without_a_handler(tmp_path: Path) -> None:
    from toolbridge_openai_responses import ResponsesServeOptions

    options = ResponsesServeOptions.parse(
        tools=[{"type": "function", "name": "refund", "parameters": {}}],
        base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    with pytest.raises(toolbridge.UsageError, match=r"tools\[0\]: function 'refund'"):
        options.request_fields([{"type": "function", "name": "get_customer"}])
    agent = ResponsesServeOptions.parse(agent="support", temperature=0.3,
                                        project_endpoint="https://p", api_key="k")
    with pytest.raises(toolbridge.UsageError, match="temperature: the saved agent"):
        agent.request_fields([])


@pytest.fixture(scope="module")
def source() -> Any:
    """A live source (the Assistants emulator): a thread whose run called the function and
    completed, and one whose run waits for its output; read without waiting."""
    from toolbridge_openai_assistants import AssistantsClient, read_workload

    with emulator("openai-assistants", script=TOOL_SCRIPT) as emu, AssistantsClient(
            base_url=emu.base_url + "/v1", api_key="sk-test") as client:
        assistant = client.create_assistant(**ASSISTANT)
        ids = make_runs(client, assistant["id"])
        workload = read_workload(client, thread_ids=[ids["done"], ids["live"]])
        steps = emu.journal.entries("GET", f"/v1/threads/{ids['done']}/runs/"
                                    f"{workload.runs[ids['done']][0]['id']}/steps")
        yield {**ids, "assistant": assistant["id"], "workload": workload,
               "steps_read": len(steps)}


def test_a_live_source_reads_run_steps_and_holds_back_an_unfinished_run(source: Any) -> None:
    from openai.types.beta.threads.runs import RunStep
    from openai_sdk_types import check_model

    workload = source["workload"]
    assert source["steps_read"] == 1
    assert workload.unfinished == {source["live"]: f"run {source['live_run']} is "
                                   "requires_action"}
    history = workload.thread_history(source["done"])
    assert [h.get("type") if h["object"] == "thread.run.step" else h["role"]
            for h in history] == ["user", "tool_calls", "assistant"]
    assert all(check_model(h, RunStep) == [] for h in history[1:2])
    function = history[1]["step_details"]["tool_calls"][0]["function"]
    assert function["output"] == '{"id": "7", "name": "Ada"}'


def _migrated(source: Any, target: MigrationTarget) -> MigrationReport:
    report = migrate(source["workload"], target, Ledger(MemoryRecords(), "steps"))
    assert report.ok, report.table()
    assert [t.status for t in report.threads] == ["created", "skipped"]
    assert report.counts()["skipped"] == 1
    fates = {f.subject: f for f in report.fates}
    assert fates[source["live"]].fate == "dropped" and "requires_action" in fates[
        source["live"]].how
    return report


CONTINUE = {"turns": [TOOL_SCRIPT["turns"][0],
                      {"rounds": [[{"name": "get_customer", "arguments": {"customer_id": "8"}}]],
                       "reply": "Answer: {outputs}"}]}
"""The target's model: the migrated turn as the source played it (its call replayed from the
history), then the continued one."""


def test_responses_history_holds_the_tool_exchange(source: Any, tmp_path: Path) -> None:
    from toolbridge_openai_responses import ConversationsTarget

    with emulator("openai-responses", script=CONTINUE) as emu:
        target = ConversationsTarget(base_url=emu.base_url + "/v1", api_key="sk-test",
                                     config_dir=tmp_path / "config")
        report = _migrated(source, target)
        conversation = report.threads[0].target_id
        assert report.threads[0].verification is not None
        assert report.threads[0].verification.source_messages == 4  # 2 messages, 1 pair
        appended = [i for e in emu.journal.entries("POST", f"/v1/conversations/{conversation}"
                                                   "/items") for i in e.body["items"]]
        transcript = converse(toolbox(), "openai-responses", ["And customer 8?"], {
            "base_url": emu.base_url + "/v1", "api_key": "sk-test",
            "conversation": conversation, "config": report.agents[source["assistant"]]})
        body = _create_bodies(emu)[0]
        seen = list(emu.state.service.responses.values())[-1].context  # the model's input
    assert [i.get("type") for i in appended] == ["message", "function_call",
                                                 "function_call_output", "message"]
    assert appended[1]["call_id"] == appended[2]["call_id"] == source["call"]
    assert transcript.status == "completed" and "Ada" in (transcript.reply or "")
    assert body["temperature"] == 0.3 and body["text"]["format"]["name"] == "answer"
    assert [t["type"] for t in body["tools"]] == ["function", "code_interpreter", "file_search"]
    assert [i.get("type", "message") for i in seen][:4] == [
        "message", "function_call", "function_call_output", "message"]
    assert seen[2]["output"] == '{"id": "7", "name": "Ada"}'


def test_foundry_agent_holds_the_configuration_and_history_the_exchange(source: Any) -> None:
    from toolbridge_openai_responses import FoundryTarget

    with emulator("openai-responses", script=CONTINUE) as emu:
        project = emu.base_url + "/api/projects/p"
        credential = Credential()
        report = _migrated(source, FoundryTarget(project_endpoint=project,
                                                 credential=credential))
        name, version = (report.agents[source["assistant"]] or "").split(":")
        definition = emu.state.service.agent_version(name, version)["definition"]
        transcript = converse(toolbox(), "openai-responses", ["And customer 8?"], {
            "project_endpoint": project, "credential": credential, "agent": name,
            "agent_version": version, "conversation": report.threads[0].target_id})
        bodies = _create_bodies(emu, "/api/projects/p/openai/v1/responses")
        final = list(emu.state.service.responses.values())[-1]
    assert definition["temperature"] == 0.3 and definition["top_p"] == 0.9
    assert definition["text"]["format"]["name"] == "answer"
    assert [t["type"] for t in definition["tools"]] == ["function", "code_interpreter",
                                                        "file_search"]
    assert any(f.subject == f"{source['assistant']}.agent" and f.fate == "carried"
               for f in report.fates), report.table()
    assert transcript.status == "completed" and "Ada" in (transcript.reply or "")
    assert bodies and all(b["agent_reference"] == {"type": "agent_reference", "name": name,
                                                   "version": version}
                          and "tools" not in b and "temperature" not in b for b in bodies)
    assert [t["type"] for t in final.final["tools"]] == ["function", "code_interpreter",
                                                            "file_search"]
    assert [i.get("type", "message") for i in final.context][:4] == [
        "message", "function_call", "function_call_output", "message"]


def test_agents_session_of_the_saved_agent_quotes_the_exchange(source: Any) -> None:
    from toolbridge_openai_agents import AgentsTarget
    from toolbridge_openai_agents.migration import TOOL_CALL_PREFIX

    script = {"turns": [{"reply": "I have read the history."},
                        {"rounds": [[{"name": "get_customer",
                                      "arguments": {"customer_id": "8"}}]],
                         "reply": "Answer: {outputs}"}]}
    with emulator("openai-agents", script=script) as emu:
        report = _migrated(source, AgentsTarget(base_url=emu.base_url + "/v1",
                                                api_key="sk-test"))
        session = report.threads[0].target_id or ""
        [created] = [e.body for e in emu.journal.entries("POST", "/v1/agents/sessions")]
        transcript = converse(toolbox(), "openai-agents", ["And customer 8?"], {
            "base_url": emu.base_url + "/v1", "api_key": "sk-test", "session_id": session})
        agent_id = emu.state.sessions[session].agent["id"]
    texts = [p["text"] for m in created["input"] for p in m["content"]]
    assert texts[1] == (f'{TOOL_CALL_PREFIX}get_customer({{"customer_id": "7"}}) -> '
                        '{"id": "7", "name": "Ada"}')
    assert agent_id == report.agents[source["assistant"]]
    assert any(f.subject == f"{source['assistant']}.agent" and f.fate == "carried"
               for f in report.fates), report.table()
    assert transcript.status == "completed" and "Ada" in (transcript.reply or "")


def test_waiting_for_runs_lets_the_thread_migrate() -> None:
    import threading

    from toolbridge_openai_assistants import AssistantsClient, read_workload

    with emulator("openai-assistants", script=TOOL_SCRIPT) as emu, AssistantsClient(
            base_url=emu.base_url + "/v1", api_key="sk-test", poll_interval=0.05) as client:
        assistant = client.create_assistant(**ASSISTANT)
        ids = make_runs(client, assistant["id"])
        run = client.retrieve_run(ids["live"], ids["live_run"])
        [call] = run["required_action"]["submit_tool_outputs"]["tool_calls"]

        def answer() -> None:  # the old side answers the run while the migration waits
            client.submit_tool_outputs(ids["live"], ids["live_run"], {"tool_outputs": [
                {"tool_call_id": call["id"], "output": "Ada"}]})

        later = threading.Timer(0.3, answer)
        later.start()
        workload = read_workload(client, thread_ids=[ids["live"]], wait_runs=30)
        later.join()
        short = read_workload(client, thread_ids=[ids["done"]], wait_runs=0.1)
    assert workload.unfinished == {} and short.unfinished == {}
    history = workload.thread_history(ids["live"])
    assert [h["object"] for h in history] == ["thread.message", "thread.run.step",
                                              "thread.message"]


def test_an_agent_that_does_not_hold_the_configuration_fails_the_report(tmp_path: Path
                                                                        ) -> None:
    import json

    from toolbridge_openai_responses import ConversationsTarget

    with emulator("openai-responses") as emu:
        target = ConversationsTarget(base_url=emu.base_url + "/v1", api_key="sk-test",
                                     config_dir=tmp_path / "config")
        first = migrate(_workload(), target, Ledger(MemoryRecords(), "edited"))
        path = Path(first.agents["asst_1"] or "")
        data = json.loads(path.read_text())
        del data["temperature"]  # edited by hand since; found again by its migration key
        data["tools"][0]["name"] = "renamed"
        path.write_text(json.dumps(data))
        again = migrate(_workload(), target, Ledger(MemoryRecords(), "edited"))
    fates = {f.subject: f for f in again.fates}
    assert fates["asst_1.agent"].fate == "dropped" and not again.ok
    assert fates["asst_1.agent"].how.endswith("does not hold what was written: tools[0].name, "
                                              "temperature")
    assert first.ok and {f.subject: f for f in first.fates}["asst_1.agent"].fate == "carried"


@pytest.mark.filterwarnings("ignore:The Assistants API is deprecated:DeprecationWarning")
def test_the_openai_sdk_lists_the_emulated_runs_and_steps() -> None:
    from openai import OpenAI

    from toolbridge_openai_assistants import AssistantsClient

    with emulator("openai-assistants", script=TOOL_SCRIPT) as emu:
        with AssistantsClient(base_url=emu.base_url + "/v1", api_key="sk-test") as client:
            ids = make_runs(client, client.create_assistant(**ASSISTANT)["id"])
        sdk = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test")
        [run] = sdk.beta.threads.runs.list(thread_id=ids["done"]).data
        steps = sdk.beta.threads.runs.steps.list(run_id=run.id, thread_id=ids["done"],
                                                 order="asc").data
        [waiting] = sdk.beta.threads.runs.list(thread_id=ids["live"]).data
        [open_step] = sdk.beta.threads.runs.steps.list(run_id=waiting.id,
                                                       thread_id=ids["live"]).data
    assert run.status == "completed" and waiting.status == "requires_action"
    assert [s.type for s in steps] == ["tool_calls", "message_creation"]
    call = steps[0].step_details.tool_calls[0]
    assert call.id == ids["call"] and call.function.output == '{"id": "7", "name": "Ada"}'
    assert open_step.status == "in_progress"
    assert open_step.step_details.tool_calls[0].function.output is None


def test_responses_config_option_errors_name_the_file(tmp_path: Path) -> None:
    import json

    from toolbridge_openai_responses import ResponsesServeOptions

    with pytest.raises(toolbridge.UsageError, match="config: cannot read"):
        ResponsesServeOptions.parse({"config": str(tmp_path / "missing.json")})
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model": "gpt-5.1", "base_url": "https://elsewhere"}))
    with pytest.raises(toolbridge.UsageError, match="holds base_url, which a request"):
        ResponsesServeOptions.parse({"config": str(bad)})
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"model": "gpt-5.1", "temperature": 0.3,
                                "toolbridge": {"source_assistant_id": "asst_1"}}))
    options = ResponsesServeOptions.parse({"config": str(good), "temperature": "0.7"})
    assert options.model == "gpt-5.1" and options.temperature == 0.7  # given options win
