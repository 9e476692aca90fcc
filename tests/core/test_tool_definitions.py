"""Tool definitions that must hold what the user wrote: the ``Field(...)`` idiom, ``Annotated``
descriptions (issue 16 §1), and handlers checked against hand-written schemas (issue 15 §2)."""

from __future__ import annotations

import logging
from typing import Annotated, Any

import pytest
from pydantic import Field

from toolbridge import (
    Toolbox,
    ToolCall,
    ToolContext,
    ToolDefinition,
    ToolDefinitionError,
    UsageError,
)


def call(name: str, arguments: dict[str, Any], call_id: str = "1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments, dialect="test")


def schema(required: tuple[str, ...] = (), **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required)}


# -- the FastAPI / validate_call idiom --------------------------------------------------------
@pytest.mark.parametrize("inline", [False, True])
def test_field_defaults_keep_required_description_and_bounds(inline: bool) -> None:
    toolbox = Toolbox(store=None)
    seen: list[tuple[Any, Any]] = []

    @toolbox.tool(inline=inline)
    def search(query: str = Field(..., description="Search text"),
               limit: int = Field(10, ge=1, le=50),
               scope: str = Field("all", description="Where to look")) -> str:
        seen.append((query, limit))
        return f"{query}:{limit}:{scope}"

    params = toolbox.get("search").parameters
    assert params["required"] == ["query"]
    assert params["properties"]["query"] == {"type": "string", "description": "Search text"}
    assert params["properties"]["limit"] == {"type": "integer", "default": 10, "minimum": 1,
                                             "maximum": 50}
    [missing] = toolbox.execute([call("search", {})])
    assert not missing.success and "/query" in (missing.error or "")
    assert seen == []  # the handler never ran with FieldInfo values
    [found] = toolbox.execute([call("search", {"query": "tea"}, "2")])
    assert found.output == "tea:10:all"  # defaults are values, not FieldInfo objects
    [bounded] = toolbox.execute([call("search", {"query": "tea", "limit": 99}, "3")])
    assert not bounded.success and "/limit" in (bounded.error or "")


def test_annotated_string_is_the_description() -> None:
    toolbox = Toolbox(store=None)

    @toolbox.tool
    def add(a: Annotated[int, "First number"], b: Annotated[int, Field(description="Second")],
            c: int = 0) -> int:
        """Add numbers.

        Args:
            a: not used: the annotation says it first
            c: Third number
        """
        return a + b + c

    props = toolbox.get("add").parameters["properties"]
    assert props["a"]["description"] == "First number"
    assert props["b"]["description"] == "Second"
    assert props["c"]["description"] == "Third number"


# -- handlers checked against hand-written schemas --------------------------------------------
def test_handler_missing_a_schema_parameter_names_tool_and_parameter() -> None:
    definition = ToolDefinition(name="get_order", parameters=schema(
        ("order_id",), order_id={"type": "string"}, include_items={"type": "boolean"}))
    with pytest.raises(ToolDefinitionError) as info:
        Toolbox().add(definition, lambda order_id: order_id)
    message = str(info.value)
    assert "tool 'get_order'" in message and "'include_items'" in message
    assert info.value.problems == ("tool 'get_order': parameter 'include_items': the schema "
                                   "has it, the handler takes no such argument (add it, or "
                                   "**kwargs)",)


@pytest.mark.parametrize("handler, fragment", [
    (lambda a, b: a, "'b': the handler requires it, the schema has no such property"),
    (lambda a, n: a, "'n': the handler requires it, the schema makes it optional"),
    (lambda a, n, /: a, "positional-only"),
])
def test_handler_requirements_must_match(handler: Any, fragment: str) -> None:
    definition = ToolDefinition(name="t", parameters=schema(("a",), a={"type": "string"},
                                                            n={"type": "integer"}))
    with pytest.raises(ToolDefinitionError, match=fragment):
        Toolbox().add(definition, handler)


def test_handlers_that_fit_are_accepted() -> None:
    toolbox = Toolbox(store=None)
    definition = schema(("a",), a={"type": "string"}, n={"type": "integer"})

    def with_context(a: str, ctx: ToolContext, n: int = 1) -> str:
        return a * n

    toolbox.add(ToolDefinition(name="kw", parameters=definition), lambda **kwargs: kwargs)
    toolbox.add(ToolDefinition(name="ctx", parameters=definition), with_context)
    toolbox.add(ToolDefinition(name="star", parameters=definition), lambda a, *rest, n=0: a)
    union = {"type": "object", "anyOf": [schema(("x",), x={"type": "string"}),
                                         schema(("y",), y={"type": "string"})]}
    toolbox.add(ToolDefinition(name="either", parameters=union), lambda x=None, y=None: x or y)
    assert toolbox.names() == ["kw", "ctx", "star", "either"]
    [result] = toolbox.execute([call("ctx", {"a": "ab", "n": 2})])
    assert result.output == "abab"


def test_unreadable_signature_is_accepted_with_a_note(caplog: pytest.LogCaptureFixture) -> None:
    toolbox = Toolbox(store=None)
    with caplog.at_level(logging.INFO, logger="toolbridge"):
        toolbox.add(ToolDefinition(name="biggest", parameters=schema(a={"type": "integer"})),
                    max)  # a builtin: no signature to read
    assert toolbox.names() == ["biggest"]
    assert "cannot be read" in caplog.text and "biggest" in caplog.text


def test_add_all_reports_every_mismatch_and_adds_nothing() -> None:
    toolbox = Toolbox(store=None)
    good = ToolDefinition(name="good", parameters=schema(("a",), a={"type": "string"}))
    bad = ToolDefinition(name="bad", parameters=schema(("a",), a={"type": "string"}))
    with pytest.raises(ToolDefinitionError) as info:
        toolbox.add_all([(good, lambda a: a), (bad, lambda b: b), (good, lambda a: a),
                         (bad, "not callable")])
    problems = info.value.problems
    assert len(problems) == 4, problems
    assert sum("tool 'bad'" in p for p in problems) == 3  # 'a' unknown, 'b' unknown, callable
    assert any("already" in p and "'good'" in p for p in problems)
    assert toolbox.names() == []
    assert toolbox.add_all([(good, lambda a: a)]) == [good]
    assert toolbox.names() == ["good"]


def test_add_takes_a_definitions_json_object_and_refuses_a_bad_one_by_name() -> None:
    box = Toolbox()
    added = box.add({"name": "lookup", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
        lambda q: q.upper())
    assert isinstance(added, ToolDefinition) and box.handle(
        "openai-agents", {"id": "s", "status": "requires_action", "required_actions": [
            {"type": "function_call", "turn_id": "t", "call_id": "c", "name": "lookup",
             "arguments": {"q": "hi"}}]})["events"][0]["output"] == "HI"
    with pytest.raises(ToolDefinitionError, match="tool 'x': parameters") as bad:
        box.add({"name": "x", "parameters": {"type": "array"}}, lambda: 1)
    assert "errors.pydantic.dev" not in str(bad.value)
    with pytest.raises(ToolDefinitionError, match="got list"):
        box.add([], lambda: 1)  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="tool 'x'"):
        box.add_all([({"name": "x", "parameters": {"type": "array"}}, lambda: 1)])


def test_add_all_replaces_a_set_in_one_change_and_remove_unregisters() -> None:
    toolbox = Toolbox(store=None)
    one = ToolDefinition(name="one", parameters=schema(("a",), a={"type": "string"}))
    two = ToolDefinition(name="two", parameters=schema())
    local = ToolDefinition(name="local", parameters=schema())
    toolbox.add_all([(one, lambda a: a), (two, lambda: 2), (local, lambda: "mine")])
    wider = ToolDefinition(name="one", parameters=schema(("a",), a={"type": "string"},
                                                         b={"type": "integer"}))
    three = ToolDefinition(name="three", parameters=schema())
    with pytest.raises(ToolDefinitionError, match="'local'"):  # not among the replaced
        toolbox.add_all([(wider, lambda a, b=0: a * b), (local, lambda: 1)],
                        replace=["one", "two"])
    assert toolbox.names() == ["one", "two", "local"]  # nothing changed
    with pytest.raises(UsageError, match="'nope'"):
        toolbox.add_all([], replace=["nope"])
    toolbox.add_all([(wider, lambda a, b=0: a * b), (three, lambda: 3)], replace=["one", "two"])
    assert toolbox.names() == ["one", "local", "three"]  # one kept its place, two is gone
    assert "b" in toolbox.get("one").parameters["properties"]
    replaced, gone = toolbox.execute([call("one", {"a": "x", "b": 3}), call("two", {}, "2")])
    assert replaced.output == "xxx"
    assert not gone.success and "unknown tool 'two'" in (gone.error or "")
    with pytest.raises(UsageError, match="'two'"):
        toolbox.remove("local", "two")
    assert toolbox.remove("local", "three") == [local, three]
    assert toolbox.names() == ["one"]
