"""The pipeline's steps added one at a time, on its own parts: where ``handle``'s cost goes.

Each rung answers an Agents session with toolbridge's real parts, and adds one of the
pipeline's steps to the rung below it:

- parts: the Agents dialect's reader and writer, the plan's argument decoder, the tool's
  binder (``bind_plain``, else ``bind``: the schema check and pydantic), the handler, the
  shaper (`toolbridge.runtime._output.shape`: JSON text made once), a dict for what a store
  keeps (the arguments' JSON snapshot and the results); no `PlannedCall`, no journal;
- + plan: the plan step (`PlannedCall` per call, store keys, repeats, the payload's settings);
- + store: the journal's claim and record on the `MemoryStore` (owners, the claim's answers);
- + execute: each call through `PlannedCall.execute` (its journal and hook checks, the size
  check and record of its answer);
- + executor: the calls through `ThreadExecutor` (the default executor; ``inline=True`` tools).

``handle`` with the same inline tools adds its entry (the running-loop check, the telemetry
check); the default configuration then adds the executor's watched path for sync tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import to_json

import toolbridge
from toolbridge.plugin._dialect import record_forms
from toolbridge.runtime import _pipeline
from toolbridge.runtime._journal import Journal
from toolbridge.runtime._output import shape
from toolbridge.runtime._plan import _dialect, plan
from toolbridge.tools import ToolContext

Answer = Callable[[dict[str, Any]], Any]
DIALECT = "openai-agents"


def rungs(box: toolbridge.Toolbox) -> dict[str, Answer]:
    """The ladder's rungs on ``box`` (its tools ``inline=True``, its memory store)."""
    pipeline = box._pipeline
    tools, store = pipeline.tools, pipeline.store
    assert store is not None
    executor = _pipeline._DEFAULT_EXECUTOR
    kept: dict[tuple[str, str, str], list[Any]] = {}

    def bound(d: Any, records: Any) -> list[tuple[Any, Any, dict[str, Any], Any]]:
        decode = _dialect(d.name, d)[1]
        out = []
        for record in records:
            tool = tools[record.name]
            arguments = record.arguments if decode is None else decode(d, record,
                                                                       tool.definition)
            kwargs = None if tool.context_param else tool.bind_plain(arguments)
            if kwargs is None:
                context = (ToolContext(record.call(), tool.definition, {})
                           if tool.context_param else None)
                kwargs = tool.bind(arguments, context, not_plain=not tool.context_param)
            out.append((record, tool, kwargs, arguments))
        return out

    def run_bare(todo: list[tuple[Any, Any, dict[str, Any], Any]]) -> None:
        for record, tool, kwargs, _ in todo:
            record.answer(*shape(record.name, tool.handler(**kwargs)))

    def keep(records: Any, todo: list[tuple[Any, Any, dict[str, Any], Any]]) -> list[Any]:
        first = records[0]
        entry = kept[DIALECT, first.conversation, first.turn] = [
            to_json([t[3] for t in todo]), [r.id for r in records], None]
        return entry

    def parts(payload: dict[str, Any]) -> Any:
        d, records = _pipeline._read(DIALECT, payload, None)
        todo = bound(d, records)
        entry = keep(records, todo)
        run_bare(todo)
        entry[2] = [(r.success, r.output, r.error, r.text) for r in records]
        return record_forms(type(d)).write(d, records)

    def planned_calls(payload: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
        d, records = _pipeline._read(DIALECT, payload, None)
        state = pipeline._payload({}, d)
        return d, records, state, plan(state, tools, records, {}, d)

    def with_plan(payload: dict[str, Any]) -> Any:
        d, records, _, calls = planned_calls(payload)
        todo = [(pc.record, pc.tool, pc.kwargs, pc.arguments) for pc in calls]
        entry = keep(records, todo)
        run_bare(todo)
        entry[2] = [(r.success, r.output, r.error, r.text) for r in records]
        return _pipeline._write(d, records, calls)

    def stored(run: Callable[[list[Any]], None]) -> Answer:
        def answer(payload: dict[str, Any]) -> Any:
            d, records, state, calls = planned_calls(payload)
            journal = state.journal = Journal(store, pipeline.max_concurrency)
            todo, _ = pipeline._claim(journal, calls)
            run(todo)
            journal.finish(calls)
            return _pipeline._write(d, records, calls)
        return answer

    def each(todo: list[Any]) -> None:
        for pc in todo:
            pc.execute(linger=True)

    return {
        "parts": parts,
        "+ plan": with_plan,
        "+ store": stored(lambda todo: run_bare(
            [(pc.record, pc.tool, pc.kwargs, pc.arguments) for pc in todo])),
        "+ execute": stored(each),
        "+ executor": stored(lambda todo: executor.run(todo, pipeline.max_concurrency)),
    }
