"""The plan decodes a call's arguments through `Dialect.decode_record`: a dialect's own
record-level decode, or the base's, which calls `decode_arguments` with the `ToolCall`. A
dialect that overrides only `decode_arguments` (a third party's, or a subclass of a built-in
one) has its override called."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import Toolbox, ToolCall, ToolDefinition, ToolResult
from toolbridge.plugin import Dialect, PendingCalls, RenderedTools, get_dialect

SEEN: list[ToolCall] = []


def _doubling(call: ToolCall, tool: ToolDefinition) -> dict[str, Any]:
    SEEN.append(call)
    return {"n": call.arguments["n"] * 2}


class Doubling(Dialect):
    """A third-party dialect whose wire halves ``n``: its `decode_arguments` doubles it."""

    name = "doubling"

    def render_tools(self, tools: Sequence[Any], *, policy: Any = "describe") -> RenderedTools:
        return RenderedTools([])

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        return PendingCalls(tuple(
            ToolCall(id=c["id"], name="twice", dialect=self.name, arguments=c["args"])
            for c in payload["calls"]))

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return {"outputs": [r.output for r in results]}

    def decode_arguments(self, call: ToolCall, tool: ToolDefinition) -> dict[str, Any]:
        return _doubling(call, tool)


def _toolbox() -> Toolbox:
    toolbox = Toolbox(store=None)

    @toolbox.tool(inline=True)
    def twice(n: int) -> int:
        """The number given."""
        return n

    return toolbox


def test_a_third_party_decode_arguments_is_called_with_the_call() -> None:
    SEEN.clear()
    body = _toolbox().handle(Doubling(), {"calls": [{"id": "1", "args": {"n": 2}}]})
    assert body == {"outputs": [4]}
    assert [(c.id, c.dialect, c.arguments) for c in SEEN] == [("1", "doubling", {"n": 2})]


def test_a_built_in_subclass_overriding_decode_arguments_is_called() -> None:
    base = type(get_dialect("gemini"))

    class DoublingGemini(base):  # type: ignore[misc, valid-type]
        def decode_arguments(self, call: ToolCall, tool: ToolDefinition) -> dict[str, Any]:
            return _doubling(call, tool)

    SEEN.clear()
    content = {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "twice",
                                                            "args": {"n": 3}}}]}
    body = _toolbox().handle(DoublingGemini(), content)
    response = body["contents"][0]["parts"][0]["functionResponse"]
    assert response["response"] == {"output": 6}
    assert [c.id for c in SEEN] == ["c1"]
    # the built-in dialect itself decodes the record's arguments, no override involved
    assert _toolbox().handle("gemini", content)["contents"][0]["parts"][0][
        "functionResponse"]["response"] == {"output": 3}


def test_a_built_in_subclass_overriding_read_calls_or_write_results_is_called() -> None:
    """The same rule for reading and writing: a subclass's public override is what runs, the
    built-in's record forms stand aside for it (`toolbridge.plugin._dialect.record_forms`)."""
    base = type(get_dialect("gemini"))

    class Renaming(base):  # type: ignore[misc, valid-type]
        def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
            pending = super().read_calls(payload)
            return PendingCalls(tuple(c.model_copy(update={"name": "twice"})
                                      for c in pending.calls), pending.unhandled)

        def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
            body: dict[str, Any] = super().write_results(results)
            body["written_by"] = "Renaming"
            return body

    content = {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "thrice",
                                                            "args": {"n": 3}}}]}
    body = _toolbox().handle(Renaming(), content)
    assert body["written_by"] == "Renaming"
    response = body["contents"][0]["parts"][0]["functionResponse"]
    assert response["response"] == {"output": 3}  # `twice` ran: the renamed call
