"""The execution pipeline: lookup, validation, running, serialization, concurrency, errors."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import threading
import time
from typing import Any

import pytest
from meeting import AsyncMeeting
from pydantic import BaseModel, ConfigDict, field_serializer

from toolbridge import (
    Content,
    DocumentPart,
    TextPart,
    Toolbox,
    ToolCall,
    ToolContext,
    ToolDefinition,
    ToolError,
    UsageError,
    WireFormatError,
)


def call(name: str, args: dict[str, Any] | None = None, id: str = "1", **kw: Any) -> ToolCall:
    return ToolCall(id=id, name=name, arguments=args or {}, dialect="test", **kw)


def test_unknown_tool_names_the_available_ones() -> None:
    toolbox = Toolbox()
    toolbox.tool(lambda: 1, name="one")
    toolbox.tool(lambda: 2, name="two")
    [result] = toolbox.execute([call("three")])
    assert not result.success
    assert result.error == "unknown tool 'three'; available tools: one, two"


class Item(BaseModel):
    sku: str
    qty: int


def test_every_argument_violation_is_reported_with_its_path() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def order(items: list[Item], note: str) -> str:
        return "ok"

    [result] = toolbox.execute([call("order", {"items": [{"sku": "a", "qty": "x"}, {}]})])
    assert result.error is not None
    for path in ("/items/0/qty", "/items/1/sku", "/items/1/qty", "/note"):
        assert path in result.error, (path, result.error)


def test_hand_written_schema_violations_have_json_paths() -> None:
    toolbox = Toolbox()
    schema = {"type": "object", "additionalProperties": False, "required": ["a", "tags"],
              "properties": {"a": {"type": "integer", "minimum": 1},
                             "tags": {"type": "array", "items": {"type": "string"}}}}
    toolbox.add(ToolDefinition(name="t", parameters=schema), lambda a, tags: a)
    ok, bad = toolbox.execute([call("t", {"a": 2, "tags": []}, id="1"),
                               call("t", {"a": 0, "tags": ["x", 3], "zz": 1}, id="2")])
    assert ok.output == 2
    assert bad.error is not None and bad.error.startswith("invalid arguments for t: ")
    assert "/a: 0 is less than the minimum of 1" in bad.error
    assert "/tags/1: 3 is not of type 'string'" in bad.error
    assert "'zz' was unexpected" in bad.error


@pytest.mark.parametrize("a", [
    {"type": "nope"},
    {"type": "string", "pattern": "[a-"},
    {"type": "string", "pattern": "\\p{L}"},  # a Rust class: jsonschema-rs takes it, `re` not
    {"type": "object", "patternProperties": {"(": {}}},
])
def test_an_invalid_hand_written_schema_fails_at_definition(a: dict[str, Any]) -> None:
    from toolbridge import ToolDefinitionError

    with pytest.raises(ToolDefinitionError, match="tool 'bad': invalid parameters schema"):
        Toolbox().add(ToolDefinition(name="bad", parameters={
            "type": "object", "properties": {"a": a}}), lambda a: a)


def test_undecodable_arguments_fail_the_call_only() -> None:
    toolbox = Toolbox()
    toolbox.tool(lambda: "fine", name="f")
    bad = call("f", raw_arguments="{oops", argument_error="not valid JSON", id="1")
    results = toolbox.execute([bad, call("f", id="2")])
    assert results[0].error == "invalid arguments for f: not valid JSON"
    assert results[1].output == "fine"


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Pair(BaseModel):
    a: int
    b: list[str]


@pytest.mark.parametrize(("value", "output"), [
    ("text", "text"),
    ({"a": [1, 2]}, {"a": [1, 2]}),
    (Point(1, 2), {"x": 1, "y": 2}),
    (Pair(a=1, b=["x"]), {"a": 1, "b": ["x"]}),
    (TextPart(text="hi"), Content(parts=(TextPart(text="hi"),))),
    (DocumentPart(data="JVBERi0="), Content(parts=(DocumentPart(data="JVBERi0="),))),
    ([TextPart(text="see"), DocumentPart(url="https://example.com/a.pdf")],
     Content(parts=(TextPart(text="see"), DocumentPart(url="https://example.com/a.pdf")))),
    (None, None),
])
def test_return_values_are_serialized(value: Any, output: Any) -> None:
    toolbox = Toolbox()
    toolbox.tool(lambda: value, name="f")
    assert toolbox.execute([call("f")])[0].output == output


def agents_session(names: list[str]) -> dict[str, Any]:
    """An Agents session waiting on one call of each of ``names``."""
    return {"object": "agent.session", "id": "sess_1", "status": "requires_action",
            "required_actions": [{"type": "function_call", "turn_id": "turn_1",
                                  "call_id": f"call_{i}", "name": name, "arguments": {}}
                                 for i, name in enumerate(names)]}


class Reading(BaseModel):
    value: float
    labels: dict[int, str] = {}


class StrictReading(BaseModel):
    model_config = ConfigDict(ser_json_inf_nan="constants")
    value: float


def test_a_model_is_sent_as_its_own_json_and_its_output_is_that_json() -> None:
    """A model's result is what its serializer writes (its settings too), and the output is
    exactly that text's data, as a replay reads it back: keys as text, NaN as the model's
    JSON says (``null`` by default); a model that writes NaN gets an error result."""
    toolbox = Toolbox()
    toolbox.tool(lambda: [Reading(value=1.5, labels={1: "a"})], name="ok")
    toolbox.tool(lambda: Reading(value=math.nan), name="nan")
    toolbox.tool(lambda: StrictReading(value=math.inf), name="inf")
    ok, nan, inf = toolbox.execute([call("ok", id="1"), call("nan", id="2"), call("inf", id="3")])
    assert ok.output == [{"value": 1.5, "labels": {"1": "a"}}]
    assert nan.output == {"value": None, "labels": {}}
    assert inf.error == "inf returned a StrictReading, which cannot be sent as a result"
    body = toolbox.handle("openai-agents", agents_session(["ok", "nan"]))
    assert [e["output"] for e in body["events"]] == [
        '[{"value":1.5,"labels":{"1":"a"}}]', '{"value":null,"labels":{}}']


def test_a_list_of_models_is_written_as_its_models_write_themselves() -> None:
    """A list of models (or of dataclasses), or a dict holding them, is pydantic-core's text
    too, each model with its own settings, as one model alone: NaN as the model writes it; a
    bare NaN beside the models, or a model set to write NaN, is an error result; a list (or a
    tuple) of parts is still content."""
    toolbox = Toolbox()
    toolbox.tool(lambda: [Reading(value=math.nan), Reading(value=2.0, labels={3: "c"})],
                 name="readings")
    toolbox.tool(lambda: [Reading(value=1.0), math.nan], name="bare_nan")
    toolbox.tool(lambda: [StrictReading(value=1.0), StrictReading(value=math.inf)], name="inf")
    toolbox.tool(lambda: [TextPart(text="a"), TextPart(text="b")], name="parts")
    toolbox.tool(lambda: {"first": Reading(value=math.nan), "n": 1}, name="holding")
    toolbox.tool(lambda: (TextPart(text="a"), TextPart(text="b")), name="tuple_parts")
    toolbox.tool(lambda: (Reading(value=1.0),), name="tuple_models")
    readings, bare, inf, parts, holding, tuple_parts, tuple_models = toolbox.execute(
        [call("readings", id="1"), call("bare_nan", id="2"), call("inf", id="3"),
         call("parts", id="4"), call("holding", id="5"), call("tuple_parts", id="6"),
         call("tuple_models", id="7")])
    assert readings.output == [{"value": None, "labels": {}}, {"value": 2.0, "labels": {"3": "c"}}]
    assert bare.error == "bare_nan returned a list, which cannot be sent as a result"
    assert inf.error == "inf returned a list, which cannot be sent as a result"
    assert parts.output == Content(parts=(TextPart(text="a"), TextPart(text="b")))
    assert holding.output == {"first": {"value": None, "labels": {}}, "n": 1}
    assert tuple_parts.output == parts.output  # a tuple as a list
    assert tuple_models.output == [{"value": 1.0, "labels": {}}]
    body = toolbox.handle("openai-agents", agents_session(["readings"]))
    assert [e["output"] for e in body["events"]] == [
        '[{"value":null,"labels":{}},{"value":2.0,"labels":{"3":"c"}}]']


class Refusing(BaseModel):
    value: int

    @field_serializer("value")
    def _refuse(self, value: int) -> int:
        raise TypeError("not today")


def test_a_model_whose_serializer_raises_is_an_error_result_for_its_call_alone() -> None:
    toolbox = Toolbox()
    toolbox.tool(lambda: Refusing(value=1), name="refusing")
    toolbox.tool(lambda: "fine", name="fine")
    refused, fine = toolbox.execute([call("refusing", id="1"), call("fine", id="2")])
    assert refused.error == "refusing returned a Refusing, which cannot be sent as a result"
    assert fine.output == "fine"


def test_an_unserializable_return_value_is_an_error_result() -> None:
    toolbox = Toolbox()
    toolbox.tool(lambda: object(), name="f")
    [result] = toolbox.execute([call("f")])
    assert result.error == "f returned an object, which cannot be sent as a result"


def test_handler_errors_carry_type_and_message_only(caplog: pytest.LogCaptureFixture) -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def boom(secret_local: str = "hunter2") -> str:
        raise KeyError("missing-thing")

    @toolbox.tool
    def refuse() -> str:
        raise ToolError("Order 42 is already shipped; nothing to cancel.")

    with caplog.at_level(logging.ERROR, logger="toolbridge.runtime"):
        a, b = toolbox.execute([call("boom", id="1"), call("refuse", id="2")])
    assert a.error == "KeyError: 'missing-thing'"
    assert "hunter2" not in a.error and "Traceback" not in a.error
    assert b.error == "Order 42 is already shipped; nothing to cancel."
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "tool boom failed (call 1)" in logged
    assert "Traceback" in logged and "KeyError: 'missing-thing'" in logged


def test_the_error_formatter_is_replaceable_and_guarded() -> None:
    toolbox = Toolbox(error_formatter=lambda exc: f"sorry ({type(exc).__name__})")
    toolbox.tool(lambda: 1 / 0, name="div")
    assert toolbox.execute([call("div")])[0].error == "sorry (ZeroDivisionError)"

    def broken(exc: BaseException) -> str:
        raise RuntimeError("formatter bug")

    toolbox.error_formatter = broken
    assert toolbox.execute([call("div")])[0].error == "ZeroDivisionError: division by zero"


def test_one_failing_call_never_sinks_the_others() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    async def slow(n: int) -> int:
        await asyncio.sleep(0.01)
        if n == 2:
            raise ValueError("two")
        return n

    results = toolbox.execute([call("slow", {"n": n}, id=str(n)) for n in range(5)])
    assert [r.call.id for r in results] == ["0", "1", "2", "3", "4"]
    assert [r.output for r in results] == [0, 1, None, 3, 4]
    assert results[2].error == "ValueError: two"


def test_max_concurrency_bounds_running_calls() -> None:
    toolbox = Toolbox(max_concurrency=2)
    running, peak = 0, 0
    lock = threading.Lock()

    @toolbox.tool
    def work(n: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        return n

    results = toolbox.execute([call("work", {"n": n}, id=str(n)) for n in range(6)])
    assert [r.output for r in results] == list(range(6))
    assert peak == 2


def test_calls_run_concurrently() -> None:
    toolbox = Toolbox()

    meeting = AsyncMeeting(8)

    @toolbox.tool
    async def nap() -> str:
        await meeting.arrive()
        return "z"

    results = toolbox.execute([call("nap", id=str(i)) for i in range(8)])
    assert [r.output for r in results] == ["z"] * 8 and meeting.peak == 8


def test_duplicate_call_ids_are_an_error_result_not_a_double_run() -> None:
    toolbox = Toolbox(store=None)
    runs = []
    toolbox.tool(lambda: runs.append(1), name="f", inline=True)
    first, repeat = toolbox.execute([call("f", id="7"), call("f", id="7")])
    assert first.success and runs == [1]
    assert not repeat.success and "call id '7' repeats the id of an earlier call" in (
        repeat.error or "")


def test_async_timeout_cancels_the_handler() -> None:
    toolbox = Toolbox(timeout=5)
    cancelled = threading.Event()

    @toolbox.tool(timeout=0.05)
    async def hang() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    [result] = toolbox.execute([call("hang")])
    assert result.error == "hang timed out after 0.05 s"
    assert cancelled.is_set()


def test_toolbox_default_timeout_applies_to_sync_handlers() -> None:
    toolbox = Toolbox(timeout=0.05)
    release, finished = threading.Event(), threading.Event()

    def sleepy() -> None:
        release.wait(30)
        finished.set()

    toolbox.tool(sleepy)
    [result] = toolbox.execute([call("sleepy")])
    assert result.error == "sleepy timed out after 0.05 s"
    assert not finished.is_set()  # answered while the handler still runs
    release.set()


def test_context_reaches_the_handler() -> None:
    toolbox = Toolbox()

    @toolbox.tool(inline=True)
    def who(ctx: ToolContext) -> str:
        return f"{ctx.call_id}:{ctx.conversation}:{ctx.extra['user']}"

    results = toolbox.execute([call("who", conversation="c9")], context={"user": "u1"})
    assert results[0].output == "1:c9:u1"


def test_inline_sync_payloads_need_no_event_loop(
    echo_dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    toolbox = Toolbox()
    toolbox.tool(lambda a: a + 1, name="inc", inline=True)
    toolbox.tool(lambda: threading.current_thread().name, name="where")

    def no_loop(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an event loop was started")

    monkeypatch.setattr(asyncio, "run", no_loop)
    payload = {"conversation": "c", "calls": [
        {"id": str(i), "tool": "inc", "args": {"a": i}} for i in range(8)]}
    body = toolbox.handle(echo_dialect, payload)
    assert [a["value"] for a in body["answers"]] == [str(i + 1) for i in range(8)]
    # a single call of a plain sync tool runs in the calling thread too
    body = toolbox.handle(echo_dialect, {"calls": [{"id": "1", "tool": "where"}]})
    assert body["answers"][0]["value"] == threading.current_thread().name


async def test_the_async_forms_give_the_same_answers(echo_dialect: str) -> None:
    toolbox = Toolbox()
    toolbox.tool(lambda a: a + 1, name="inc", inline=True)

    @toolbox.tool
    async def dbl(a: int) -> int:
        return 2 * a

    payload = {"conversation": "c", "calls": [{"id": "1", "tool": "inc", "args": {"a": 1}},
                                              {"id": "2", "tool": "dbl", "args": {"a": 4}}]}
    body = await toolbox.ahandle(echo_dialect, payload)
    assert body == {"answers": [{"id": "1", "ok": True, "value": "2"},
                                {"id": "2", "ok": True, "value": "8"}]}
    results = await toolbox.aexecute([call("dbl", {"a": 5})])
    assert results[0].output == 10


def test_malformed_payloads_raise_wire_format_errors(echo_dialect: str) -> None:
    toolbox = Toolbox()
    with pytest.raises(WireFormatError, match=r"echo: calls\[0\]\.id"):
        toolbox.handle(echo_dialect, {"calls": [{"tool": "x"}]})
    with pytest.raises(WireFormatError, match="echo: <payload>: expected a JSON object"):
        toolbox.handle(echo_dialect, "[1, 2]")
    with pytest.raises(WireFormatError, match="cannot read an object"):
        toolbox.handle(echo_dialect, object())


class Unprintable(Exception):
    def __str__(self) -> str:
        raise TypeError("no text for you")


@pytest.mark.parametrize("base", [Exception, ToolError])
def test_an_exception_whose_str_fails_is_an_error_result(
    base: type[Exception], caplog: pytest.LogCaptureFixture
) -> None:
    toolbox = Toolbox()
    kind = type("Broken", (Unprintable, base), {})

    @toolbox.tool
    def boom() -> str:
        raise kind()

    @toolbox.tool
    async def aboom() -> str:
        raise kind()

    with caplog.at_level(logging.ERROR, logger="toolbridge.runtime"):
        results = toolbox.execute([call("boom", id="1"), call("aboom", id="2")])
    for result in results:
        assert not result.success and result.error is not None
        assert "could not be read" in result.error
    assert asyncio.run(toolbox.aexecute([call("boom", id="3")]))[0].error == results[0].error


def test_context_is_one_typed_mapping_and_misspelt_keywords_are_refused() -> None:
    toolbox = Toolbox()

    @toolbox.tool(inline=True)
    def who(ctx: ToolContext) -> str:
        return ",".join(sorted(ctx.extra))

    with pytest.raises(TypeError, match="conversaton"):
        toolbox.execute([call("who")], conversaton="c9")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="timeout"):
        toolbox.handle("openai-chat", {}, timeout=5)  # type: ignore[call-arg]
    with pytest.raises(UsageError, match="context must be a mapping"):
        toolbox.execute([call("who")], context=["user"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="context keys must be strings"):
        toolbox.execute([call("who")], context={1: "x"})  # type: ignore[dict-item]
    assert toolbox.execute([call("who")])[0].output == ""
    given = {"user": "u1"}
    assert toolbox.execute([call("who")], context=given)[0].output == "user"
