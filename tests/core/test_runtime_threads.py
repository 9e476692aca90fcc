"""Argument verdicts from the published schema; the worker pools; storing a result again."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from toolbridge import ResultStore, Toolbox, ToolCall
from toolbridge.runtime import Pipeline
from toolbridge.store import MemoryStore, StoreCall, StoreClaim, StoreCompletion, StoreKey


def call(name: str, args: dict[str, Any], id: str = "1", **kw: Any) -> ToolCall:
    return ToolCall(id=id, name=name, arguments=args, dialect="test", **kw)


def test_function_tools_get_the_schemas_verdict() -> None:
    toolbox = Toolbox()
    seen: list[Any] = []

    @toolbox.tool
    def square(x: int) -> int:
        seen.append(x)
        return x * x

    text, flag, double = toolbox.execute([call("square", {"x": "5"}, "1"),
                                          call("square", {"x": True}, "2"),
                                          call("square", {"x": 3.0}, "3")])
    for bad, shown in ((text, "'5'"), (flag, "True")):
        assert bad.error == f"invalid arguments for square: /x: {shown} is not of type 'integer'"
    assert double.success and double.output == 9
    assert seen == [3] and type(seen[0]) is int


def test_missing_required_properties_are_named_by_their_path() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def add(a: int, b: int) -> int:
        return a + b

    [result] = toolbox.execute([call("add", {})])
    assert result.error == ("invalid arguments for add: /a: 'a' is a required property; "
                            "/b: 'b' is a required property")


class Forgetful(ResultStore):
    """A user's own store that is not durable (no `warned_side_effects` of its own)."""

    def __init__(self) -> None:
        self.inner = MemoryStore()

    def claim(self, calls: Sequence[StoreCall]) -> list[StoreClaim]:
        return self.inner.claim(calls)

    def write(self, *, started: Sequence[tuple[StoreKey, str]] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[tuple[StoreKey, str]] = ()) -> list[bool]:
        return self.inner.write(started=started, completed=completed, released=released)

    def lookup(self, keys: Sequence[StoreKey]) -> list[StoreClaim | None]:
        return self.inner.lookup(keys)

    def prune(self, older_than: float) -> int:
        return self.inner.prune(older_than)


def charging(store: ResultStore | str | None, toolbox: Toolbox | None = None) -> Toolbox:
    toolbox = Toolbox(store=store) if toolbox is None else toolbox

    @toolbox.tool(side_effects=True, inline=True)
    def charge(amount: int) -> str:
        return f"charged {amount}"

    return toolbox


def side_effect_warnings(toolbox: Toolbox, caplog: pytest.LogCaptureFixture) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolbridge.runtime"):
        toolbox.execute([call("charge", {"amount": 1}, "a", conversation="c")])
        toolbox.execute([call("charge", {"amount": 1}, "b", conversation="c")])
    return [r.getMessage() for r in caplog.records if "is not durable" in r.getMessage()]


def test_only_the_implicit_memory_store_gets_the_side_effect_warning(
    caplog: pytest.LogCaptureFixture
) -> None:
    [warning] = side_effect_warnings(charging(None, Toolbox()), caplog)
    assert "MemoryStore" in warning and "sqlite:///results.db" in warning
    for chosen in ("memory://", MemoryStore(), Forgetful()):
        assert side_effect_warnings(charging(chosen), caplog) == [], chosen
    assigned = charging(None)
    assigned.store = MemoryStore()
    assert side_effect_warnings(assigned, caplog) == []
    assert ResultStore.warned_side_effects is False


def test_a_pipeline_on_a_users_non_durable_store_warns_once(
    caplog: pytest.LogCaptureFixture
) -> None:
    toolbox = charging(None)
    store = Forgetful()
    pipeline = Pipeline(toolbox._tools, store=store)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolbridge.runtime"):
        pipeline.run([call("charge", {"amount": 1}, "a", conversation="c")], {})
        pipeline.run([call("charge", {"amount": 1}, "b", conversation="c")], {})
    warnings = [r for r in caplog.records if "is not durable" in r.getMessage()]
    assert len(warnings) == 1 and "Forgetful" in warnings[0].getMessage()
    assert ResultStore.warned_side_effects is False


class Flaky(Forgetful):
    """Fails ``complete`` a given number of times."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def write(self, *, started: Sequence[tuple[StoreKey, str]] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[tuple[StoreKey, str]] = ()) -> list[bool]:
        if completed and self.failures:
            self.failures -= 1
            raise OSError("database is locked")
        return super().write(started=started, completed=completed, released=released)


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolbridge.runtime._journal

    monkeypatch.setattr(toolbridge.runtime._journal, "COMPLETE_RETRY_PAUSES", (0.001, 0.001))


def test_a_failed_complete_is_retried(quick_retries: None) -> None:
    store = Flaky(failures=2)
    toolbox = charging(store)
    [result] = toolbox.execute([call("charge", {"amount": 5}, conversation="c")])
    assert result.output == "charged 5"
    stored = store.get(StoreKey("test", "c", "", "1"))
    assert stored is not None and stored.state == "completed"


def test_a_complete_that_keeps_failing_is_logged_and_the_result_still_sent(
    quick_retries: None, caplog: pytest.LogCaptureFixture
) -> None:
    toolbox = charging(Flaky(failures=100))
    with caplog.at_level(logging.WARNING, logger="toolbridge.runtime"):
        [result] = toolbox.execute([call("charge", {"amount": 5}, conversation="c")])
    assert result.success and result.output == "charged 5"  # the real result, not "unknown"
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "failed 3 times" in errors[0].getMessage()
    assert "outcome unknown" in errors[0].getMessage()


def test_timed_out_sync_handlers_are_reported_and_the_pool_is_configurable(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import toolbridge.runtime._threads as tools

    pool = tools.ThreadPool("toolbridge-test")
    monkeypatch.setattr(tools, "HANDLERS", pool)
    monkeypatch.setenv("TOOLBRIDGE_WORKER_THREADS", "2")
    monkeypatch.setattr(tools, "_SATURATION_WARNING_INTERVAL", 0.0)
    release = threading.Event()
    toolbox = Toolbox(store=None, max_concurrency=1)

    @toolbox.tool(timeout=0.05)
    def hang() -> str:
        release.wait(10)
        return "late"

    try:
        with caplog.at_level(logging.WARNING, logger="toolbridge.runtime"):
            for i in range(3):  # two hang in both threads; the third queues, then times out
                [result] = toolbox.execute([call("hang", {}, str(i))])
                assert result.error == "hang timed out after 0.05 s"
        assert pool.size == 2 and pool.abandoned == 2
        messages = [r.getMessage() for r in caplog.records]
        assert any("2 of 2 worker threads held by timed-out handlers" in m for m in messages)
        assert any("all 2 toolbridge-test threads are busy" in m and "TOOLBRIDGE_WORKER_THREADS"
                   in m for m in messages)
    finally:
        release.set()
    deadline = time.monotonic() + 5
    while (pool.abandoned or pool.busy) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pool.abandoned == 0 and pool.busy == 0  # the queued third never ran


def test_the_handler_pool_is_at_least_max_concurrency(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolbridge.runtime._threads as tools

    pool = tools.ThreadPool("toolbridge-test")
    monkeypatch.setattr(tools, "HANDLERS", pool)
    monkeypatch.setenv("TOOLBRIDGE_WORKER_THREADS", "2")
    toolbox = Toolbox(store=None, max_concurrency=8)

    meeting = threading.Barrier(8, timeout=30)  # all 8 in a thread at once, or broken

    @toolbox.tool
    def nap() -> str:
        meeting.wait()
        return "rested"

    results = toolbox.execute([call("nap", {}, str(i)) for i in range(8)])
    assert [r.output for r in results] == ["rested"] * 8
    assert pool.size == 8
