"""The backends' own approval items end to end (Agents sessions, Responses), through their
emulators and the one serve driver: a scripted MCP tool call that the backend asks approval
for is stored as an ``origin="backend"`` request, the turn ends ``awaiting_approval``, a
decision taken elsewhere (another toolbox, the CLI, a process after a SIGKILL) is sent once
when the conversation is served again; counted from the emulator's journal."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from approval_items_support import ALONE, MIXED, answers
from openai.types.beta.agent_session import AgentSession
from openai.types.beta.agent_session_input_param import (
    SessionInputParamAgentSessionInputMcpApprovalRequestResult as McpResult,
)
from openai.types.responses import Response
from openai.types.responses.response_input_item_param import McpApprovalResponse
from openai_sdk_types import check_param

import toolbridge
from toolbridge.errors import UsageError
from toolbridge.serve import aanswer_pending, aconverse
from toolbridge.testing import emulated_options, emulator

BACKENDS = ["openai-agents", "openai-responses"]
def toolbox(store: str, runs: list[str] | None = None, **options: Any) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(store=store, **options)

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        (runs if runs is not None else []).append("lookup")
        return f"value of {key}"

    return box


def check_answers(dialect: str, sent: list[dict[str, Any]]) -> None:
    """What we sent parses with the openai SDK's input types."""
    for item in sent:
        assert check_param(item, McpResult if dialect == "openai-agents"
                           else McpApprovalResponse) == []


def check_wire(dialect: str, emu: Any) -> None:
    """The approval requests the emulator sent parse with the openai SDK's types (the
    sessions and responses that carry them, plain or in stream events)."""
    bodies: list[Any] = []
    for entry in emu.journal.entries():
        found = [entry.response] + [json.loads(line[6:]) for frame in entry.events
                                    for line in str(frame).splitlines()
                                    if line.startswith("data: {")]
        for body in found:
            if isinstance(body, dict):
                bodies += [body, body.get("session"), body.get("response")]
    asked = 0
    for body in bodies:
        if not isinstance(body, dict):
            continue
        if dialect == "openai-agents" and body.get("object") == "agent.session":
            session = AgentSession.model_validate(body)
            asked += sum(a.type == "mcp_approval_request" for a in session.required_actions)
        elif dialect == "openai-responses" and body.get("object") == "response":
            response = Response.model_validate(body)
            asked += sum(i.type == "mcp_approval_request" for i in response.output)
    assert asked, "no approval request was sent"


def told(dialect: str, emu: Any, transcript: Any) -> str:
    """The model's final text of the turn: the reply, or (a served Agents session, whose
    end carries none) the session's last assistant message, read with the openai SDK."""
    if dialect != "openai-agents":
        return str(transcript.reply)
    client = openai.OpenAI(base_url=emu.base_url, api_key="sk-test")
    page = client.get(f"/agents/sessions/{transcript.conversation}/items", cast_to=object)
    assert isinstance(page, dict)
    return "".join(part.get("text", "") for item in page["data"] if item.get("type") == "message"
                   and item.get("role") == "assistant" for part in item.get("content") or [])


async def ask(dialect: str, emu: Any, box: toolbridge.Toolbox) -> Any:
    first = await aconverse(box, dialect, ["remove user 7"], emulated_options(dialect,
                                                                             emu.base_url))
    assert first.status == "awaiting_approval", first.render()
    return first


async def resume(dialect: str, emu: Any, box: toolbridge.Toolbox, conversation: str) -> Any:
    return await aanswer_pending(box, dialect, emulated_options(dialect, emu.base_url),
                                 conversation=conversation)


@pytest.mark.parametrize("dialect", BACKENDS)
async def test_approved_from_another_toolbox_the_mcp_call_runs(dialect: str,
                                                               tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    with emulator(dialect, script=ALONE) as emu:
        first = await ask(dialect, emu, toolbox(store))
        assert answers(emu) == []  # nothing answered for the person
        [request] = toolbox(store).approvals.pending()
        assert (request.origin, request.tool, dict(request.arguments)) == (
            "backend", "delete_user", {"id": 7})
        other = toolbox(store)
        with pytest.raises(UsageError, match="approve or deny"):
            other.approvals.answer(request, "done")  # not for a backend's item
        other.approvals.approve(request, by="ana")
        again = await resume(dialect, emu, toolbox(store), first.conversation)
        assert again.status == "completed", again.render()
        assert "user 7 deleted" in told(dialect, emu, again)
        sent = answers(emu)
        assert len(sent) == 1 and json.dumps(sent).count("approve") == 1
        [note] = [e for e in again.of_kind("note") if e.call == request.key.call_id]
        assert note.text == "approval request of delete_user: approved (by ana)"
        assert note.data == sent[0]  # the transcript shows what was sent
        check_answers(dialect, sent)
        check_wire(dialect, emu)
        # Served again: nothing waits, nothing is answered twice.
        await resume(dialect, emu, toolbox(store), first.conversation)
        assert len(answers(emu)) == 1
        assert toolbox(store).approvals.pending(decided=True) == []


@pytest.mark.parametrize("dialect", BACKENDS)
async def test_denied_with_a_reason_the_model_is_told(dialect: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    with emulator(dialect, script=ALONE) as emu:
        first = await ask(dialect, emu, toolbox(store))
        [request] = toolbox(store).approvals.pending()
        toolbox(store).approvals.deny(request, "users are deleted by the admin team")
        with pytest.raises(UsageError, match="decided already"):  # a double submit
            toolbox(store).approvals.deny(request, "again")
        again = await resume(dialect, emu, toolbox(store), first.conversation)
        assert again.status == "completed", again.render()
        reply = told(dialect, emu, again)
        assert "denied" in reply and "user 7 deleted" not in reply
        [sent] = answers(emu)
        check_answers(dialect, [sent])
        if dialect == "openai-responses":  # this wire carries the reason
            assert sent["reason"] == "users are deleted by the admin team"
            assert "admin team" in reply


@pytest.mark.parametrize("dialect", BACKENDS)
async def test_concurrent_resumes_answer_once(dialect: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    with emulator(dialect, script=ALONE) as emu:
        first = await ask(dialect, emu, toolbox(store))
        [request] = toolbox(store).approvals.pending()
        toolbox(store).approvals.approve(request)
        done = await asyncio.gather(*(resume(dialect, emu, toolbox(store), first.conversation)
                                      for _ in range(2)), return_exceptions=True)
        assert any(getattr(d, "status", None) == "completed" for d in done), done
        assert len(answers(emu)) == 1


async def test_a_batch_answers_its_function_call_and_waits_for_the_approval(
        tmp_path: Path) -> None:
    store, runs = f"sqlite:///{tmp_path / 'store.db'}", []
    with emulator("openai-agents", script=MIXED) as emu:
        first = await ask("openai-agents", emu, toolbox(store, runs))
        assert runs == ["lookup"] and answers(emu) == []
        [request] = toolbox(store).approvals.pending()
        toolbox(store).approvals.approve(request)
        again = await resume("openai-agents", emu, toolbox(store, runs), first.conversation)
        assert again.status == "completed", again.render()
        assert runs == ["lookup"]  # answered once, not run again
        reply = told("openai-agents", emu, again)
        assert "value of b" in reply and "user 7 deleted" in reply
        assert len(answers(emu)) == 1


@pytest.mark.parametrize("dialect", BACKENDS)
async def test_an_expired_request_is_denied_as_expired(dialect: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    with emulator(dialect, script=ALONE) as emu:
        first = await ask(dialect, emu, toolbox(store, approval_expiry=0.2))
        await asyncio.sleep(0.3)
        [request] = toolbox(store).approvals.pending()
        with pytest.raises(UsageError, match="expired"):
            toolbox(store).approvals.approve(request)
        again = await resume(dialect, emu, toolbox(store, approval_expiry=0.2),
                             first.conversation)
        assert again.status == "completed", again.render()
        [sent] = answers(emu)
        assert json.dumps(sent).count("deny") + json.dumps(sent).count("false") >= 1
        assert "denied" in told(dialect, emu, again)


WORKER = textwrap.dedent("""
    import asyncio, sys, os
    import toolbridge
    from toolbridge.serve import aconverse
    from toolbridge.testing import emulated_options
    dialect, url, store, mark = sys.argv[1:5]
    box = toolbridge.Toolbox(store=store)
    transcript = asyncio.run(aconverse(box, dialect, ["remove user 7"],
                                       emulated_options(dialect, url)))
    open(mark, "w").write(transcript.conversation)
    os.kill(os.getpid(), 9)  # the worker dies while the person decides
""")


@pytest.mark.parametrize("dialect", BACKENDS)
def test_the_worker_killed_before_the_decision(dialect: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    mark = tmp_path / "conversation"
    with emulator(dialect, script=ALONE) as emu:
        worker = subprocess.run([sys.executable, "-c", WORKER, dialect, emu.base_url, store,
                                 str(mark)], env=dict(os.environ), timeout=60, check=False)
        assert worker.returncode == -signal.SIGKILL
        conversation = mark.read_text()
        cli = [sys.executable, "-m", "toolbridge", "approvals"]
        listed = subprocess.run([*cli, "list", "--store", store, "--json"], capture_output=True,
                                text=True, timeout=60, check=True)
        [request] = json.loads(listed.stdout)
        decide = [*cli, "approve", "--store", store, request["call_id"]]
        subprocess.run(decide, check=True, timeout=60, capture_output=True)
        twice = subprocess.run(decide, timeout=60, capture_output=True, text=True, check=False)
        assert twice.returncode == 2 and "awaits approval" in twice.stderr  # used once
        started = time.monotonic()
        again = asyncio.run(resume(dialect, emu, toolbox(store), conversation))
        assert again.status == "completed", again.render()
        assert time.monotonic() - started < 30
        assert len(answers(emu)) == 1
