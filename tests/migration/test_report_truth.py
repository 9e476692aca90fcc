"""The report tells the truth: retired models of every family remapped with their source, an
unknown model reported ``unknown``, same-second messages of newest-first pages in the
source's order, a fate for every message, thread metadata and tool resource, possible orphans
kept in the ledger until deleted. The export is written by hand, literally, below."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from migration_support import Credential

from toolbridge import BackendError, UsageError
from toolbridge.cli import main
from toolbridge.migration import Ledger, delete_orphans, migrate, orphan_lines, read_export
from toolbridge.migration.targets import resolve_model
from toolbridge.store import MemoryRecords
from toolbridge.testing import FailRule, emulator

LOOKUP = {"type": "function", "function": {
    "name": "lookup", "description": "Find an order.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"},
                                                    "region": {"type": "string"}},
                   "required": ["order_id"], "additionalProperties": False}}}


def _text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": {"value": value, "annotations": []}}]


EXPORT: dict[str, Any] = {
    "toolbridge_export": 1,
    "assistants": [
        {"id": "asst_old", "object": "assistant", "created_at": 1, "model": "gpt-4-1106-preview",
         "name": "Orders", "instructions": "Be brief.", "tools": [LOOKUP], "metadata": {},
         "tool_resources": {}},
        {"id": "asst_caps", "object": "assistant", "created_at": 2, "model": "GPT-4o",
         "name": "Caps", "instructions": None, "tools": [], "metadata": {}},
    ],
    "threads": [
        {"id": "thread_desc", "object": "thread", "created_at": 5,
         "metadata": {"assistant_id": "asst_old", "customer": "7"},
         "tool_resources": {"code_interpreter": {"file_ids": ["file_9"]}}},
        {"id": "thread_tied", "object": "thread", "created_at": 6,
         "metadata": {"assistant_id": "asst_caps"}},
    ],
    "messages": {
        # the API's default order: newest first; msg_b and msg_c share a second
        "thread_desc": {"object": "list", "has_more": False, "first_id": "msg_d",
                        "last_id": "msg_a", "data": [
                            {"id": "msg_d", "object": "thread.message", "created_at": 30,
                             "role": "assistant", "assistant_id": "asst_old",
                             "content": _text("fourth")},
                            {"id": "msg_c", "object": "thread.message", "created_at": 20,
                             "role": "user", "content": _text("third")},
                            {"id": "msg_b", "object": "thread.message", "created_at": 20,
                             "role": "assistant", "assistant_id": "asst_old",
                             "content": _text("second")},
                            {"id": "msg_a", "object": "thread.message", "created_at": 10,
                             "role": "user", "content": _text("first"),
                             "metadata": {"channel": "web"}}]},
        # one second for both, no order given: the order cannot be known
        "thread_tied": [
            {"id": "msg_y", "object": "thread.message", "created_at": 40, "role": "user",
             "content": _text("hello")},
            {"id": "msg_z", "object": "thread.message", "created_at": 40, "role": "user",
             "content": _text("again")}],
    },
}
IN_ORDER = ["first", "second", "third", "fourth"]


@pytest.fixture
def export(tmp_path: Path) -> Path:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(EXPORT), encoding="utf-8")
    return path


@pytest.mark.parametrize(("model", "family", "new"), [
    ("gpt-3.5-turbo-0125", "gpt-3.5-turbo", "gpt-5.1-mini"),
    ("gpt-3.5-turbo-1106", "gpt-3.5-turbo", "gpt-5.1-mini"),
    ("gpt-3.5-turbo-16k", "gpt-3.5-turbo-16k", "gpt-5.1-mini"),
    ("gpt-35-turbo-16k", "gpt-3.5-turbo-16k", "gpt-5.1-mini"),  # Azure's spelling
    ("gpt-4-0613", "gpt-4", "gpt-5.1"),
    ("gpt-4-32k", "gpt-4-32k", "gpt-5.1"),
    ("gpt-4-32k-0613", "gpt-4-32k", "gpt-5.1"),
    ("gpt-4-1106-preview", "gpt-4-1106-preview", "gpt-5.1"),
    ("gpt-4-0125-preview", "gpt-4-0125-preview", "gpt-5.1"),
    ("gpt-4-turbo-preview", "gpt-4-turbo-preview", "gpt-5.1"),
    ("gpt-4-1106-vision-preview", "gpt-4-1106-vision-preview", "gpt-5.1"),
    ("gpt-4.5-preview-2025-02-27", "gpt-4.5-preview", "gpt-5.1"),
    ("gpt-35-turbo", "gpt-3.5-turbo", "gpt-5.1-mini"),
    ("o1-2024-12-17", "o1", "gpt-5.1"),
    ("gpt-4-turbo-2024-04-09", "gpt-4-turbo", "gpt-5.1"),
    ("o1-preview", "o1-preview", "gpt-5.1"),
    ("o1-preview-2024-09-12", "o1-preview", "gpt-5.1"),
    ("o1-mini", "o1-mini", "gpt-5.1-mini"),
    ("GPT-4o", "gpt-4o", "gpt-5.1"),
    ("gpt-4o-2024-05-13", "gpt-4o", "gpt-5.1"),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", "gpt-5.1-mini"),
    ("gpt-4.1-nano-2025-04-14", "gpt-4.1-nano", "gpt-5.1-nano"),
    ("o3-mini-2025-01-31", "o3-mini", "gpt-5.1-mini"),
    ("gpt-5-mini", "gpt-5-mini", "gpt-5.1-mini"),
])
def test_every_retired_family_is_remapped_with_its_source(model: str, family: str,
                                                           new: str) -> None:
    choice = resolve_model(model)
    assert (choice.fate, choice.model) == ("remapped", new)
    assert f"{model} remapped to {new} (family {family};" in choice.how
    assert "OpenAI deprecations" in choice.how and "shut down" in choice.how


def test_current_unknown_overridden_and_deployed_models() -> None:
    assert resolve_model("gpt-5.1").fate == "carried"
    assert (resolve_model("GPT-5.1").fate, resolve_model("GPT-5.1").model) == (
        "remapped", "gpt-5.1")  # a case spelling the target may refuse
    unknown = resolve_model("support-prod")
    assert (unknown.fate, unknown.model) == ("unknown", "support-prod")
    assert "--model-map support-prod=NEW" in unknown.how
    deployed = resolve_model("support-prod", deployments={"support-prod": "gpt-4o"})
    assert (deployed.fate, deployed.model) == ("remapped", "gpt-5.1")
    assert deployed.how.startswith("Azure deployment support-prod serves gpt-4o")
    family = resolve_model("gpt-4o-2024-08-06", {"gpt-4o": "mine"})
    assert (family.model, family.override) == ("mine", "gpt-4o")


def test_newest_first_pages_keep_same_second_order_and_unknown_order_is_said(
        export: Path) -> None:
    workload = read_export(export)
    assert [m["id"] for m in workload.thread_messages("thread_desc")] == [
        "msg_a", "msg_b", "msg_c", "msg_d"]
    assert "thread_desc" not in workload.order_notes
    assert "msg_y, msg_z share a created_at second" in workload.order_notes["thread_tied"]


def _fates(report: Any) -> dict[str, Any]:
    return {f.subject: f for f in report.fates}


def _common_fates(report: Any) -> None:
    fates = _fates(report)
    assert fates["asst_old.model"].fate == "approximated"
    assert "gpt-4-1106-preview remapped to gpt-5.1" in fates["asst_old.model"].how
    assert fates["asst_caps.model"].fate == "approximated"  # GPT-4o is not carried
    assert fates["thread_desc.msg_a.metadata"].fate == "dropped"
    assert fates["thread_desc.metadata"].fate == "carried"
    assert fates["thread_desc.tool_resources.code_interpreter"].fate == "dropped"
    assert "file_9" in fates["thread_desc.tool_resources.code_interpreter"].how
    assert fates["thread_tied.order"].fate == "approximated"
    for message in ("msg_a", "msg_b", "msg_c", "msg_d", "msg_y", "msg_z"):
        thread = "thread_tied" if message > "msg_x" else "thread_desc"
        assert f"{thread}.{message}" in fates, message  # keyed by the source's ids
    assert not any(".messages[" in s for s in fates)
    assert all(f.fate != "carried" for s, f in fates.items() if s.endswith(".model"))


def _texts(items: Any) -> list[str]:
    return ["".join(getattr(p, "text", "") or "" for p in item.content) for item in items
            if item.type == "message"]


def test_to_responses_order_fates_and_strict_rewrite(export: Path, tmp_path: Path) -> None:
    from openai import OpenAI

    from toolbridge_openai_responses import ConversationsTarget

    with emulator("openai-responses") as emu:
        target = ConversationsTarget(base_url=emu.base_url + "/v1", api_key="sk-test",
                                     config_dir=tmp_path / "config")
        report = migrate(read_export(export), target, Ledger(MemoryRecords(), "truth"))
        assert report.ok, report.table()
        _common_fates(report)
        tool = _fates(report)["asst_old.tools.lookup"]
        assert tool.fate == "approximated", tool
        assert tool.how.startswith("sent as strict: true")
        assert "optional region made required and nullable" in tool.how
        sdk = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0)
        conversation = report.threads[0].target_id or ""
        items = list(sdk.conversations.items.list(conversation, order="asc"))
        assert _texts(items) == IN_ORDER
        assert sdk.conversations.retrieve(conversation).metadata == {
            "customer": "7", "assistant_id": "asst_old", "source_thread_id": "thread_desc",
            "source_assistant_id": "asst_old"}
        assert len(emu.state.service.conversations) == 2
    config = json.loads(Path(report.agents["asst_old"] or "").read_text())
    assert config["model"] == "gpt-5.1"


def test_to_agents_order_and_thread_tool_resources(export: Path) -> None:
    from openai import OpenAI

    from toolbridge_openai_agents import AgentsTarget
    from toolbridge_openai_agents.migration import ASSISTANT_PREFIX

    with emulator("openai-agents") as emu:
        target = AgentsTarget(base_url=emu.base_url + "/v1", api_key="sk-test")
        report = migrate(read_export(export), target, Ledger(MemoryRecords(), "truth"))
        assert all(t.verification and t.verification.target_messages
                   == t.verification.source_messages for t in report.threads), report.table()
        _common_fates(report)
        assert "Agents API has no code interpreter" in _fates(report)[
            "thread_desc.tool_resources.code_interpreter"].how
        sdk = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0)
        items = sdk.beta.agents.sessions.items.list(report.threads[0].target_id or "",
                                                    order="asc")
        texts = [t for item, t in zip(items, _texts(items), strict=True)
                 if getattr(item, "role", None) == "user"]
        assert texts == ["first", ASSISTANT_PREFIX + "second", "third",
                         ASSISTANT_PREFIX + "fourth"]
        assert {a["model"] for a in emu.state.agents.values()} == {"gpt-5.1"}
        assert len(emu.state.sessions) == 2


def test_to_foundry_refuses_an_undeployed_model_before_writing(export: Path) -> None:
    from openai import OpenAI

    from toolbridge_openai_responses import FoundryTarget

    with emulator("openai-responses") as emu:
        project = emu.base_url + "/api/projects/proj1"
        target = FoundryTarget(project_endpoint=project, credential=Credential())
        ledger = Ledger(MemoryRecords(), "foundry")
        emu.state.service.deployments.pop("gpt-5.1")
        with pytest.raises(UsageError, match=r"no deployment serves gpt-5\.1.*--model-map"):
            migrate(read_export(export), target, ledger)
        assert emu.state.service.agents == {} and emu.state.service.conversations == {}
        assert ledger.entries("agent") == {} and ledger.entries("thread") == {}
        assert [e.query for e in emu.journal.entries("GET", "/deployments")] == [
            "api-version=v1"]

        emu.state.service.deployments["gpt-5.1"] = "gpt-5.1"
        report = migrate(read_export(export), target, ledger)
        assert report.ok, report.table()
        _common_fates(report)
        assert _fates(report)["asst_old.tools.lookup"].how.startswith("sent as strict: true")
        sdk = OpenAI(base_url=project + "/openai/v1", api_key="entra-token", max_retries=0)
        items = sdk.conversations.items.list(report.threads[0].target_id or "", order="asc")
        assert _texts(items) == IN_ORDER
        versions = [v for vs in emu.state.service.agents.values() for v in vs]
        assert {v["definition"]["model"] for v in versions} == {"gpt-5.1"}

        emu.state.service.deployments["orders-prod"] = "gpt-4o"
        mapped = migrate(read_export(export), target, Ledger(MemoryRecords(), "mapped"),
                         remap={"gpt-4-1106-preview": "orders-prod", "GPT-4o": "orders-prod"})
        assert mapped.ok and _fates(mapped)["asst_old.model"].how.startswith("remap given")
        versions = [v for vs in emu.state.service.agents.values() for v in vs]
        assert [v["definition"]["model"] for v in versions].count("orders-prod") == 2
        assert len(emu.state.service.conversations) == 4


@pytest.mark.parametrize("layout", ["folder", "jsonl"])
def test_every_layout_reads_newest_first_same_second_messages_in_order(
        tmp_path: Path, layout: str) -> None:
    page = EXPORT["messages"]["thread_desc"]
    thread = EXPORT["threads"][0]
    if layout == "folder":
        (tmp_path / "messages").mkdir()
        (tmp_path / "threads.json").write_text(json.dumps([thread]))
        (tmp_path / "messages" / "thread_desc.json").write_text(json.dumps(page))
        source = tmp_path
    else:  # one message per line, newest first, as a script dumping pages writes them
        source = tmp_path / "export.jsonl"
        source.write_text("".join(json.dumps({**m, "thread_id": "thread_desc"}) + "\n"
                                  for m in [thread, *page["data"]]))
    workload = read_export(source)
    assert [m["id"] for m in workload.thread_messages("thread_desc")] == [
        "msg_a", "msg_b", "msg_c", "msg_d"]
    assert workload.order_notes == {}


def test_unused_model_map_is_an_error_unless_allowed(export: Path, tmp_path: Path) -> None:
    from toolbridge_openai_responses import ConversationsTarget

    target = ConversationsTarget(base_url="http://127.0.0.1:9/v1", api_key="k",
                                 config_dir=tmp_path)
    with pytest.raises(UsageError, match="--model-map gpt-4-0314: matches no assistant"):
        migrate(read_export(export), target, Ledger(MemoryRecords(), "m"), dry_run=True,
                remap={"gpt-4-0314": "gpt-5.1"})
    report = migrate(read_export(export), target, Ledger(MemoryRecords(), "m"), dry_run=True,
                     remap={"gpt-4-0314": "gpt-5.1"}, allow_unused_map=True)
    assert any("gpt-4-0314" in note for note in report.notes)
    common = ["migrate", str(export), "--to", "openai-responses", "-o", "api_key=k",
              "-o", f"config_dir={tmp_path}", "--dry-run", "--ledger", str(tmp_path / "l.json"),
              "--model-map", "gpt-4-0314=gpt-5.1"]
    assert main(common) == 2
    assert main([*common, "--allow-unused-map"]) == 0


@pytest.fixture
def lost_create(tmp_path: Path) -> Iterator[tuple[Any, Any, Ledger]]:
    """The first conversation create is processed, its reply lost (a 500)."""
    from toolbridge_openai_responses import ConversationsTarget

    faults = {"fail_requests": [FailRule(nth=1, status=500, after_processing=True)]}
    with emulator("openai-responses", faults=faults) as emu:
        target = ConversationsTarget(base_url=emu.base_url + "/v1", api_key="sk-test",
                                     config_dir=tmp_path / "config")
        yield emu, target, Ledger(MemoryRecords(), "orphans")


def test_possible_orphans_stay_in_the_ledger_until_deleted(export: Path, lost_create: Any
                                                          ) -> None:
    emu, target, ledger = lost_create
    with pytest.raises(BackendError):
        migrate(read_export(export), target, ledger)
    assert len(emu.state.service.conversations) == 1  # made, its id never seen
    second = migrate(read_export(export), target, ledger)
    assert second.ok and [t.status for t in second.threads] == ["recreated", "created"]
    assert len(second.possible_orphans) == 1 and "thread_desc" in second.possible_orphans[0]
    third = migrate(read_export(export), target, ledger)  # remembered, not shown once
    assert third.possible_orphans == second.possible_orphans == orphan_lines(ledger)
    assert [t.status for t in third.threads] == ["done", "done"]

    mapped = {t.target_id for t in third.threads}
    orphan = next(c for c in emu.state.service.conversations if c not in mapped)
    desc, tied = (t.target_id or "" for t in third.threads)
    assert delete_orphans(target, ledger, [desc, tied]) == [  # migrated ones: kept
        f"{desc}: kept: it holds items",
        f"{tied}: kept: its metadata.source_thread_id (thread_tied) names no possible "
        "orphan of the ledger"]
    assert delete_orphans(target, ledger, ["conv_missing"])[0].startswith("conv_missing: kept")
    assert len(emu.state.service.conversations) == 3 and orphan_lines(ledger)
    assert delete_orphans(target, ledger, [orphan]) == [f"{orphan} (thread thread_desc): "
                                                        "deleted"]
    assert orphan not in emu.state.service.conversations
    assert len(emu.state.service.conversations) == 2
    assert migrate(read_export(export), target, ledger).possible_orphans == []


def test_orphan_commands(export: Path, tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    faults = {"fail_requests": [FailRule(nth=1, status=500, after_processing=True)]}
    with emulator("openai-responses", faults=faults) as emu:
        common = ["--to", "openai-responses", "-o", f"base_url={emu.base_url}/v1",
                  "-o", "api_key=sk-test", "-o", f"config_dir={tmp_path / 'config'}",
                  "--ledger", str(tmp_path / "ledger.json"), "--no-progress"]
        assert main(["migrate", str(export), *common]) == 1  # the lost reply
        capsys.readouterr()
        assert main(["migrate", str(export), *common, "--json", "-"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["counts"]["possible_orphans"] == 1
        assert main(["migrate", *common, "--orphans"]) == 0
        listed = capsys.readouterr().out
        assert "thread_desc: 1 openai-responses object(s)" in listed
        assert "source_thread_id=thread_desc" in listed
        mapped = {t["target_id"] for t in report["threads"]}
        orphan = next(c for c in emu.state.service.conversations if c not in mapped)
        assert main(["migrate", *common, "--delete-orphans", orphan]) == 0
        assert f"{orphan} (thread thread_desc): deleted" in capsys.readouterr().out
        assert main(["migrate", *common, "--orphans"]) == 0
        assert "no possible orphans" in capsys.readouterr().out
        assert len(emu.state.service.conversations) == 2


def test_a_live_foundry_classic_source_resolves_its_deployments() -> None:
    from toolbridge_openai_assistants import AssistantsClient, read_workload

    with emulator("openai-assistants") as source:
        source.state.service.deployments.update({"orders-prod": "gpt-4o-mini"})
        project = source.base_url + "/api/projects/proj1"
        with AssistantsClient(project_endpoint=project, credential=Credential()) as client:
            client.create_assistant(model="orders-prod", name="deployed")
            client.create_assistant(model="legacy-east", name="gone")
            thread = client.create_thread(messages=[{"role": "user", "content": "hi"}])
            workload = read_workload(client)
    assert workload.deployments == {"orders-prod": "gpt-4o-mini"}
    assert [m["thread_id"] for m in workload.thread_messages(thread["id"])] == [thread["id"]]
    from toolbridge_openai_responses import ConversationsTarget

    target = ConversationsTarget(base_url="http://127.0.0.1:9/v1", api_key="k")
    report = migrate(workload, target, Ledger(MemoryRecords(), "live"), dry_run=True)
    fates = {f.subject: f for f in report.fates if f.subject.endswith(".model")}
    deployed, gone = (fates[f"{a['id']}.model"] for a in workload.assistants)
    assert deployed.fate == "approximated" and deployed.how.startswith(
        "Azure deployment orders-prod serves gpt-4o-mini")
    assert report.models[workload.assistants[0]["id"]] == "gpt-5.1-mini"
    assert gone.fate == "unknown" and report.counts()["unknown"] == 1


def test_ctrl_c_says_how_to_resume_and_exits_130(export: Path, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    with emulator("openai-responses", faults={"latency_ms": 300}) as emu:
        command = [sys.executable, "-m", "toolbridge", "migrate", str(export),
                   "--to", "openai-responses", "-o", f"base_url={emu.base_url}/v1",
                   "-o", "api_key=sk-test", "-o", f"config_dir={tmp_path / 'config'}",
                   "--ledger", str(tmp_path / "ledger.json"), "--no-progress"]
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=dict(os.environ))
        deadline = time.monotonic() + 60
        while not emu.journal.entries("POST", "/conversations") and (
                time.monotonic() < deadline):
            time.sleep(0.01)
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=60)
        assert first.returncode == 130, err
        assert err.strip().splitlines() == ["interrupted; run the same command again to "
                                            "resume"]
        again = subprocess.run([*command, "--json", "-"], capture_output=True, text=True,
                               timeout=120, env=dict(os.environ))
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["counts"]["verified"] == 2


def test_agents_say_strict_is_dropped_and_hosted_tools_are_named() -> None:
    from migration_support import ASSISTANT

    from toolbridge_openai_agents import AgentsTarget

    plan = AgentsTarget(base_url="http://127.0.0.1:9/v1", api_key="k").plan_agent(
        {"id": "asst_s", **ASSISTANT}, "gpt-5.1")
    fates = {f.subject: f for f in plan.fates}
    assert fates["asst_s.tools.get_customer"].fate == "approximated"
    assert fates["asst_s.tools.get_customer"].how.startswith("strict dropped")
    assert fates["asst_s.tools.code_interpreter"].fate == "dropped"
    assert {s for s in fates if ".tool_resources." in s} == {
        "asst_s.tool_resources.file_search", "asst_s.tool_resources.code_interpreter"}
