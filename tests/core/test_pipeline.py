"""The one pipeline: plain binding, batches of calls, the store's rules, the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
import typing
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field

import toolbridge
import toolbridge.store
from toolbridge import ToolCall
from toolbridge.store import MemoryStore, StoreCall, StoredResult, StoreKey, end_owner


def call(id: str, name: str, arguments: dict[str, Any], turn: str = "t") -> ToolCall:
    return ToolCall.trusted(id=id, name=name, dialect="d", arguments=arguments,
                            conversation="s", turn=turn)


def key(id: str, turn: str = "t") -> StoreKey:
    return StoreKey("d", "s", turn, id)


# ---------------------------------------------------------------------------- plain arguments
def plain(s: str, i: int = 3, f: float | None = None, b: bool = False,
          o: typing.Optional[str] = None) -> dict[str, Any]:  # noqa: UP045  (both spellings)
    return {"s": s, "i": i, "f": f, "b": b, "o": o}


def plain_tool() -> Any:
    box = toolbridge.Toolbox(store=None)
    box.tool(inline=True)(plain)
    tool = box._tools["plain"]
    tool.bind({"s": "warm up"}, None)  # compiles the schema check, and the plain table
    return tool


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                   st.text(max_size=3), st.lists(st.integers(), max_size=1))


@functools.cache
def shared_plain_tool() -> Any:
    """One tool for every example, as a toolbox binds every call of a tool: compiled once."""
    return plain_tool()


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["s", "i", "f", "b", "o", "x"]), VALUES, max_size=5))
def test_plain_binding_agrees_with_the_schema_and_pydantic(arguments: dict[str, Any]) -> None:
    tool = shared_plain_tool()
    fast = tool.bind_plain(arguments)
    try:
        general = tool.bind(arguments, None)  # the schema's verdict, then pydantic's values
    except toolbridge.ArgumentError:
        assert fast is None  # the shortcut never accepts what the schema refuses
        return
    if fast is not None:
        assert fast == arguments and fast is not arguments
        assert plain(**fast) == plain(**general)  # same call of the handler


def test_plain_binding_leaves_conversions_to_pydantic() -> None:
    tool = plain_tool()
    assert tool.bind_plain({"s": "a", "f": 1}) is None  # an int for a float: pydantic makes 1.0
    assert tool.bind({"s": "a", "f": 1}, None)["f"] == 1.0
    assert tool.bind_plain({"s": "a", "i": 2.0}) is None
    assert tool.bind_plain({"i": 2}) is None  # "s" is required
    assert tool.bind_plain({"s": "a", "x": 1}) is None  # not a parameter
    assert tool.bind_plain({"s": "a", "o": None, "f": 0.5}) == {"s": "a", "o": None, "f": 0.5}


@pytest.mark.parametrize("annotation", [
    Annotated[int, Field(gt=0)], list[str], Literal["a", "b"], dict[str, int], int | str,
    Annotated[str, Field(alias="other")],
])
def test_only_plain_signatures_skip_pydantic(annotation: Any) -> None:
    def handler(value: Any) -> str:
        return "ok"

    handler.__annotations__["value"] = annotation
    box = toolbridge.Toolbox(store=None)
    box.tool(inline=True)(handler)
    tool = box._tools["handler"]
    with contextlib.suppress(toolbridge.ArgumentError):
        tool.bind({"value": "x"}, None)  # compiles the check (and would build a plain table)
    assert tool._plain is None


# ---------------------------------------------------------------------------- batches
def counting_toolbox(store: Any = "memory://", timeout: float | None = None
                     ) -> tuple[toolbridge.Toolbox, list[str]]:
    box, ran = toolbridge.Toolbox(store=store, timeout=timeout), []

    @box.tool(inline=True)
    def echo(text: str) -> str:
        ran.append(text)
        return text

    @box.tool(inline=True)
    def data(n: int) -> dict[str, int]:
        ran.append(str(n))
        return {"n": n}

    return box, ran


def test_a_replayed_payload_is_answered_from_the_store() -> None:
    box, ran = counting_toolbox()
    payload = [call("1", "echo", {"text": "a"}), call("2", "data", {"n": 2}),
               call("3", "echo", {"text": "c"})]
    first = box.execute(payload)
    again = box.execute(payload)
    assert [r.output for r in again] == [r.output for r in first] == ["a", {"n": 2}, "c"]
    assert ran == ["a", "2", "c"]
    assert all(r.call is c for r, c in zip(again, payload, strict=True))


def test_new_and_replayed_calls_mix_in_one_payload() -> None:
    box, ran = counting_toolbox()
    box.execute([call("1", "echo", {"text": "a"})])
    results = box.execute([call("1", "echo", {"text": "a"}), call("2", "echo", {"text": "b"})])
    assert [r.output for r in results] == ["a", "b"] and ran == ["a", "b"]


def test_a_reused_id_with_other_arguments_is_refused_not_replayed() -> None:
    box, ran = counting_toolbox()
    box.execute([call("1", "echo", {"text": "a"})])
    [refused] = box.execute([call("1", "echo", {"text": "other"})])
    assert not refused.success and "already used" in (refused.error or "") and ran == ["a"]


def test_calls_of_several_turns_are_claimed_per_turn() -> None:
    box, ran = counting_toolbox()
    payload = [call("1", "echo", {"text": "a"}, turn="t1"), call("1", "echo", {"text": "b"},
               turn="t2"), call("2", "echo", {"text": "c"}, turn="t1")]
    assert [r.output for r in box.execute(payload)] == ["a", "b", "c"]
    assert [r.output for r in box.execute(payload)] == ["a", "b", "c"] and ran == ["a", "b", "c"]
    store = box.store
    assert isinstance(store, MemoryStore) and len(store) == 3
    stored = store.get(key("1", "t2"))
    assert stored is not None and stored.result == StoredResult(True, "b", None)


def test_a_repeated_id_in_one_turn_gets_an_error_result_and_sinks_nothing() -> None:
    box, ran = counting_toolbox()
    payload = [call("1", "echo", {"text": "a"}), call("2", "echo", {"text": "b"}),
               call("1", "echo", {"text": "c"}), call("1", "echo", {"text": "d"}, turn="t2")]
    first, other, repeat, next_turn = box.execute(payload)
    assert (first.output, other.output, next_turn.output) == ("a", "b", "d")
    assert repeat.error == ("call id '1' repeats the id of an earlier call of this turn (call 1, "
                            "echo); only that call was run: give every call its own id")
    assert ran == ["a", "b", "d"]
    assert [r.output for r in box.execute(payload)[:2]] == ["a", "b"]  # replayed from the store
    assert ran == ["a", "b", "d"]


def test_unkeyed_calls_run_and_are_not_stored() -> None:
    box, ran = counting_toolbox()
    bare = ToolCall.trusted(id="1", name="echo", dialect="d", arguments={"text": "a"})
    other = ToolCall.trusted(id="2", name="echo", dialect="d", arguments={"text": "b"})
    assert [r.output for r in box.execute([bare, other])] == ["a", "b"]
    assert [r.output for r in box.execute([bare, other])] == ["a", "b"]
    assert ran == ["a", "b", "a", "b"] and len(box.store) == 0  # type: ignore[arg-type]


def test_calls_the_path_cannot_take_still_get_their_answer() -> None:
    box, ran = counting_toolbox()
    results = box.execute([call("1", "echo", {"text": 5}), call("2", "missing", {}),
                           call("3", "echo", {"text": "ok"})])
    assert "invalid arguments" in (results[0].error or "")
    assert "unknown tool" in (results[1].error or "")
    assert results[2].output == "ok" and ran == ["ok"]


# ---------------------------------------------------------------------------- the store's side
def test_a_batch_claim_answers_each_call_and_keeps_every_store_rule() -> None:
    store = MemoryStore()
    calls = [StoreCall(key("1"), "echo", {"text": "a"}), StoreCall(key("2"), "echo", {"text": "b"})]
    first = store.claim(calls)
    assert [a.state for a in first] == ["claimed", "claimed"] and len(store) == 2
    owner = first[0].owner
    assert first[1].owner == owner  # one owner for the batch
    running = store.get(key("1"))
    assert running is not None and running.state == "running" and running.started_at == 0
    store.write(started=[(key("1"), owner)], completed=[])
    started = store.get(key("1"))
    assert started is not None and started.started_at > 0
    assert store.write(completed=[  # the second never ran; a stranger cannot complete it
        toolbridge.store.StoreCompletion(key("1"), owner, StoredResult(True, "A")),
        toolbridge.store.StoreCompletion(key("2"), "someone else", StoredResult(True, "B")),
    ]) == [True, False]
    done, pending = store.get(key("1")), store.get(key("2"))
    assert done is not None and done.state == "completed" and done.result == (True, "A", None)
    assert pending is not None and pending.state == "running"
    store.release(key("2"), owner)
    assert store.get(key("2")) is None and len(store) == 1
    again = store.claim(calls)
    assert [a.state for a in again] == ["completed", "claimed"]
    assert store.complete(key("2"), again[1].owner, StoredResult(False, None, "no"))
    replay = store.claim_one(key("2"), "echo", {"text": "b"})
    assert replay.state == "completed" and replay.result == StoredResult(False, None, "no")
    assert store.claim_one(key("2"), "echo", {"text": "other"}).state == "reused"
    end_owner(owner)
    end_owner(again[1].owner)


def test_a_dead_owners_claim_is_taken_over_in_the_claim() -> None:
    store = MemoryStore()
    [never] = store.claim([StoreCall(key("1"), "echo", {})])
    [entered] = store.claim([StoreCall(key("2"), "echo", {})])
    store.start(key("2"), entered.owner)
    end_owner(never.owner)  # both workers are gone
    end_owner(entered.owner)
    assert [a.state for a in store.lookup([key("1"), key("2")])] == ["abandoned", "abandoned"]
    taken = store.claim([StoreCall(key("1"), "echo", {}), StoreCall(key("2"), "echo", {})])
    assert [a.state for a in taken] == ["claimed", "claimed"]
    assert taken[0].started_at == 0  # its handler never ran: safe to run
    assert taken[1].started_at > 0  # it ran: side effects go to reconciliation
    end_owner(taken[0].owner)


def test_eviction_drops_completed_calls_first_and_keeps_calls_in_flight() -> None:
    store = MemoryStore(max_entries=4)
    [held] = store.claim([StoreCall(StoreKey("d", "s", "held", "x"), "echo", {})])
    for turn in range(5):
        keys = [StoreKey("d", "s", str(turn), i) for i in ("1", "2")]
        claims = store.claim([StoreCall(k, "echo", {}) for k in keys])
        store.write(completed=[toolbridge.store.StoreCompletion(k, c.owner, StoredResult(
            True, turn)) for k, c in zip(keys, claims, strict=True)])
    assert len(store) <= 4
    assert store.get(StoreKey("d", "s", "held", "x")) is not None  # in flight: never dropped
    newest = store.get(StoreKey("d", "s", "4", "2"))
    assert newest is not None and newest.result == (True, 4, None)
    assert store.get(StoreKey("d", "s", "0", "1")) is None
    end_owner(held.owner)


def test_an_interrupted_batch_keeps_the_results_it_made(caplog: pytest.LogCaptureFixture
                                                         ) -> None:
    box, ran = counting_toolbox()

    @box.tool(inline=True)
    def stop() -> str:
        raise KeyboardInterrupt

    caplog.set_level(logging.ERROR)
    with pytest.raises(KeyboardInterrupt):
        box.execute([call("1", "echo", {"text": "a"}), call("2", "stop", {}),
                     call("3", "echo", {"text": "c"})])
    assert [r.output for r in box.execute([call("1", "echo", {"text": "a"})])] == ["a"]
    assert ran == ["a"]


# ---------------------------------------------------------------------------- on an event loop
def test_ahandle_runs_inline_tools_on_the_loop_as_handle_does() -> None:
    box, ran = counting_toolbox()
    threads: set[int] = set()

    @box.tool(inline=True)
    def where() -> str:
        threads.add(threading.get_ident())
        return "here"

    payload = [call("1", "echo", {"text": "a"}), call("2", "where", {})]

    async def main() -> list[Any]:
        loop_thread = threading.get_ident()
        results = await box.aexecute(payload)
        assert threads == {loop_thread}  # on the loop's own thread: no worker, no task
        return [r.output for r in results]

    assert asyncio.run(main()) == ["a", "here"]
    assert [r.output for r in box.execute(payload)] == ["a", "here"] and ran == ["a"]  # replay


def test_ahandle_sends_a_payload_with_a_worker_tool_to_the_loop_path() -> None:
    box, ran = counting_toolbox()
    threads: set[int] = set()

    @box.tool
    def blocking() -> str:
        threads.add(threading.get_ident())
        return "done"

    async def main() -> list[Any]:
        results = await box.aexecute([call("1", "echo", {"text": "a"}), call("2", "blocking", {})])
        assert threading.get_ident() not in threads  # not inline: a worker thread ran it
        return [r.output for r in results]

    assert asyncio.run(main()) == ["a", "done"] and ran == ["a"]


def test_ahandle_never_blocks_the_loop_on_a_call_another_worker_holds() -> None:
    box, ran = counting_toolbox(timeout=0.01)  # a blocked wait would give up after 5 s
    store = box.store
    assert isinstance(store, MemoryStore)
    held = call("1", "echo", {"text": "a"})
    owner = store.claim_one(key("1"), "echo", {"text": "a"}).owner  # another worker, here

    async def main() -> list[Any]:
        def finish() -> None:
            store.complete(key("1"), owner, StoredResult(True, "from the other worker", None))
            end_owner(owner)

        asyncio.get_running_loop().call_later(0.05, finish)  # runs only if the loop is free
        results = await box.aexecute([held, call("2", "echo", {"text": "b"})])
        return [r.output for r in results]

    assert asyncio.run(main()) == ["from the other worker", "b"]
    assert ran == ["b"]  # the held call never ran here; the other ran once


# ---------------------------------------------------------------------------- blocking forms
def test_the_blocking_forms_refuse_a_running_loop_and_work_off_it() -> None:
    """`execute` and `handle` on a thread running an event loop raise `UsageError` (they
    would block it); the same thread's calls work once its loop is gone, and a worker
    thread of that loop may call them."""
    box = toolbridge.Toolbox(store=None)
    box.tool()(plain)
    calls = [call("c1", "plain", {"s": "x"})]

    async def on_the_loop() -> list[str]:
        refused = []
        for form in (lambda: box.execute(calls),
                     lambda: box.handle("openai-chat", {"choices": []})):
            with pytest.raises(toolbridge.UsageError, match="running event loop"):
                form()
            refused.append("refused")
        answered = await asyncio.to_thread(box.execute, calls)  # a thread with no loop of its own
        assert answered[0].success
        return refused

    assert asyncio.run(on_the_loop()) == ["refused"] * 2
    assert box.execute(calls)[0].output["s"] == "x"
