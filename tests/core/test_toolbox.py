"""Defining tools from Python functions, and the handle seam through the echo dialect."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolbridge import (
    Toolbox,
    ToolContext,
    ToolDefinition,
    ToolDefinitionError,
    UnknownDialectError,
    UsageError,
    WireFormatError,
)


class Unit(enum.Enum):
    C = "C"
    F = "F"


class Address(BaseModel):
    street: str
    city: str


@dataclasses.dataclass
class Window:
    start: str
    end: str


class Filters(TypedDict):
    tag: str


def test_parameters_from_type_hints_and_google_docstring() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def plan(
        city: str,
        unit: Unit,
        mode: Literal["walk", "drive"],
        address: Address,
        window: Window,
        filters: Filters,
        tags: list[str],
        weights: dict[str, float],
        note: str | None = None,
        days: Annotated[int, Field(description="How many days", ge=1)] = 3,
    ) -> dict[str, Any]:
        """Plan a trip.

        Longer text about planning.

        Args:
            city: Destination city.
            unit: Temperature unit.
        """
        return {}

    d = toolbox.get("plan")
    assert d.description == "Plan a trip.\n\nLonger text about planning."
    props = d.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "Destination city."}
    assert props["mode"] == {"enum": ["walk", "drive"], "type": "string"}
    assert props["days"]["description"] == "How many days" and props["days"]["minimum"] == 1
    assert props["days"]["default"] == 3
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["weights"]["additionalProperties"] == {"type": "number"}
    assert set(d.parameters["$defs"]) >= {"Unit", "Address", "Window", "Filters"}
    assert d.parameters["required"] == [
        "city", "unit", "mode", "address", "window", "filters", "tags", "weights"]
    assert d.parameters["additionalProperties"] is False
    assert d.returns == {"type": "object", "additionalProperties": True}


@pytest.mark.parametrize("doc", [
    "Do it.\n\nParameters\n----------\ncity : str\n    The city.\n",
    "Do it.\n\n:param city: The city.\n",
])
def test_numpy_and_sphinx_docstrings(doc: str) -> None:
    toolbox = Toolbox()

    def f(city: str) -> str:
        return city

    f.__doc__ = doc
    toolbox.tool(f)
    d = toolbox.get("f")
    assert d.description == "Do it."
    assert d.parameters["properties"]["city"]["description"] == "The city."


def test_options_and_context_injection() -> None:
    toolbox = Toolbox()

    @toolbox.tool(name="make_ticket", description="Open a ticket", side_effects=True,
                  timeout=2.5, defer_loading=True, strict=False)
    async def create(ctx: ToolContext, title: str) -> str:
        return f"{ctx.call_id}:{title}"

    d = toolbox.get("make_ticket")
    assert (d.description, d.side_effects, d.timeout, d.defer_loading, d.strict) == (
        "Open a ticket", True, 2.5, True, False)
    assert list(d.parameters["properties"]) == ["title"]
    assert "make_ticket" in toolbox and len(toolbox) == 1


@pytest.mark.parametrize("source, fragment", [
    ("def f(*args: int) -> None: ...", "*args"),
    ("def f(**kw: int) -> None: ...", "**kw"),
    ("import threading\ndef f(ok: int, lock: threading.Lock) -> None: ...",
     "parameter 'lock' cannot become a JSON Schema"),
])
def test_definition_mistakes_name_function_and_parameter(source: str, fragment: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(ToolDefinitionError) as info:
        Toolbox().tool(namespace["f"])
    assert "'f'" in str(info.value) and fragment in str(info.value)


def test_bad_names_and_duplicates() -> None:
    toolbox = Toolbox()
    with pytest.raises(ToolDefinitionError, match="must match"):
        toolbox.tool(name="no spaces allowed")(lambda: None)

    def ping() -> str:
        return "pong"

    toolbox.tool(ping)
    with pytest.raises(ToolDefinitionError, match="already defined"):
        toolbox.tool(ping)


def test_add_hand_written_definition() -> None:
    toolbox = Toolbox()
    seen: dict[str, Any] = {}

    def handler(a: int, ctx: ToolContext) -> int:
        seen["dialect"] = ctx.dialect
        return a * 2

    toolbox.add(ToolDefinition(name="double", parameters={
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}), handler)
    assert toolbox.names() == ["double"]


def test_handle_through_a_plugin_dialect(echo_dialect: str) -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def add(a: int, b: int = 2) -> int:
        return a + b

    @toolbox.tool
    async def greet(ctx: ToolContext, name: str) -> dict[str, str]:
        return {"hello": name, "call": ctx.call_id, "user": ctx.extra["user"]}

    assert toolbox.definitions(echo_dialect)[0]["tool"] == "add"
    payload = {"calls": [
        {"id": "1", "tool": "add", "args": {"a": 3}},
        {"id": "2", "tool": "greet", "args": {"name": "Ana"}},
        {"id": "3", "tool": "add", "args": {"a": "x"}},
        {"id": "4", "tool": "missing"},
    ]}
    text = json.dumps(payload)
    for form in (payload, text, text.encode()):
        body = toolbox.handle(echo_dialect, form, context={"user": "u1"})
        answers = {a["id"]: a for a in body["answers"]}
        assert answers["1"] == {"id": "1", "ok": True, "value": "5"}
        assert answers["2"]["value"] == '{"hello":"Ana","call":"2","user":"u1"}'
        assert answers["3"]["ok"] is False and "/a" in answers["3"]["error"]
        assert "available tools: add, greet" in answers["4"]["error"]


def test_handle_errors(echo_dialect: str) -> None:
    toolbox = Toolbox()
    with pytest.raises(UnknownDialectError, match=r"installed dialects: .*echo"):
        toolbox.handle("nope", {})
    with pytest.raises(WireFormatError, match="echo: calls"):
        toolbox.handle(echo_dialect, {"calls": 3})
    with pytest.raises(WireFormatError, match="not valid JSON"):
        toolbox.handle(echo_dialect, "{nope")


async def test_blocking_form_inside_a_loop_says_to_await(echo_dialect: str) -> None:
    with pytest.raises(UsageError, match="ahandle"):
        Toolbox().handle(echo_dialect, {"calls": []})
    assert await Toolbox().ahandle(echo_dialect, {"calls": []}) == {"answers": []}


def test_results_that_are_not_json_become_error_results(echo_dialect: str) -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def ratio() -> dict[str, float]:
        return {"r": float("nan")}

    @toolbox.tool
    def nested() -> list[Any]:
        value: list[Any] = []
        for _ in range(100):
            value = [value]
        return value

    body = toolbox.handle(echo_dialect, {"calls": [
        {"id": "1", "tool": "ratio"}, {"id": "2", "tool": "nested"}]})
    first, second = body["answers"]
    assert first["ok"] is False and "cannot be sent" in first["error"]
    assert second["ok"] is True and second["value"].startswith("[[[[")


def test_inline_refuses_what_it_cannot_honour() -> None:
    toolbox = Toolbox()
    with pytest.raises(ToolDefinitionError, match="has a timeout"):
        toolbox.tool(name="noop", inline=True, timeout=1)(lambda: None)
    with pytest.raises(ToolDefinitionError, match="is async"):

        @toolbox.tool(inline=True)
        async def later() -> None:
            return None
