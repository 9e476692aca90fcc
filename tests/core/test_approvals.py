"""Approvals end to end through the one pipeline, on every store that keeps them.

A call that needs approval waits (no result invented), its request is decided from this or
another process (the CLI), and its next delivery, on any worker, consumes the decision with
its claim: approved calls run once, denied ones get their message, answered ones the given
output; a decision is used once; edited arguments are validated again; a request expires.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolbridge import ArgumentError, Toolbox, ToolCall, UsageError
from toolbridge.errors import AwaitingApproval
from toolbridge.runtime._approvals import GRANTS
from toolbridge.store import MemoryStore, ResultStore, SqliteStore, StoreKey

WORKER = Path(__file__).parent / "workers" / "approval_worker.py"
STORES = ["memory", "sqlite", "postgres"]


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ResultStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    if request.param == "sqlite":
        made: ResultStore = SqliteStore(tmp_path / "results.db")
    else:
        url = os.environ.get("TOOLBRIDGE_TEST_POSTGRES_URL")
        if not url:
            pytest.skip("no PostgreSQL (scripts/postgres start sets TOOLBRIDGE_TEST_POSTGRES_URL)")
        from toolbridge.store import PostgresStore

        made = PostgresStore(f"{url}{'&' if '?' in url else '?'}table=t{os.getpid()}_"
                             f"{abs(hash(str(tmp_path))) % 10**8}")
        records = made.records()  # one records table per schema: forget earlier tests' grants
        for key in records.list(GRANTS):
            records.delete(GRANTS, key)
    yield made
    made.close()


def payments(store: ResultStore | None, ran: list[Any], **options: Any) -> Toolbox:
    toolbox = Toolbox(store=store, **options.pop("toolbox", {}))

    @toolbox.tool(side_effects=True, needs_approval=options.pop("needs_approval", True))
    def pay(amount: int, currency: str = "EUR") -> str:
        """Pay someone."""
        ran.append((amount, currency))
        return f"paid {amount} {currency}"

    @toolbox.tool
    def add(a: int, b: int) -> int:
        return a + b

    return toolbox


def call(call_id: str = "call_1", name: str = "pay", turn: str = "t", **arguments: Any
         ) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments or {"amount": 5},
                    dialect="demo", conversation="c", turn=turn)


def awaiting(toolbox: Toolbox, calls: list[ToolCall]) -> AwaitingApproval:
    with pytest.raises(AwaitingApproval) as caught:
        toolbox.execute(calls)
    return caught.value


def test_a_partial_batch_runs_what_it_may_and_invents_nothing(store: ResultStore) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran)
    batch = [call("call_1"), call("call_2", "add", a=1, b=2)]
    pending = awaiting(toolbox, batch)
    assert pending.results[0] is None and pending.results[1].output == 3  # type: ignore[union-attr]
    [request] = pending.requests
    assert (request.key, request.tool, dict(request.arguments), request.origin,
            request.batch) == (StoreKey("demo", "c", "t", "call_1"), "pay", {"amount": 5},
                               "tool", ("call_1", "call_2"))
    assert ran == []
    assert [r.key for r in toolbox.approvals.pending()] == [request.key]
    again = awaiting(toolbox, batch)  # re-delivered undecided: still waiting, nothing ran
    assert again.results[0] is None and ran == []


def test_handle_leaves_the_awaiting_call_out_of_the_body(store: ResultStore,
                                                         echo_dialect: str) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran)
    payload = {"conversation": "c", "calls": [
        {"id": "call_1", "tool": "pay", "args": {"amount": 5}},
        {"id": "call_2", "tool": "add", "args": {"a": 1, "b": 2}}]}
    body = toolbox.handle(echo_dialect, payload)
    assert body == {"answers": [{"id": "call_2", "ok": True, "value": "3"}]}
    toolbox.approvals.approve(toolbox.approvals.pending()[0])
    body = toolbox.handle(echo_dialect, payload)
    assert [a["id"] for a in body["answers"]] == ["call_1", "call_2"] and ran == [(5, "EUR")]


def test_approved_runs_once_and_the_decision_is_single_use(store: ResultStore) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran)
    [request] = awaiting(toolbox, [call()]).requests
    toolbox.approvals.approve(request, by="ana")
    with pytest.raises(UsageError, match="decided already; a decision is used once"):
        toolbox.approvals.approve(request)  # a double submit
    with pytest.raises(UsageError, match="decided already"):
        toolbox.approvals.deny(request, "no")
    assert toolbox.execute([call()])[0].output == "paid 5 EUR"
    assert toolbox.execute([call()])[0].output == "paid 5 EUR"  # replayed, not run
    assert ran == [(5, "EUR")]
    with pytest.raises(UsageError, match="does not await approval"):
        toolbox.approvals.approve(request)


def test_denied_gets_its_message_answered_gets_the_output(store: ResultStore) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran)
    [denied, answered] = awaiting(toolbox, [call("call_1"), call("call_2")]).requests
    toolbox.approvals.deny(denied, "payments above 0 EUR need a ticket")
    toolbox.approvals.answer(answered, {"paid": False, "note": "done by hand"})
    first, second = toolbox.execute([call("call_1"), call("call_2")])
    assert not first.success and first.error == "payments above 0 EUR need a ticket"
    assert second.output == {"paid": False, "note": "done by hand"}
    assert ran == []


def test_edited_arguments_are_validated_at_the_decision_and_again(store: ResultStore) -> None:
    from toolbridge.runtime import Approvals

    ran: list[Any] = []
    toolbox = payments(store, ran)
    [first, second] = awaiting(toolbox, [call("call_1"), call("call_2")]).requests
    with pytest.raises(ArgumentError, match=r"edited arguments for pay: /amount: 'x' is not"):
        toolbox.approvals.approve(first, arguments={"amount": "x"})
    toolbox.approvals.approve(first, arguments={"amount": 4, "currency": "USD"})
    Approvals(store).approve(second, arguments={"amount": "x"})  # no tools here: unchecked
    edited, refused = toolbox.execute([call("call_1"), call("call_2")])
    assert edited.output == "paid 4 USD"
    assert not refused.success and refused.error is not None
    assert refused.error.startswith("invalid arguments for pay (as edited in its approval): "
                                    "/amount: 'x' is not of type 'integer'")
    assert ran == [(4, "USD")]


def test_a_decision_is_bound_to_the_arguments_it_was_asked_for(store: ResultStore) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran)
    [request] = awaiting(toolbox, [call()]).requests
    other = type(request)(request.key, "pay", {"amount": 500}, "0" * 32)
    with pytest.raises(UsageError, match="awaits approval for other arguments"):
        toolbox.approvals.approve(other)
    reused = toolbox.execute([call(amount=500)])[0]  # the same id for another call
    assert not reused.success and "already used in this turn" in (reused.error or "")


def test_scope_tool_decides_the_later_calls_of_the_conversation(store: ResultStore) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran)
    [request] = awaiting(toolbox, [call()]).requests
    toolbox.approvals.approve(request, scope="tool")
    assert toolbox.execute([call()])[0].success
    assert toolbox.execute([call("call_9", turn="t2")])[0].output == "paid 5 EUR"  # no wait
    assert len(ran) == 2


def test_a_predicate_decides_which_calls_wait(store: ResultStore) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran, needs_approval=lambda c: c.arguments["amount"] > 100)
    pending = awaiting(toolbox, [call("call_1", amount=5), call("call_2", amount=500)])
    assert pending.results[0].output == "paid 5 EUR"  # type: ignore[union-attr]
    assert [r.arguments["amount"] for r in pending.requests] == [500]


def test_an_expired_request_is_denied_and_cannot_be_decided(store: ResultStore) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran, toolbox={"approval_expiry": 0.05})
    [request] = awaiting(toolbox, [call()]).requests
    assert request.expires_at is not None
    time.sleep(0.1)
    with pytest.raises(UsageError, match="expired; it can no longer be decided"):
        toolbox.approvals.approve(request)
    result = toolbox.execute([call()])[0]
    assert not result.success and "expired at" in (result.error or "")
    assert "without a decision; it was not run" in (result.error or "")
    assert toolbox.execute([call()])[0].error == result.error and ran == []


def test_without_a_store_a_call_that_needs_approval_is_refused() -> None:
    ran: list[Any] = []
    [result] = payments(None, ran).execute([call()])
    assert not result.success and ran == []
    assert result.error == ("pay needs approval, but the result store (NoneType) keeps no "
                            "approvals; it was not run")


async def test_the_async_path_waits_and_resumes_the_same(store: ResultStore) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran)
    with pytest.raises(AwaitingApproval):
        await toolbox.aexecute([call()])
    toolbox.approvals.approve(toolbox.approvals.pending()[0])
    assert (await toolbox.aexecute([call()]))[0].output == "paid 5 EUR"
    assert ran == [(5, "EUR")]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolbridge", "approvals", *args],
                          capture_output=True, text=True, timeout=60, check=False)


def test_decided_from_another_process_after_the_worker_was_killed(tmp_path: Path) -> None:
    """A worker asks and is SIGKILLed; the CLI decides (twice: once applies); a new worker
    delivers the call again and runs it once."""
    db, runs = tmp_path / "results.db", tmp_path / "runs.txt"
    worker = subprocess.Popen([sys.executable, str(WORKER), str(db), str(runs), "request"],
                              stdout=subprocess.PIPE, text=True)
    assert worker.stdout is not None
    assert json.loads(worker.stdout.readline()) == {"awaiting": ["pay"]}
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    listed = _cli("list", "--store", f"sqlite:///{db}", "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert (row["call_id"], row["tool"], row["arguments"]) == ("call_1", "pay", {"amount": 5})
    approved = _cli("approve", "--store", f"sqlite:///{db}", "call_1", "--by", "ana")
    assert approved.returncode == 0 and "approved call call_1 (pay)" in approved.stdout
    twice = _cli("approve", "--store", f"sqlite:///{db}", "call_1")
    assert twice.returncode == 2 and "no call 'call_1' awaits approval" in twice.stderr
    ran: list[Any] = []
    toolbox = payments(SqliteStore(db), ran)
    assert toolbox.execute([call()])[0].output == "paid 5 EUR"
    assert ran == [(5, "EUR")] and not runs.exists()  # the killed worker never ran it


def test_the_cli_denies_with_the_message(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    ran: list[Any] = []
    toolbox = payments(SqliteStore(db), ran)
    awaiting(toolbox, [call()])
    denied = _cli("deny", "--store", f"sqlite:///{db}", "call_1", "--message", "ask finance")
    assert denied.returncode == 0, denied.stderr
    assert toolbox.execute([call()])[0].error == "ask finance" and ran == []
    assert _cli("list", "--store", f"sqlite:///{db}").stdout.strip() == (
        "no call awaits approval")


async def test_an_expired_request_is_denied_on_the_async_path_too(store: ResultStore) -> None:
    ran: list[Any] = []
    toolbox = payments(store, ran, toolbox={"approval_expiry": 0.05})
    with pytest.raises(AwaitingApproval):
        await toolbox.aexecute([call()])
    time.sleep(0.1)
    [result] = await toolbox.aexecute([call()])
    assert not result.success and "expired at" in (result.error or "") and ran == []
