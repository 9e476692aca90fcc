"""`check_dialect`: the translation round trips every dialect passes."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ToolbridgeError, UsageError, WireFormatError
from ..model import ToolCall, ToolDefinition, ToolResult
from ..plugin import Dialect, get_dialect

__all__ = ["check_dialect"]


def check_dialect(
    dialect: Dialect | str, tools: Sequence[ToolDefinition], payload: Mapping[str, Any]
) -> None:
    """Conformance checks of a dialect's translations; `AssertionError` names the rule.

    ``payload`` must hold at least one pending call of one of ``tools``. Checked: the tools
    render (one entry each, JSON, within `DialectLimits.max_tools`) and, where the dialect
    reads tool lists, read back under their names; the payload's calls are read with their
    dialect, ids and argument objects; malformed payloads raise `WireFormatError` naming the
    dialect (never invent calls); results are written as JSON naming every call, an error
    result marked differently from a success with the same text; the toolbox pipeline keeps
    each result within the dialect's size limits.
    """
    d = get_dialect(dialect)
    _check_definitions(d, tools)
    calls = _check_calls(d, payload)
    _check_results(d, calls)
    _check_malformed(d)
    _check_limits(d, tools, payload)


def _check_definitions(d: Dialect, tools: Sequence[ToolDefinition]) -> None:
    rendered = d.render_tools(tools)
    assert len(rendered.definitions) == len(tools), (
        f"render_tools gave {len(rendered.definitions)} entries for {len(tools)} tools")
    text = json.dumps(rendered.definitions)  # must be JSON-compatible
    for tool in tools:
        assert tool.name in text, f"render_tools lost the tool name {tool.name!r}"
    try:
        read = d.read_tools(rendered.definitions)
    except UsageError:
        return  # the dialect cannot read tool lists: nothing to round-trip
    names = sorted(t.name for t in read)
    assert names == sorted(t.name for t in tools), (
        f"read_tools(render_tools(tools)) gave {names}, not the tools' names")
    for tool, back in zip(sorted(tools, key=lambda t: t.name), sorted(read, key=lambda t: t.name),
                          strict=True):
        wanted = set(tool.parameters.get("properties", {}))
        got = set(back.parameters.get("properties", {}))
        assert wanted <= got, f"{tool.name}: read back without parameters {sorted(wanted - got)}"


def _check_calls(d: Dialect, payload: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    pending = d.read_calls(payload)
    assert pending.calls, "read_calls found no call in a payload that has one"
    for call in pending.calls:
        assert call.dialect == d.name, f"call.dialect is {call.dialect!r}, not {d.name!r}"
        assert call.id, "a call was read without an id"
        assert isinstance(call.arguments, dict), f"call {call.id}: arguments are not an object"
    return pending.calls


def _check_results(d: Dialect, calls: Sequence[ToolCall]) -> None:
    results = [ToolResult.ok(c, {"ok": True}) if i % 2 == 0 else ToolResult.failed(c, "nope")
               for i, c in enumerate(calls)]
    text = json.dumps(d.write_results(results))
    for call in calls:
        assert call.id in text, f"write_results does not name call id {call.id!r}"
    first = calls[0]
    ok = json.dumps(d.write_results([ToolResult.ok(first, "kit says no")]))
    failed = json.dumps(d.write_results([ToolResult.failed(first, "kit says no")]))
    assert "kit says no" in failed, "an error result's message is not sent"
    assert ok != failed, "an error result is written exactly like a success"


def _check_malformed(d: Dialect) -> None:
    for bad in ({}, {"unexpected": 1}):
        try:
            pending = d.read_calls(bad)
        except WireFormatError as exc:
            assert exc.dialect == d.name, "WireFormatError must name the dialect"
        else:
            assert not pending.calls, "read_calls invented calls from an empty payload"


def _check_limits(d: Dialect, tools: Sequence[ToolDefinition], payload: Mapping[str, Any]
                  ) -> None:
    """Through a toolbox whose handlers answer far over the dialect's result limit."""
    limit = d.limits.max_result_chars or d.limits.max_result_bytes
    if limit is None:
        return
    from ..toolbox import Toolbox

    huge = "x" * (limit * 2 + 10)
    toolbox = Toolbox(store=None)
    for tool in tools:
        toolbox.add(tool.model_copy(update={"side_effects": False}), lambda **_: huge)
    try:
        body = toolbox.handle(d, payload)
    except ToolbridgeError as exc:  # an oversize policy that fails loudly is a clear answer
        raise AssertionError(f"handle failed on an oversized result: {exc}") from exc
    finally:
        toolbox.close()
    assert huge not in json.dumps(body), "a result over the dialect's size limit was sent"
