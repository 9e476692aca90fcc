"""The plan step: per call, the tool, decoded and bound arguments, its store key, or an error.

Errors become answers here (unknown tool, undecodable or invalid arguments), set on the call's
record; what is left is a `PlannedCall` per call, which the rest of the pipeline claims, runs
and records.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..errors import ArgumentError, UnknownDialectError
from ..model import ToolDefinition
from ..plugin import Dialect, DialectLimits, get_dialect
from ..plugin._dialect import record_forms
from ..store import StoreKey
from ..tools import ToolContext
from ._call import PlannedCall
from ._output import default_error_formatter

if TYPE_CHECKING:
    from ..plugin._record import CallRecord
    from ..tools import RegisteredTool
    from ._shared import Payload

__all__ = ["answered_once", "plan"]

log = logging.getLogger("toolbridge.runtime")

_new_key = tuple.__new__  # StoreKey(...) without its Python __new__
Decode = Callable[[Dialect, "CallRecord", ToolDefinition], dict[str, Any]]
DialectInfo = tuple["Dialect | None", "Decode | None", int]
"""A call's dialect, how it decodes arguments (``None``: it keeps them), the longest text
that surely fits."""


def _decoder(kind: type[Dialect]) -> Decode | None:
    """How the plan decodes a record's arguments for a dialect of ``kind`` (`record_forms`)."""
    return record_forms(kind).decode


_NO_DIALECT: DialectInfo = (None, None, sys.maxsize)
_KNOWN: dict[int, tuple[Dialect, DialectLimits, DialectInfo]] = {}
"""By ``id`` of the dialect (kept alive here): what `_dialect` made of it, for its limits."""


def _dialect(name: str, given: Dialect | None) -> DialectInfo:
    dialect: Dialect | None = given
    if dialect is None or dialect.name != name:
        try:
            dialect = get_dialect(name)
        except UnknownDialectError:
            return (None, None, sys.maxsize)
    limits = dialect.limits
    known = _KNOWN.get(id(dialect))
    if known is not None and known[0] is dialect and known[1] is limits:
        return known[2]
    chars, cap = limits.max_result_chars, limits.max_result_bytes
    sure = min([n for n in (chars, None if cap is None else cap // 4) if n is not None],
               default=sys.maxsize)
    info = (dialect, _decoder(type(dialect)), sure)
    if len(_KNOWN) > 256:  # dialects made per conversation (bound to a session): forget
        _KNOWN.clear()
    _KNOWN[id(dialect)] = (dialect, limits, info)
    return info


def plan(payload: Payload, tools: Mapping[str, RegisteredTool], calls: Sequence[CallRecord],
         extra: Mapping[str, Any], given: Dialect | None) -> list[PlannedCall]:
    """The planned calls; the others are answered (on their records) with an error.

    A call whose (conversation, turn, id) came before in ``calls`` is not run: it gets an
    error result (`answered_once` drops it from a body whose wire matches results by id).
    """
    planned: list[PlannedCall] = []
    dialects: dict[str, DialectInfo] = {}
    keyed = payload.store is not None
    keys: list[StoreKey] = []  # the claim's columns, made as the calls are planned
    names: list[str] = []
    decoded: list[dict[str, Any]] = []
    effects = False
    default_timeout = payload.timeout
    dialect_name: str | None = None  # the last call's, and its `info`
    info = _NO_DIALECT
    approvals = False
    for index, call in enumerate(calls):
        name = call.name
        tool = tools.get(name)
        if tool is None:
            available = ", ".join(sorted(tools)) or "none"
            call.fail(f"unknown tool {name!r}; available tools: {available}")
            continue
        if call.argument_error is not None:
            call.fail(f"invalid arguments for {name}: {call.argument_error}")
            continue
        if call.dialect != dialect_name:  # a payload's calls usually share one
            dialect_name = call.dialect
            known = dialects.get(dialect_name)
            if known is None:
                known = dialects[dialect_name] = _dialect(dialect_name, given)
            info = known
        arguments = call.arguments
        try:
            decode = info[1]
            if decode is not None:
                arguments = decode(info[0], call, tool.definition)  # type: ignore[arg-type]
            context_param = tool.context_param
            kwargs = None if context_param else tool.bind_plain(arguments)
            if kwargs is None:
                context = (ToolContext(call.call(), tool.definition, extra) if context_param
                           else None)
                kwargs = tool.bind(arguments, context, not_plain=not context_param)
        except ArgumentError as exc:
            call.fail(f"invalid arguments for {name}: {exc}")
            continue
        except Exception as exc:
            log.error("decoding the arguments of %s failed", name, exc_info=exc)
            call.fail(f"invalid arguments for {name}: {default_error_formatter(exc)}")
            continue
        key = None
        if keyed and call.id and (call.conversation or call.turn):
            key = _new_key(StoreKey, (call.dialect, call.conversation, call.turn, call.id))
            keys.append(key)
            names.append(name)
            decoded.append(arguments)
            if tool.side_effects:
                effects = True
        timeout = tool.timeout if tool.timeout is not None else default_timeout
        if tool.needs_approval is not False:
            approvals = True
        planned.append(PlannedCall(payload, index, call, tool, kwargs, arguments, info[0],
                                   info[2], key, timeout))
    payload.approvals = approvals
    ids = {call.id for call in calls}
    payload.distinct_ids = len(ids) == len(calls)
    if keys and len(keys) == len(planned) and payload.distinct_ids:
        payload.columns = (keys, names, decoded, effects)
    if not payload.distinct_ids:  # distinct ids are enough, and quick to see
        repeats = _repeats(calls)
        if repeats:
            for index, first in repeats.items():
                call = calls[index]
                call.fail(
                    f"call id {call.id!r} repeats the id of an earlier call of this turn "
                    f"(call {first + 1}, {calls[first].name}); only that call was run: give "
                    "every call its own id")
            planned = [pc for pc in planned if pc.index not in repeats]
    return planned


class _Identified(Protocol):
    """A `ToolCall` or a `CallRecord`: what identifies a call."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def conversation(self) -> str: ...
    @property
    def turn(self) -> str: ...


T = TypeVar("T")


def _repeats(calls: Sequence[_Identified], *, by_tool: bool = False) -> dict[int, int]:
    """Index of each call whose (conversation, turn, id) came before -> that first call's
    (``by_tool``: whose (conversation, turn, id, tool))."""
    first: dict[tuple[str, ...], int] = {}
    repeats: dict[int, int] = {}
    for index, call in enumerate(calls):
        key = (call.conversation, call.turn, call.id, call.name if by_tool else "")
        if key in first:
            repeats[index] = first[key]
        else:
            first[key] = index
    return repeats


def answered_once(limits: DialectLimits, results: list[T],
                  calls: Sequence[_Identified] | None = None) -> list[T]:
    """``results`` as a dialect with ``limits`` sends them: without the results of repeated
    calls where its backend matches results to calls by id (`DialectLimits.repeated_result_ids`),
    or by id and tool (`DialectLimits.results_match_by_tool`: a repeat naming another tool
    keeps its result). ``calls``: the calls they answer, in order (default: ``results`` are
    answered records, their own calls).
    """
    if len(results) < 2 or limits.repeated_result_ids:
        return results
    if calls is None:
        calls = results  # type: ignore[assignment]  # records identify their calls
        assert calls is not None
    if len({c.id for c in calls}) == len(calls):
        return results
    repeats = _repeats(calls, by_tool=limits.results_match_by_tool)
    return [r for index, r in enumerate(results) if index not in repeats]
