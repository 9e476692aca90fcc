"""Result size limits: measured on the wire text, enforced by the toolbox's size policy."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from toolbridge import Content, ImagePart, TextPart, Toolbox, ToolCall, ToolResult, UsageError
from toolbridge.plugin import Dialect, DialectLimits, PendingCalls, RenderedTools
from toolbridge.runtime import Oversize, output_text


class Limited(Dialect):
    """A throwaway dialect whose limits each test sets."""

    name = "limited"

    def __init__(self, limits: DialectLimits) -> None:
        self.limits = limits  # type: ignore[misc]

    def render_tools(self, tools: Sequence[Any], *, policy: Any = "describe") -> RenderedTools:
        return RenderedTools([])

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return PendingCalls(tuple(
            ToolCall(id=c["id"], name=c["tool"], dialect=self.name, conversation="c",
                     arguments=c.get("args", {})) for c in payload["calls"]))

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return {"results": list(results)}


def run(toolbox: Toolbox, limits: DialectLimits, tool: str = "big") -> ToolResult:
    body = toolbox.handle(Limited(limits), {"calls": [{"id": "1", "tool": tool}]})
    result: ToolResult = body["results"][0]
    return result


def big_toolbox(value: Any, **options: Any) -> Toolbox:
    toolbox = Toolbox(store=None, **options)
    toolbox.tool(lambda: value, name="big", inline=True)
    return toolbox


def test_default_policy_is_an_error_stating_size_and_limit() -> None:
    result = run(big_toolbox("é" * 600), DialectLimits(max_result_bytes=1000))
    assert not result.success
    assert result.error == ("the result of big is 1200 bytes, over the limited limit of 1000 "
                            "bytes, and was not sent; ask for less data")


def test_characters_limits_count_characters() -> None:
    assert run(big_toolbox("é" * 600), DialectLimits(max_result_chars=600)).success
    result = run(big_toolbox("é" * 601), DialectLimits(max_result_chars=600))
    assert result.error is not None and "601 characters" in result.error


def test_json_outputs_are_measured_as_compact_json() -> None:
    value = {"k": "v" * 90}  # {"k":"vvv..."} is 98 characters
    assert run(big_toolbox(value), DialectLimits(max_result_chars=98)).success
    assert not run(big_toolbox(value), DialectLimits(max_result_chars=97)).success


@pytest.mark.parametrize("limit", [50, 51, 52, 53, 100])
def test_truncation_cuts_on_a_utf8_boundary_with_a_marker(limit: int) -> None:
    toolbox = big_toolbox("a€" * 100, oversize="truncate")
    result = run(toolbox, DialectLimits(max_result_bytes=limit))
    assert result.success and isinstance(result.output, str)
    encoded = result.output.encode()
    assert len(encoded) <= limit
    assert result.output.endswith(f"\n[truncated by toolbridge: 400 bytes, limit {limit}]")
    kept = result.output.split("\n[truncated")[0]
    assert ("a€" * 100).startswith(kept)


def test_truncating_json_gives_text_and_respects_both_limits() -> None:
    limits = DialectLimits(max_result_bytes=120, max_result_chars=100)
    result = run(big_toolbox({"rows": ["ü" * 50] * 10}, oversize="truncate"), limits)
    assert isinstance(result.output, str)
    assert len(result.output) <= 100 and len(result.output.encode()) <= 120
    assert result.output.startswith('{"rows":["üü')
    assert "[truncated by toolbridge: " in result.output


def test_content_parts_are_measured_as_parts_json_and_truncated_by_part() -> None:
    content = Content(parts=(TextPart(text="intro"), TextPart(text="x" * 500),
                             ImagePart(url="https://example.com/a.png")))
    limits = DialectLimits(max_result_bytes=200, content_parts=True)
    result = run(big_toolbox(content, oversize="truncate"), limits)
    assert isinstance(result.output, Content)
    parts = result.output.parts
    assert parts[0] == TextPart(text="intro")
    assert isinstance(parts[1], TextPart) and set(parts[1].text) == {"x"}
    assert isinstance(parts[-1], TextPart) and parts[-1].text.startswith("[truncated by")
    assert not any(isinstance(p, ImagePart) for p in parts)
    wire = json.dumps([p.model_dump() for p in parts], separators=(",", ":"))
    assert len(wire.encode()) <= 200


def test_content_on_a_text_dialect_is_measured_as_its_text() -> None:
    content = Content(parts=(TextPart(text="x" * 90),))
    assert run(big_toolbox(content), DialectLimits(max_result_chars=90)).success
    result = run(big_toolbox(content, oversize="truncate"), DialectLimits(max_result_chars=80))
    assert isinstance(result.output, str) and len(result.output) <= 80


def test_a_user_hook_decides_and_is_checked_again() -> None:
    seen: list[Oversize] = []

    def summarize(result: ToolResult, over: Oversize) -> ToolResult:
        seen.append(over)
        return ToolResult.ok(result.call, f"{over.size} {over.unit} elided")

    result = run(big_toolbox("z" * 2000, oversize=summarize), DialectLimits(max_result_chars=100))
    assert result.output == "2000 characters elided"
    assert seen[0].limit == 100 and seen[0].dialect == "limited" and seen[0].text == "z" * 2000

    def useless(result: ToolResult, over: Oversize) -> ToolResult:
        return result

    result = run(big_toolbox("z" * 2000, oversize=useless), DialectLimits(max_result_chars=100))
    assert result.error is not None and "2000 characters" in result.error


def test_oversized_error_messages_are_shortened() -> None:
    toolbox = Toolbox(store=None)

    def fail() -> None:
        raise ValueError("v" * 500)

    toolbox.tool(fail, name="big", inline=True)
    result = run(toolbox, DialectLimits(max_result_chars=100))
    assert not result.success and result.error is not None
    assert len(result.error) <= 100 and result.error.startswith("ValueError: vvv")


def test_results_within_the_limit_are_untouched_and_no_limit_means_no_check() -> None:
    value = {"a": 1}
    assert run(big_toolbox(value), DialectLimits(max_result_bytes=8)).output == value
    assert run(big_toolbox("q" * 10**6), DialectLimits()).output == "q" * 10**6


def test_policy_is_checked() -> None:
    with pytest.raises(UsageError, match="oversize must be"):
        Toolbox(oversize="drop")  # type: ignore[arg-type]


def test_output_text_is_what_is_measured() -> None:
    assert output_text({"a": "é"}) == '{"a":"é"}'
