"""Result size limits: measure a result as its wire will carry it, and apply the size policy."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Union

from ..model import Content, TextPart, ToolResult
from ..plugin import DialectLimits
from ._output import output_text

__all__ = ["Oversize", "SizePolicy", "enforce_limits", "measure"]

log = logging.getLogger("toolbridge.runtime")


@dataclass(frozen=True)
class Oversize:
    """A result larger than its dialect accepts, as given to a size-policy hook."""

    size: int
    """Measured size of the result's wire text, in ``unit``."""
    limit: int
    """The dialect's limit, in ``unit``."""
    unit: Literal["bytes", "characters"]
    dialect: str
    """Name of the dialect whose limit was exceeded."""
    text: str
    """The measured wire text (compact JSON of the parts for content results)."""


SizePolicy = Union[  # noqa: UP007  (a runtime alias: keep it valid on Python 3.10)
    Literal["error", "truncate"], Callable[[ToolResult, Oversize], ToolResult]
]
"""What to do with an oversized result: ``"error"`` (default) replaces it with an error result
stating size and limit, ``"truncate"`` cuts it on a UTF-8 boundary and appends a visible marker,
a callable ``(result, oversize) -> ToolResult`` decides (its answer is checked again; if still
too large the ``"error"`` policy applies)."""


def wire_text(result: ToolResult, limits: DialectLimits, text: str | None = None) -> str:
    """The text whose size the backend limits: output text, parts JSON, or the error.

    ``text``: the output's JSON text, when already made.
    """
    if not result.success:
        return result.error or ""
    output = result.output
    if isinstance(output, Content) and limits.content_parts:
        return _parts_json(output.parts)
    return output_text(output) if text is None else text


def measure(text: str, limits: DialectLimits, dialect: str) -> Oversize | None:
    """How far ``text`` is over ``limits``, or ``None`` when it fits."""
    if limits.max_result_chars is not None and len(text) > limits.max_result_chars:
        return Oversize(len(text), limits.max_result_chars, "characters", dialect, text)
    cap = limits.max_result_bytes
    if cap is not None and len(text) * 4 > cap:  # below that, no UTF-8 text can exceed it
        size = len(text.encode("utf-8", "surrogatepass"))  # a lone surrogate: as 3 bytes
        if size > cap:
            return Oversize(size, cap, "bytes", dialect, text)
    return None


def enforce_limits(
    result: ToolResult, limits: DialectLimits, dialect: str, policy: SizePolicy,
    text: str | None = None,
) -> ToolResult:
    """``result`` if it fits ``limits``; otherwise what ``policy`` makes of it (``text``: the
    output's JSON text, when already made)."""
    if limits.max_result_chars is None and limits.max_result_bytes is None:
        return result
    over = measure(wire_text(result, limits, text), limits, dialect)
    if over is None:
        return result
    if not result.success:  # an error message is only ever shortened
        return ToolResult.failed(result.call, _truncate_text(over.text, limits, over))
    if policy == "truncate":
        return _truncate(result, limits, over)
    if callable(policy):
        try:
            answer = policy(result, over)
        except Exception as exc:
            log.error("the oversize hook failed for %s", result.call.name, exc_info=exc)
        else:
            if isinstance(answer, ToolResult) and measure(
                    wire_text(answer, limits), limits, dialect) is None:
                return answer
            log.warning("the oversize hook's answer for %s does not fit either", result.call.name)
    return ToolResult.failed(result.call, (
        f"the result of {result.call.name} is {over.size} {over.unit}, over the {dialect} limit "
        f"of {over.limit} {over.unit}, and was not sent; ask for less data"
    ))


def _marker(over: Oversize) -> str:
    return f"\n[truncated by toolbridge: {over.size} {over.unit}, limit {over.limit}]"


def _fit(text: str, limits: DialectLimits, budget_chars: int, budget_bytes: int) -> str:
    """The longest prefix of ``text`` within both budgets, cut on a character boundary."""
    if limits.max_result_chars is not None:
        text = text[:max(budget_chars, 0)]
    if limits.max_result_bytes is not None:
        text = text.encode()[:max(budget_bytes, 0)].decode("utf-8", "ignore")
    return text


def _truncate_text(text: str, limits: DialectLimits, over: Oversize) -> str:
    marker = _marker(over)
    chars = (limits.max_result_chars or 0) - len(marker)
    size = (limits.max_result_bytes or 0) - len(marker.encode())
    return _fit(text, limits, chars, size) + marker


def _truncate(result: ToolResult, limits: DialectLimits, over: Oversize) -> ToolResult:
    output = result.output
    if not (isinstance(output, Content) and limits.content_parts):
        return ToolResult.ok(result.call, _truncate_text(over.text, limits, over))
    marker = TextPart(text=_marker(over).strip())
    kept: list[Any] = []
    for part in output.parts:
        if _fits([*kept, part, marker], limits, over.dialect):
            kept.append(part)
            continue
        if isinstance(part, TextPart):
            low, high = 0, len(part.text)  # longest prefix that still fits
            while low < high:
                mid = (low + high + 1) // 2
                if _fits([*kept, TextPart(text=part.text[:mid]), marker], limits, over.dialect):
                    low = mid
                else:
                    high = mid - 1
            if low:
                kept.append(TextPart(text=part.text[:low]))
        break
    return ToolResult.ok(result.call, Content(parts=(*kept, marker)))


def _fits(parts: list[Any], limits: DialectLimits, dialect: str) -> bool:
    return measure(_parts_json(parts), limits, dialect) is None


def _parts_json(parts: Any) -> str:
    return json.dumps([p.model_dump() for p in parts], separators=(",", ":"), ensure_ascii=False)
