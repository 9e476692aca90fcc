"""The inline batch path: a payload's sync calls run in this thread, claimed per turn at once.

Taken when no plugin wraps execution and the store is none or a `MemoryStore`. A call this
path cannot take (unknown tool, bad arguments, a context parameter, a dialect that decodes
arguments, a call the store already holds) goes the general way, in its turn. This is the
path of nearly every payload of cheap tools, so it is written for speed: one pass to plan,
one claim per turn, one pass to run, one completion per turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..model import ToolCall, ToolResult, new_result
from ..store import StoreClaim, StoreKey
from ..store._memory import Batch, MemoryStore, content_of
from ..store._owners import end_owner
from ._replay import fingerprint, new_tuple, warn_side_effects
from ._steps import (
    KEEP_ARGUMENTS,
    Dialects,
    check_unique,
    failed,
    limited,
    needs_loop,
    shaped,
    sure_length,
)

if TYPE_CHECKING:
    from ..plugin import Dialect
    from ..tools import RegisteredTool
    from ._view import ToolboxView

__all__ = ["answer_inline"]

General = Callable[[ToolCall], ToolResult]
"""The general path for one call (it consults the store itself)."""
Plan = tuple["RegisteredTool", "Dialect | None", dict[str, Any], int, Any]
"""The tool, the dialect, the bound arguments, the longest text that surely fits the dialect's
limits, and what the store keeps of the call (``None``: the store works it out)."""
Turn = tuple[str, str, str]
Done = tuple[bool, Any, "str | None"]
"""A result as the store keeps it: ``(success, output, error)``."""
Claimed = tuple[Turn, Batch, list[Done]]
"""A turn's batch and the results of its members, in claim order."""


def answer_inline(toolbox: ToolboxView, store: MemoryStore | None, calls: Sequence[ToolCall],
                  dialects: Dialects, general: General, *, in_loop: bool = False
                  ) -> list[ToolResult] | None:
    """Answer ``calls`` one by one, in order; ``None`` when one needs the event loop (see
    `needs_loop`). A call id repeated in a turn raises `WireFormatError` before anything runs.

    ``in_loop``: called on a running event loop, which nothing may block: every tool must be
    ``inline``, and a call another worker holds (the general path would wait for it) sends
    the whole payload to the event-loop path, before anything ran.
    """
    plans = _plans(toolbox, calls, dialects, in_loop)
    if plans is None:
        return None
    if store is None:
        return [general(call) if plan is None else _run(toolbox, call, plan)[0]
                for call, plan in zip(calls, plans, strict=True)]
    batches, members, found = _claim(store, calls, plans)
    if in_loop and any(f is not None and f.state != "completed" for f in found):
        _release(store, batches)
        return None
    results: list[ToolResult] = []
    try:
        for call, plan, finished, stored in zip(calls, plans, members, found, strict=True):
            if finished is None or plan is None:
                results.append(general(call) if stored is None or plan is None else _replay(
                    toolbox, call, plan, stored, general))
                continue
            result, done = _run(toolbox, call, plan)
            finished.append(done)
            results.append(result)
    except BaseException:
        _interrupted(store, batches, calls[len(results):], plans[len(results):],
                     members[len(results):])
        raise
    try:
        for turn, batch, finished in batches:
            store._complete_turn(turn, batch, finished)
    finally:
        for _, batch, _ in batches:
            end_owner(batch.owner)
    return results


def _replay(toolbox: ToolboxView, call: ToolCall, plan: Plan, stored: StoreClaim,
            general: General) -> ToolResult:
    """The stored answer to a re-delivered call; anything but a completed call with the same
    content (a call in flight, an abandoned one, an id reused) goes the general way."""
    result = stored.result
    if stored.state != "completed" or result is None or stored.fingerprint != fingerprint(call):
        return general(call)
    return limited(toolbox, new_result(call, *result), plan[1])


def _run(toolbox: ToolboxView, call: ToolCall, plan: Plan) -> tuple[ToolResult, Done]:
    """Run the call's handler: its result, and the same as the store keeps it."""
    tool, dialect, kwargs, sure, _ = plan
    try:
        value = tool.handler(**kwargs)
    except Exception as exc:
        result = failed(toolbox, call, exc, dialect)
    else:
        if type(value) is str and len(value) <= sure:  # the common case, decided here
            return new_result(call, True, value, None), (True, value, None)
        result = shaped(toolbox, call, value, dialect)
    return result, (result.success, result.output, result.error)


def _plans(toolbox: ToolboxView, calls: Sequence[ToolCall], dialects: Dialects, in_loop: bool
           ) -> list[Plan | None] | None:
    """Per call, its `Plan` when this path takes it, else ``None``; ``None`` for all when a
    call needs the event loop (``in_loop``: when a tool is not ``inline``)."""
    tools = toolbox._tools
    plans: list[Plan | None] = []
    seen: dict[str, tuple[Dialect | None, int] | None] = {}  # per dialect name; None: decodes
    ids: set[str] = set()
    for call in calls:
        fields = call.__dict__  # read once: a pydantic model's attributes are slow to get
        ids.add(fields["id"])
        tool = tools.get(fields["name"])
        if tool is not None and not tool.inline and (
                in_loop or needs_loop(toolbox, tool, len(calls))):
            return None
        plan: Plan | None = None
        if tool is not None and fields["argument_error"] is None and not tool.context_param:
            name = fields["dialect"]
            known = seen[name] if name in seen else _dialect(dialects, name, seen)
            if known is not None:
                arguments = fields["arguments"]
                kwargs = tool.bind_plain(arguments)
                if kwargs is not None:  # a copy of plain values: the store may keep it too
                    plan = (tool, known[0], kwargs, known[1], (fields["name"], kwargs))
                else:
                    try:
                        plan = (tool, known[0], tool.bind(arguments, None), known[1], None)
                    except Exception:  # the general path reports it
                        plan = None
        plans.append(plan)
    if len(ids) != len(calls):  # distinct ids are enough, and quick to see
        check_unique(calls)  # raises when the same (conversation, turn, id) appears twice
    return plans


def _dialect(dialects: Dialects, name: str, seen: dict[str, tuple[Dialect | None, int] | None]
             ) -> tuple[Dialect | None, int] | None:
    """The dialect ``name`` and its sure text length, or ``None`` if it decodes arguments."""
    dialect = dialects[name]
    if dialect is None:
        known: tuple[Dialect | None, int] | None = (None, 1 << 62)
    elif type(dialect).decode_arguments is not KEEP_ARGUMENTS:
        known = None
    else:
        known = (dialect, sure_length(dialect))
    seen[name] = known
    return known


def _claim(store: MemoryStore, calls: Sequence[ToolCall], plans: Sequence[Plan | None]
           ) -> tuple[list[Claimed], list[list[Done] | None], list[StoreClaim | None]]:
    """Claim the keyed calls this path takes, one batch per turn: the batches; per call the
    list its result joins when the claim is ours, else ``None``; and per call what the store
    holds when the call was already there."""
    groups: dict[Turn, tuple[list[int], list[str], list[Any]]] = {}
    turn: Turn = ("", "", "")
    group: tuple[list[int], list[str], list[Any]] | None = None
    index = -1
    for call, plan in zip(calls, plans, strict=True):
        index += 1
        if plan is None:
            continue
        fields = call.__dict__  # read once: a pydantic model's attributes are slow to get
        call_id, conversation, turn_id = fields["id"], fields["conversation"], fields["turn"]
        if not call_id or not (conversation or turn_id):
            continue  # an unkeyed call is not stored
        if plan[0].side_effects and not store.warned_side_effects:
            warn_side_effects(store, call)
        if group is None or turn_id != turn[2] or conversation != turn[1] or (
                fields["dialect"] != turn[0]):  # a payload's calls mostly share one turn
            turn = (fields["dialect"], conversation, turn_id)
            group = groups.get(turn)
            if group is None:
                group = groups[turn] = ([], [], [])
        group[0].append(index)
        group[1].append(call_id)
        content = plan[4]
        group[2].append(content_of(call) if content is None else content)
    claimed: list[list[Done] | None] = [None] * len(calls)
    found: list[StoreClaim | None] = [None] * len(calls)
    batches: list[Claimed] = []
    for key, (indexes, ids, contents) in groups.items():
        batch, stored = store._claim_turn(key, ids, contents)
        finished: list[Done] = []
        batches.append((key, batch, finished))
        for i, there in zip(indexes, stored, strict=True):
            if there is None:
                claimed[i] = finished
            else:
                found[i] = there
    return batches, claimed, found


def _release(store: MemoryStore, batches: list[Claimed]) -> None:
    """Give up every claim of ``batches`` (none of their calls started)."""
    try:
        for turn, batch, _ in batches:
            for call_id in batch.ids:
                store.release(new_tuple(StoreKey, (*turn, call_id)), batch.owner)
    finally:
        for _, batch, _ in batches:
            end_owner(batch.owner)


def _interrupted(store: MemoryStore, batches: list[Claimed], calls: Sequence[ToolCall],
                 plans: Sequence[Plan | None], members: Sequence[list[Done] | None]) -> None:
    """Stopped by an exception at ``calls[0]`` (``plans`` and ``members`` from there on):
    store what ran, free what never started.

    Like `abandon`, the interrupted call is freed when it has no side effects and otherwise
    left started (a re-delivery is then reconciled, never re-run).
    """
    try:
        owners: dict[int, tuple[Turn, Batch]] = {}
        for turn, batch, finished in batches:
            store._complete_turn(turn, batch, finished)
            owners[id(finished)] = (turn, batch)
        for index, (call, plan, member) in enumerate(zip(calls, plans, members, strict=True)):
            if member is None or plan is None or (index == 0 and plan[0].side_effects):
                continue
            turn, batch = owners[id(member)]
            store.release(new_tuple(StoreKey, (*turn, call.id)), batch.owner)
    finally:
        for _, batch, _ in batches:
            end_owner(batch.owner)
